#include "kernels/portable/util/depthwise_conv.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace pteron {
namespace {

// Output columns computed at once in a stack accumulator row.
constexpr int64_t kChunk = 256;
// Widest kernel row whose taps are fused into one pass over the accumulator.
constexpr int64_t kMaxFusedKW = 8;
// Kernel columns handled per pass; wider kernels run in slices.
constexpr int64_t kMaxTaps = 64;

int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// acc[ow - ow0] += sum_kw w[kw] * x[ow * SW + off + kw * dw] for ow in [lo, hi), where every tap
// is inside the input row. KWT / SW are compile-time for the common 3-wide, stride 1/2 kernels
// (0 = use the runtime value) so the loop over ow vectorises.
template <int KWT, int SWT, typename T, typename Acc>
void fused_taps(const T* x, const Acc* w, int64_t kw_n, int64_t sw_n, int64_t dw, int64_t off,
                Acc* acc, int64_t ow0, int64_t lo, int64_t hi) {
  const int64_t KW = KWT > 0 ? KWT : kw_n;
  const int64_t SW = SWT > 0 ? SWT : sw_n;
  Acc wv[kMaxFusedKW];
  for (int64_t k = 0; k < KW; ++k) wv[k] = w[k];
  for (int64_t ow = lo; ow < hi; ++ow) {
    const T* xp = x + ow * SW + off;
    Acc sum = acc[ow - ow0];
    for (int64_t k = 0; k < KW; ++k) sum += wv[k] * load_value(xp[k * dw]);
    acc[ow - ow0] = sum;
  }
}

template <typename T, typename Acc>
void one_tap(const T* x, Acc w, int64_t sw, int64_t off, Acc* acc, int64_t ow0, int64_t lo,
             int64_t hi) {
  if (sw == 1) {
    for (int64_t ow = lo; ow < hi; ++ow) acc[ow - ow0] += w * load_value(x[ow + off]);
  } else {
    for (int64_t ow = lo; ow < hi; ++ow) acc[ow - ow0] += w * load_value(x[ow * sw + off]);
  }
}

// Output columns each tap of a kernel row reads inside the input row, computed once per call
// (divisions are far too slow to redo per row): tap kw is valid for ow in [lo[kw], hi[kw]),
// all taps for ow in [all_lo, all_hi).
struct TapRanges {
  int64_t lo[kMaxTaps], hi[kMaxTaps];
  int64_t all_lo, all_hi;

