// depthwise_vnni.h's rows for AVX-512 (F, BW, VL, VNNI); compiled with those flags and called only
// on CPUs that have them (vector_kernels.cpp asks).
#include <cstring>

#include "kernels/cortex_m/host/depthwise_vnni.h"
#include "kernels/cortex_m/host/vec_avx512.h"
#include "kernels/cortex_m/util/requantize.h"

namespace pteron::cortex_m::host {
namespace {

// Four rows' 16 channels (as 16-byte lanes 0..3) to channel-major order: channel j's four rows at
// bytes 4j .. 4j + 3, as x + 128 (unsigned, what vpdpbusd multiplies). The lanes' dwords are
// gathered by channel quad (lane q: the four rows' channels 4q .. 4q + 3), then each lane's 4x4
// bytes transposed.
inline __m512i interleave(__m512i four_rows) {
  const __m512i by_quad = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  const __m512i transpose =
      _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  return _mm512_xor_si512(
      _mm512_shuffle_epi8(_mm512_permutexvar_epi32(by_quad, four_rows), transpose), flip);
}

// What a tap outside the input reads: the zero point, as 16 bytes of a row and as a whole
// interleaved column.
struct Outside {
  alignas(16) int8_t row[16];
  __m512i column;
};

// One output row's channels [c0, c0 + live) (group g): the interleaved columns first, then every
// pixel as row groups x kernel columns of vpdpbusd. KW > 0: the kernel width, known at compile
// time; 0: p.kw.
template <int KW>
void row_group(const DepthwiseVnni& d, const ConvParams& p, const Outside& zero,
               const int8_t* image, int32_t y0, int64_t g, int64_t live, int8_t* out_row,
               __m512i* columns) {
  const int64_t c = p.cout, c0 = g * 16, span = depthwise_vnni_column_span(p);
  const int32_t kw = KW > 0 ? KW : p.kw, row_groups = depthwise_vnni_row_groups(p.kh);
  const int32_t pad_x = p.win.padding[1], sx = p.win.stride[1], dx = p.win.dilation[1];
  const __mmask16 lanes = first16(live);
  // Columns x in [-pad_x, span - pad_x) at columns[r * span + x + pad_x].
  for (int32_t r = 0; r < row_groups; ++r) {
    __m512i* col = columns + r * span;
    const int8_t* rows[4];
    int64_t step[4];  // bytes from one column to the next: 0 for a row outside the window
    for (int s = 0; s < 4; ++s) {
      const int32_t ky = 4 * r + s, iy = y0 + ky * p.win.dilation[0];
      const bool inside = ky < p.kh && iy >= 0 && iy < p.h;
      rows[s] = inside ? image + int64_t{iy} * p.w * c + c0 : zero.row;
      step[s] = inside ? c : 0;
    }
    for (int64_t i = 0; i < span; ++i) {
      const int64_t x = i - pad_x;
      if (x < 0 || x >= p.w) {
        col[i] = zero.column;
        continue;
      }
      __m512i z = _mm512_castsi128_si512(_mm_maskz_loadu_epi8(lanes, rows[0] + x * step[0]));
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(lanes, rows[1] + x * step[1]), 1);
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(lanes, rows[2] + x * step[2]), 2);
      z = _mm512_inserti32x4(z, _mm_maskz_loadu_epi8(lanes, rows[3] + x * step[3]), 3);
      col[i] = interleave(z);
    }
  }
  const __m512i base = _mm512_load_si512(d.base + c0);
  const __m512i mult = Avx512::load_i32(p.mult + c0, live);
  const __m512i left = _mm512_load_si512(d.left + c0), right = _mm512_load_si512(d.right + c0);
  const __m512i out_off = Avx512::set1(p.out_off), act_lo = Avx512::set1(p.act_min),
                act_hi = Avx512::set1(p.act_max);
  const __m512i* w = reinterpret_cast<const __m512i*>(d.weights) + g * row_groups * kw;
  for (int32_t ox = 0; ox < p.ow; ++ox) {
    __m512i acc = base;
    for (int32_t r = 0; r < row_groups; ++r) {
      const __m512i* window = columns + r * span + int64_t{ox} * sx;
      for (int32_t kx = 0; kx < kw; ++kx)
        acc = _mm512_dpbusd_epi32(acc, _mm512_load_si512(window + kx * dx),
                                  _mm512_loadu_si512(w + r * kw + kx));
    }
    Avx512::store_i8(out_row + int64_t{ox} * c + c0, Avx512::requantize(acc, mult, left, right),
                     out_off, act_lo, act_hi, live);
  }
}

template <int KW>
void rows(const DepthwiseVnni& d, int64_t first, int64_t last, int8_t* columns) {
  const ConvParams p = *d.p;  // a local copy: int8 stores through `out` cannot alias it
  const int64_t c = p.cout;
  auto* cols = reinterpret_cast<__m512i*>(columns);
  Outside zero;
  std::memset(zero.row, -p.in_off, sizeof zero.row);
  zero.column = interleave(_mm512_set1_epi8(static_cast<char>(-p.in_off)));
  for (int64_t row = first; row < last; ++row) {
    const int64_t b = row / p.oh;
    const int32_t y0 = static_cast<int32_t>(row % p.oh) * p.win.stride[0] - p.win.padding[0];
    const int8_t* image = d.in + b * p.h * p.w * c;
    int8_t* out_row = d.out + row * p.ow * c;
    for (int64_t g = 0; g * 16 < c; ++g)
      row_group<KW>(d, p, zero, image, y0, g, c - g * 16 < 16 ? c - g * 16 : 16, out_row, cols);
  }
}

}  // namespace

void depthwise_vnni_pack(const ConvParams& p, const int8_t* weight, void* packed) {
  const int64_t c = p.cout, groups = (c + 15) / 16;
  const int32_t row_groups = depthwise_vnni_row_groups(p.kh);
  auto* w = static_cast<int8_t*>(packed);
  for (int64_t g = 0; g < groups; ++g)
    for (int32_t r = 0; r < row_groups; ++r)
      for (int32_t kx = 0; kx < p.kw; ++kx)
        for (int64_t j = 0; j < 16; ++j)
          for (int32_t s = 0; s < 4; ++s) {
            const int64_t channel = g * 16 + j;
            const int32_t ky = 4 * r + s;
            *w++ = channel < c && ky < p.kh ? weight[(int64_t{ky} * p.kw + kx) * c + channel] : 0;
          }
  auto* sums =
      reinterpret_cast<int32_t*>(static_cast<int8_t*>(packed) + depthwise_vnni_weight_bytes(p));
  for (int64_t channel = 0; channel < groups * 16; ++channel) {
    int32_t sum = 0;
    if (channel < c)
      for (int64_t t = 0; t < int64_t{p.kh} * p.kw; ++t) sum += weight[t * c + channel];
    sums[channel] = sum;
  }
}

void depthwise_vnni_rows(const DepthwiseVnni& d, int64_t first, int64_t last, int8_t* columns) {
  if (d.p->kw == 3) return rows<3>(d, first, last, columns);
  if (d.p->kw == 5) return rows<5>(d, first, last, columns);
  rows<0>(d, first, last, columns);
}

}  // namespace pteron::cortex_m::host