  // Taps kw of a slice whose first column is at kw * dilation - pad (pad may be negative).
  void init(const ConvShape& s, int64_t taps, int64_t pad) {
    all_lo = 0;
    all_hi = s.out_w;
    for (int64_t kw = 0; kw < taps; ++kw) {
      const int64_t off = kw * s.dilation_w - pad;
      const int64_t last = s.in_w - 1 - off;
      lo[kw] = off >= 0 ? 0 : (-off + s.stride_w - 1) / s.stride_w;
      hi[kw] = min64(s.out_w, last < 0 ? 0 : last / s.stride_w + 1);
      all_lo = max64(all_lo, lo[kw]);
      all_hi = min64(all_hi, hi[kw]);
    }
    if (taps > kMaxFusedKW || all_lo >= all_hi) all_lo = all_hi = 0;  // no fused interior
  }
};

// Adds one kernel row (taps w[0..taps)) applied to input row x to acc for ow in [ow0, ow1).
template <typename T, typename Acc>
void kernel_row(const ConvShape& s, const TapRanges& r, int64_t taps, int64_t pad, const T* x,
                const Acc* w, Acc* acc, int64_t ow0, int64_t ow1) {
  const int64_t sw = s.stride_w, dw = s.dilation_w;
  const int64_t in_lo = max64(r.all_lo, ow0), in_hi = max64(in_lo, min64(r.all_hi, ow1));
  if (in_hi > in_lo) {
    if (taps == 3 && sw == 1) {
      fused_taps<3, 1>(x, w, taps, sw, dw, -pad, acc, ow0, in_lo, in_hi);
    } else if (taps == 3 && sw == 2) {
      fused_taps<3, 2>(x, w, taps, sw, dw, -pad, acc, ow0, in_lo, in_hi);
    } else {
      fused_taps<0, 0>(x, w, taps, sw, dw, -pad, acc, ow0, in_lo, in_hi);
    }
  }
  // The edges (and everything, for wide kernels) tap by tap.
  for (int64_t kw = 0; kw < taps; ++kw) {
    const int64_t a = max64(r.lo[kw], ow0), b = min64(r.hi[kw], ow1), off = kw * dw - pad;
    one_tap(x, w[kw], sw, off, acc, ow0, a, min64(b, in_lo));
    one_tap(x, w[kw], sw, off, acc, ow0, max64(a, in_hi), b);
  }
}

// Any geometry, no memory: accumulates one output row chunk at a time, clipping every tap to
// the input row.
template <typename T, typename Acc>
void depthwise_direct(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out) {
  const int64_t mult = s.out_per_group();
  const int64_t khw = s.kernel_h * s.kernel_w;
  Acc acc[kChunk];
  Acc wrow[kMaxTaps];  // one kernel row slice converted to the compute type (Half, BFloat16)
  // Kernel rows wider than kMaxTaps go in slices; most kernels are one slice.
  for (int64_t k0 = 0; k0 < s.kernel_w; k0 += kMaxTaps) {
    const int64_t taps = min64(kMaxTaps, s.kernel_w - k0);
    const int64_t pad = s.pad_w - k0 * s.dilation_w;  // the slice as a kernel of its own
    TapRanges ranges;
    ranges.init(s, taps, pad);
    const bool first_slice = k0 == 0;
    for (int64_t n = 0; n < s.batch; ++n) {
      for (int64_t co = 0; co < s.out_channels; ++co) {
        const T* plane = input + (n * s.in_channels + co / mult) * s.in_h * s.in_w;
        const T* wk = weight + co * khw;
        const Acc b = bias != nullptr ? load_value(bias[co]) : Acc(0);
        T* oplane = out + (n * s.out_channels + co) * s.out_h * s.out_w;
        for (int64_t oh = 0; oh < s.out_h; ++oh) {
          T* orow = oplane + oh * s.out_w;
          for (int64_t ow0 = 0; ow0 < s.out_w; ow0 += kChunk) {
            const int64_t ow1 = min64(s.out_w, ow0 + kChunk);
            // Later slices continue from the partial sums in out (one rounding per slice for
            // narrow types; only kernels wider than kMaxTaps have several).
            for (int64_t i = 0; i < ow1 - ow0; ++i)
              acc[i] = first_slice ? b : static_cast<Acc>(load_value(orow[ow0 + i]));
            for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
              const int64_t ih = oh * s.stride_h - s.pad_h + kh * s.dilation_h;
              if (ih < 0 || ih >= s.in_h) continue;
              const T* wr = wk + kh * s.kernel_w + k0;
              const Acc* w = nullptr;
              if constexpr (std::is_same_v<T, Acc>) {
                w = wr;
              } else {
                for (int64_t k = 0; k < taps; ++k) wrow[k] = load_value(wr[k]);
                w = wrow;
              }
              kernel_row<T, Acc>(s, ranges, taps, pad, plane + ih * s.in_w, w, acc, ow0, ow1);
            }
            for (int64_t i = 0; i < ow1 - ow0; ++i) orow[ow0 + i] = store_value<T>(acc[i]);
          }
        }
      }
    }
  }
}

// Zero-padded input rows in the compute type, split by stride phase: padded column c is at
// (c % stride_w) * phase_len + c / stride_w, so the taps of consecutive outputs are consecutive
// in memory for any stride and no tap needs a bounds check.
constexpr int64_t kPadBufElems = 2048;

// One padded row split into its two stride phases (padded column q at (q % 2) * phase_len +
// q / 2): zeros, then the input in pairs of columns whose first lands in phase 0, so the loop
// is a plain deinterleave (ld2 on NEON) instead of two strided gathers.
template <typename T, typename Acc>
void fill_stride2_row(const T* x, int64_t in_w, int64_t pad_w, int64_t phase_len, Acc* dst) {
  Acc* even = dst;
  Acc* odd = dst + phase_len;
  for (int64_t i = 0; i < 2 * phase_len; ++i) dst[i] = Acc(0);
  int64_t c = 0;
  if (pad_w % 2 != 0 && in_w > 0) {  // column 0 lands in phase 1
    odd[pad_w / 2] = load_value(x[0]);
    c = 1;
  }
  Acc* e = even + (c + pad_w) / 2;
  Acc* o = odd + (c + pad_w) / 2;
  const int64_t pairs = (in_w - c) / 2;
  const T* src = x + c;
  for (int64_t i = 0; i < pairs; ++i) {
    e[i] = load_value(src[2 * i]);
    o[i] = load_value(src[2 * i + 1]);
  }
  if (c + 2 * pairs < in_w) e[pairs] = load_value(src[2 * pairs]);
}

template <typename T, typename Acc>
void fill_padded_rows(const ConvShape& s, const T* plane, int64_t ih0, int64_t rows,
                      int64_t phase_len, Acc* buf) {
  const int64_t sw = s.stride_w, row_len = sw * phase_len;
  for (int64_t r = 0; r < rows; ++r) {
    Acc* dst = buf + r * row_len;
    const int64_t ih = ih0 + r;
    if (ih < 0 || ih >= s.in_h) {
      for (int64_t i = 0; i < row_len; ++i) dst[i] = Acc(0);
      continue;
    }
    const T* x = plane + ih * s.in_w;
    if (sw == 1) {
      for (int64_t c = 0; c < s.pad_w; ++c) dst[c] = Acc(0);
      if constexpr (std::is_same_v<T, Acc>) {
        std::memcpy(dst + s.pad_w, x, static_cast<size_t>(s.in_w) * sizeof(T));
      } else {
        for (int64_t c = 0; c < s.in_w; ++c) dst[s.pad_w + c] = load_value(x[c]);
      }
      for (int64_t c = s.pad_w + s.in_w; c < row_len; ++c) dst[c] = Acc(0);
      continue;
    }
    if (sw == 2) {
      fill_stride2_row(x, s.in_w, s.pad_w, phase_len, dst);
      continue;
    }
    // Phase p holds padded columns p, p + sw, p + 2 sw, ...; slot i reads input column
    // i * sw + p - pad_w, inside the row for i in [lo, hi).
    for (int64_t p = 0; p < sw; ++p) {
      Acc* ph = dst + p * phase_len;
      const int64_t first = s.pad_w - p, last = s.in_w - 1 + s.pad_w - p;
      const int64_t lo = min64(phase_len, first <= 0 ? 0 : (first + sw - 1) / sw);
      const int64_t hi = max64(lo, min64(phase_len, last < 0 ? 0 : last / sw + 1));
      const T* src = x + p - s.pad_w;  // only dereferenced at i * sw for i in [lo, hi)
      for (int64_t i = 0; i < lo; ++i) ph[i] = Acc(0);
      for (int64_t i = lo; i < hi; ++i) ph[i] = load_value(src[i * sw]);
      for (int64_t i = hi; i < phase_len; ++i) ph[i] = Acc(0);
    }
  }
}

// One output row of a 3x3 kernel: nine taps per output from three padded rows.
template <typename T, typename Acc>
void row_3x3(const Acc* __restrict r0, const Acc* __restrict r1, const Acc* __restrict r2,
             const int64_t* off, const Acc* w, Acc b, T* __restrict y, int64_t n) {
  const int64_t o0 = off[0], o1 = off[1], o2 = off[2];
  const Acc w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3], w4 = w[4], w5 = w[5], w6 = w[6], w7 = w[7],
            w8 = w[8];
  for (int64_t i = 0; i < n; ++i) {
    Acc v = b + w0 * r0[i + o0] + w1 * r0[i + o1] + w2 * r0[i + o2];
    v += w3 * r1[i + o0] + w4 * r1[i + o1] + w5 * r1[i + o2];
    v += w6 * r2[i + o0] + w7 * r2[i + o1] + w8 * r2[i + o2];
    y[i] = store_value<T>(v);
  }
}

// Any kernel of at most kMaxTaps taps: tap by tap into an accumulator row.
template <typename T, typename Acc>
void row_any(const ConvShape& s, const Acc* rows, int64_t row_step, const int64_t* off,
             const Acc* w, Acc b, T* y) {
  Acc acc[kChunk];
  for (int64_t i0 = 0; i0 < s.out_w; i0 += kChunk) {
    const int64_t n = min64(kChunk, s.out_w - i0);
    for (int64_t i = 0; i < n; ++i) acc[i] = b;
    for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
      const Acc* row = rows + kh * row_step + i0;
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        const Acc wv = w[kh * s.kernel_w + kw];
        const Acc* x = row + off[kw];
        for (int64_t i = 0; i < n; ++i) acc[i] += wv * x[i];
      }
    }
    for (int64_t i = 0; i < n; ++i) y[i0 + i] = store_value<T>(acc[i]);
  }
}

// Pads blocks of input rows into a stack buffer and runs bounds-free rows over them:
// rows(first, count, in_step, row_step, off, w, b, y) computes `count` consecutive output rows
// (see DepthwiseRowArgs). Returns false (doing nothing) when a block of even one output row
// does not fit the buffer.
template <typename T, typename Acc, typename Rows>
bool depthwise_padded(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out,
                      const Rows& rows) {
  const int64_t khw = s.kernel_h * s.kernel_w;
  if (khw > kMaxTaps || s.kernel_w > kMaxTaps) return false;
  const int64_t sw = s.stride_w, wp = s.in_w + 2 * s.pad_w;
  const int64_t phase_len = (wp + sw - 1) / sw, row_len = sw * phase_len;
  const int64_t span = (s.kernel_h - 1) * s.dilation_h + 1;  // input rows per output row
  const int64_t max_rows = kPadBufElems / row_len;
  if (max_rows < span) return false;
  const int64_t block = (max_rows - span) / s.stride_h + 1;  // output rows per fill
  int64_t off[kMaxTaps];  // tap kw of output i reads padded-row slot i + off[kw]
  for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
    const int64_t t = kw * s.dilation_w;
    off[kw] = (t % sw) * phase_len + t / sw;
  }
  Acc buf[kPadBufElems + kDepthwiseRowSlack];
  for (int64_t i = kPadBufElems; i < kPadBufElems + kDepthwiseRowSlack; ++i) buf[i] = Acc(0);
  Acc w[kMaxTaps];
  const int64_t mult = s.out_per_group();
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t co = 0; co < s.out_channels; ++co) {
      const T* plane = input + (n * s.in_channels + co / mult) * s.in_h * s.in_w;
      for (int64_t k = 0; k < khw; ++k) w[k] = load_value(weight[co * khw + k]);
      const Acc b = bias != nullptr ? static_cast<Acc>(load_value(bias[co])) : Acc(0);
      T* oplane = out + (n * s.out_channels + co) * s.out_h * s.out_w;
      for (int64_t oh0 = 0; oh0 < s.out_h; oh0 += block) {
        const int64_t oh1 = min64(s.out_h, oh0 + block);
        const int64_t ih0 = oh0 * s.stride_h - s.pad_h;
        fill_padded_rows(s, plane, ih0, (oh1 - 1 - oh0) * s.stride_h + span, phase_len, buf);
        rows(buf, oh1 - oh0, s.stride_h * row_len, s.dilation_h * row_len, off, w, b,
             oplane + oh0 * s.out_w);
      }
    }
  }
  return true;
}

// The portable row loops: nine fused taps for 3x3 kernels, tap by tap otherwise.
template <typename T, typename Acc>
bool depthwise_padded_portable(const ConvShape& s, const T* input, const T* weight, const T* bias,
                               T* out) {
  const bool k3x3 = s.kernel_h == 3 && s.kernel_w == 3;
  return depthwise_padded<T, Acc>(
      s, input, weight, bias, out,
      [&](const Acc* first, int64_t count, int64_t in_step, int64_t row_step, const int64_t* off,
          const Acc* w, Acc b, T* y) {
        for (int64_t r = 0; r < count; ++r, first += in_step, y += s.out_w) {
          if (k3x3) {
            row_3x3<T, Acc>(first, first + row_step, first + 2 * row_step, off, w, b, y, s.out_w);
          } else {
            row_any<T, Acc>(s, first, row_step, off, w, b, y);
          }
        }
      });
}

}  // namespace

template <typename T>
void depthwise_conv2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out) {
  using Acc = typename ComputeType<T>::type;
  if (!depthwise_padded_portable<T, Acc>(s, input, weight, bias, out)) {
    depthwise_direct<T, Acc>(s, input, weight, bias, out);
  }
}

bool depthwise_conv2d_rows(const ConvShape& s, const float* input, const float* weight,
                           const float* bias, float* out, DepthwiseRowFn row, const void* context) {
  return depthwise_padded<float, float>(
      s, input, weight, bias, out,
      [&](const float* first, int64_t count, int64_t in_step, int64_t row_step, const int64_t* off,
          const float* w, float b, float* y) {
        row(DepthwiseRowArgs{first, row_step, off, s.kernel_h, s.kernel_w, w, b, y, s.out_w, count,
                             in_step},
            context);
      });
}

template void depthwise_conv2d<float>(const ConvShape&, const float*, const float*, const float*,
                                      float*);
template void depthwise_conv2d<double>(const ConvShape&, const double*, const double*,
                                       const double*, double*);
template void depthwise_conv2d<Half>(const ConvShape&, const Half*, const Half*, const Half*,
                                     Half*);
template void depthwise_conv2d<BFloat16>(const ConvShape&, const BFloat16*, const BFloat16*,
                                         const BFloat16*, BFloat16*);

}  // namespace pteron
