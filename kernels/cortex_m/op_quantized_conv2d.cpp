// cortex_m::quantized_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride,
//     int[] padding, int[] dilation, int input_offset, int output_offset,
//     Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//     int activation_max, Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_convolve_s8 (groups 1): input [N, H, W, Cin] int8, weight [Cout, kH, kW, Cin]
// int8 (symmetric: no weight offset), bias [Cout] int32, per-channel Q31 multipliers/shifts
// (int32 [Cout]), out [N, OH, OW, Cout] int8.
//   acc = bias[oc] + sum over taps inside the input of (x + input_offset) * w
//   out = clamp(requantize(acc, mult[oc], shift[oc]) + output_offset, act_min, act_max)
// The MVE path (arm_convolve_s8's MVE form) builds im2col columns for four output pixels at a
// time with padding filled by -input_offset, dots them with each filter (contiguous in OHWI) 16
// lanes at a time and adds input_offset * sum(w), precomputed per filter; 1x1 convolutions with
// stride 1 and no padding read the input pixels in place (the fast path). Scratch:
// quantized_conv2d_scratch_bytes.
#include <cstring>

#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/path.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_conv2d_nhwc.out";

void conv_scalar(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p) {
  const int32_t cin = p.cin, in_off = p.in_off, filter_size = p.kh * p.kw * p.cin;
  conv_reference(in, out, p, [=](const int8_t* x, int32_t oc, int32_t tap) {
    const int8_t* f = wt + static_cast<int64_t>(oc) * filter_size + tap * cin;
    int32_t acc = 0;
    for (int32_t c = 0; c < cin; ++c) acc += (x[c] + in_off) * f[c];
    return acc;
  });
}

#if PTERON_CORTEX_M_MVE
int32_t sum_mve(const int8_t* a, int32_t len) {
  int32_t acc = 0;
  for (int32_t i = 0; i < len; i += 16) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    acc = vaddvaq_s8(acc, vldrbq_z_s8(a + i, pr));
  }
  return acc;
}

// Per output channel, what the MVE path adds and multiplies after the dot products: bias +
// input_offset * sum(filter) (the offset term of every tap, padding included), and the
// requantisation multiplier with the shift split into its left and right parts.
struct ChannelQuant {
  int32_t offset_sum, mult, left, right;
  int32_t round_fix;  // 1 when right < 0: negative values then round away from zero
  int32_t unused[3];  // 32 bytes a record
};

// What four_pixels_mve's loop reads from memory (it needs every register for the work).
struct alignas(16) FourPixels {
  const int8_t* rows[4];  // the four pixels' rows (input pixels or im2col columns)
  const int8_t* filter;   // the next output channel's filter
  int32_t len;            // bytes per row and per filter
  int32_t out_off;
  int8_t* out_end;       // the first pixel's output + cout
  int32_t lo[4], hi[4];  // activation range
  uint32_t scatter[4];   // 0, cout, 2 * cout, 3 * cout: the four pixels' outputs
  uint32_t saved_vpr;    // the predicate register, which GCC 12 has no clobber name for
};

// The record for `count` (1 to 4) pixels: missing ones repeat the last pixel, row and output,
// so a partial block computes and stores that pixel's values again instead of going elsewhere.
void four_pixels_record(FourPixels& f, const int8_t* rows, int32_t stride, int32_t count,
                        const int8_t* wt, int32_t len, int8_t* out, const ConvParams& p) {
  for (int32_t k = 0; k < 4; ++k) {
    const int32_t pixel = k < count ? k : count - 1;
    f.rows[k] = rows + pixel * stride;
    f.lo[k] = p.act_min, f.hi[k] = p.act_max;
    f.scatter[k] = static_cast<uint32_t>(pixel * p.cout);
  }
  f.filter = wt, f.len = len, f.out_off = p.out_off, f.out_end = out + p.cout;
}

// four_pixels_mve's two assembly blocks: out (r5) and the ChannelQuant records (r7) advance, the
// FourPixels record is r9, every other core and vector register is theirs.
#define FOUR_PIXELS_OPERANDS                                                                      \
  : "+r"(out_r), "+r"(quant_r)                                                                \
  : "r"(f_r)                                                                                  \
  : "r0", "r1", "r2", "r3", "r4", "r6", "r8", "r10", "r11", "r12", "r14", "q0", "q1", "q2", "q3", \
    "q4", "q5", "q6", "q7", "memory", "cc"

// Channel oc of `count` (up to four) pixels whose rows of `len` bytes start `stride` bytes
// apart, for every oc (arm_nn_mat_mult_nt_t_s8's MVE form): four dot products with filter oc in a
// tail-predicated low-overhead loop (WLSTP/LETP: each filter vector loaded once for the four
// rows, the last partial vector's lanes past `len` neither loaded nor added), then the four
// results, which share the channel's ChannelQuant, requantized as one vector (requantize_mve's
// arithmetic) and scattered to the four pixels' outputs. Rows of at most 16 bytes (1x1
// convolutions of up to 16 input channels) are loaded once into vectors (lanes past `len` zero)
// and stay there for every output channel, whose filter is one predicated load and four VMLADAV;
// there the rounding fix-up is (v >> 31) * round_fix, so that no vector register holds the
// shift. Inline assembly because GCC 12 emits no tail-predicated loops and spills around the
// intrinsics version (twice the instructions).
void four_pixels_mve(const int8_t* rows, int32_t stride, int32_t count, const int8_t* wt,
                     int32_t len, const ChannelQuant* quant, int8_t* out, const ConvParams& p) {
  FourPixels f;
  four_pixels_record(f, rows, stride, count, wt, len, out, p);
  register int8_t* out_r asm("r5") = out;
  register const ChannelQuant* quant_r asm("r7") = quant;
  register FourPixels* f_r asm("r9") = &f;
  if (len <= 16) {
    __asm volatile(
        "   vldrw.32    q6, [r9, #64]          \n"  // scatter offsets
        "   vldrw.32    q7, [r9, #32]          \n"  // activation min
        "   vmrs        r0, p0                 \n"
        "   str         r0, [r9, #80]          \n"
        "   ldm         r9, {r0, r1, r2, r3, r11} \n"
        "   ldr         lr, [r9, #20]          \n"  // len
        "   vctp.8      lr                     \n"
        "   vpstttt                            \n"
        "   vldrbt.8    q0, [r0]               \n"
        "   vldrbt.8    q1, [r1]               \n"
        "   vldrbt.8    q2, [r2]               \n"
        "   vldrbt.8    q3, [r3]               \n"
        "3:                                    \n"
        "   vpst                               \n"
        "   vldrbt.8    q4, [r11]              \n"
        "   vmladav.s8  r6, q0, q4             \n"
        "   vmladav.s8  r8, q1, q4             \n"
        "   vmladav.s8  r10, q2, q4            \n"
        "   vmladav.s8  r12, q3, q4            \n"
        "   vmov.32     d8[0], r6              \n"
        "   vmov.32     d8[1], r8              \n"
        "   vmov.32     d9[0], r10             \n"
        "   vmov.32     d9[1], r12             \n"
        "   ldm         r7, {r0, r1, r2, r3, r4} \n"  // offset_sum, mult, left, right, round_fix
        "   add         r7, r7, #32            \n"
        "   vadd.i32    q4, q4, r0             \n"
        "   vshl.s32    q4, r2                 \n"
        "   vqrdmulh.s32 q4, q4, r1            \n"
        "   vshr.s32    q5, q4, #31            \n"
        "   vmul.i32    q5, q5, r4             \n"
        "   vqadd.s32   q4, q4, q5             \n"
        "   vrshl.s32   q4, r3                 \n"
        "   ldr         r0, [r9, #24]          \n"  // out_off
        "   vadd.i32    q4, q4, r0             \n"
        "   vldrw.32    q5, [r9, #48]          \n"  // activation max
        "   vmax.s32    q4, q4, q7             \n"
        "   vmin.s32    q4, q4, q5             \n"
        "   vstrb.32    q4, [r5, q6]           \n"
        "   add         r5, r5, #1             \n"
        "   add         r11, r11, lr           \n"
        "   ldr         r0, [r9, #28]          \n"
        "   cmp         r5, r0                 \n"
        "   bne         3b                     \n"
        "   ldr         r0, [r9, #80]          \n"
        "   vmsr        p0, r0                 \n" FOUR_PIXELS_OPERANDS);
    return;
  }
  __asm volatile(
      "   vldrw.32    q5, [r9, #64]          \n"
      "   vldrw.32    q6, [r9, #32]          \n"
      "   vldrw.32    q7, [r9, #48]          \n"
      "3:                                    \n"
      "   ldm         r9, {r0, r1, r2, r3, r4} \n"
      "   ldr         r11, [r9, #20]         \n"
      "   add         r6, r4, r11            \n"
      "   str         r6, [r9, #16]          \n"
      "   mov         r8, #0                 \n"
      "   mov         r10, #0                \n"
      "   mov         r12, #0                \n"
      "   mov         r6, #0                 \n"
      "   wlstp.8     lr, r11, 1f            \n"
      "2:                                    \n"
      "   vldrb.8     q0, [r4], #16          \n"
      "   vldrb.8     q1, [r0], #16          \n"
      "   vmladava.s8 r8, q0, q1             \n"
      "   vldrb.8     q2, [r1], #16          \n"
      "   vmladava.s8 r10, q0, q2            \n"
      "   vldrb.8     q3, [r2], #16          \n"
      "   vmladava.s8 r12, q0, q3            \n"
      "   vldrb.8     q1, [r3], #16          \n"
      "   vmladava.s8 r6, q0, q1             \n"
      "   letp        lr, 2b                 \n"
      "1:                                    \n"
      "   vmov.32     d8[0], r8              \n"
      "   vmov.32     d8[1], r10             \n"
      "   vmov.32     d9[0], r12             \n"
      "   vmov.32     d9[1], r6              \n"
      "   ldm         r7, {r8, r10, r11, r12} \n"  // offset_sum, mult, left, right
      "   add         r7, r7, #32            \n"
      "   vadd.i32    q4, q4, r8             \n"
      "   vshl.s32    q4, r11                \n"
      "   vqrdmulh.s32 q4, q4, r10           \n"
      "   vdup.32     q1, r12                \n"
      "   vand        q2, q4, q1             \n"
      "   vshr.s32    q2, q2, #31            \n"
      "   vqadd.s32   q4, q4, q2             \n"
      "   vrshl.s32   q4, q4, q1             \n"
      "   ldr         r11, [r9, #24]         \n"
      "   vadd.i32    q4, q4, r11            \n"
      "   vmax.s32    q4, q4, q6             \n"
      "   vmin.s32    q4, q4, q7             \n"
      "   vstrb.32    q4, [r5, q5]           \n"
      "   add         r5, r5, #1             \n"
      "   ldr         r11, [r9, #28]         \n"
      "   cmp         r5, r11                \n"
      "   bne         3b                     \n" FOUR_PIXELS_OPERANDS);
}

// n bytes from src to dst / of value to dst, as tail-predicated loops (see four_pixels_mve).
inline void copy_mve(int8_t* dst, const int8_t* src, int32_t n) {
  __asm volatile(
      "   wlstp.8     lr, %[n], 1f       \n"
      "2:                                \n"
      "   vldrb.8     q0, [%[src]], #16  \n"
      "   vstrb.8     q0, [%[dst]], #16  \n"
      "   letp        lr, 2b             \n"
      "1:                                \n"
      : [dst] "+r"(dst), [src] "+r"(src)
      : [n] "r"(n)
      : "q0", "memory", "r14");
}

inline void fill_mve(int8_t* dst, int8_t value, int32_t n) {
  __asm volatile(
      "   vdup.8      q0, %[v]           \n"
      "   wlstp.8     lr, %[n], 1f       \n"
      "2:                                \n"
      "   vstrb.8     q0, [%[dst]], #16  \n"
      "   letp        lr, 2b             \n"
      "1:                                \n"
      : [dst] "+r"(dst)
      : [n] "r"(n), [v] "r"(static_cast<int32_t>(value))
      : "q0", "memory", "r14");
}

// The im2col column of output pixel (oy, ox): the kh * kw * cin input bytes its filter taps
// read, in filter order, with -input_offset where a tap falls in the padding (so its
// (x + input_offset) term is zero). A kernel row inside the input is one contiguous copy.
void im2col_mve(const int8_t* in_b, int8_t* dst, int32_t oy, int32_t ox, const ConvParams& p) {
  const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
  const int8_t pad = static_cast<int8_t>(-p.in_off);
  const int32_t row_bytes = p.kw * p.cin;
  const bool row_inside = p.win.dilation[1] == 1 && x0 >= 0 && x0 + p.kw <= p.w;
  for (int32_t ky = 0; ky < p.kh; ++ky, dst += row_bytes) {
    const int32_t iy = y0 + ky * p.win.dilation[0];
    if (iy < 0 || iy >= p.h) {
      fill_mve(dst, pad, row_bytes);
      continue;
    }
    const int8_t* row = in_b + static_cast<int64_t>(iy) * p.w * p.cin;
    if (row_inside) {
      copy_mve(dst, row + x0 * p.cin, row_bytes);
      continue;
    }
    for (int32_t kx = 0; kx < p.kw; ++kx) {
      const int32_t ix = x0 + kx * p.win.dilation[1];
      if (ix < 0 || ix >= p.w) {
        fill_mve(dst + kx * p.cin, pad, p.cin);
      } else {
        copy_mve(dst + kx * p.cin, row + ix * p.cin, p.cin);
      }
    }
  }
}

void conv_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p, void* scratch,
              bool pointwise) {
  const int32_t filter_size = p.kh * p.kw * p.cin;
  ChannelQuant* quant = static_cast<ChannelQuant*>(scratch);
  for (int32_t oc = 0; oc < p.cout; ++oc) {
    quant[oc].offset_sum =
        (p.bias ? p.bias[oc] : 0) +
        p.in_off * sum_mve(wt + static_cast<int64_t>(oc) * filter_size, filter_size);
    quant[oc].mult = p.mult[oc];
    quant[oc].left = p.shift[oc] > 0 ? p.shift[oc] : 0;
    quant[oc].right = p.shift[oc] > 0 ? 0 : p.shift[oc];
    quant[oc].round_fix = quant[oc].right < 0 ? 1 : 0;
  }
  if (pointwise) {  // the input pixels are the rows
    const int64_t pixels = static_cast<int64_t>(p.n) * p.h * p.w;
    for (int64_t i = 0; i < pixels; i += 4, in += 4 * p.cin, out += 4 * p.cout) {
      const int32_t count = pixels - i < 4 ? static_cast<int32_t>(pixels - i) : 4;
      four_pixels_mve(in, p.cin, count, wt, filter_size, quant, out, p);
    }
    return;
  }
  // Up to four im2col columns, then the pixels as in the 1x1 case.
  int8_t* columns = static_cast<int8_t*>(scratch) + align_scratch(p.cout * sizeof(ChannelQuant));
  const int32_t pixels = p.oh * p.ow;
  for (int32_t b = 0; b < p.n; ++b) {
    const int8_t* in_b = in + static_cast<int64_t>(b) * p.h * p.w * p.cin;
    int32_t i = 0;
    for (; i + 4 <= pixels; i += 4, out += 4 * p.cout) {
      for (int32_t k = 0; k < 4; ++k) {
        im2col_mve(in_b, columns + k * filter_size, (i + k) / p.ow, (i + k) % p.ow, p);
      }
      four_pixels_mve(columns, filter_size, 4, wt, filter_size, quant, out, p);
    }
    if (i < pixels) {  // the last one to three pixels
      for (int32_t k = 0; i + k < pixels; ++k) {
        im2col_mve(in_b, columns + k * filter_size, (i + k) / p.ow, (i + k) % p.ow, p);
      }
      four_pixels_mve(columns, filter_size, pixels - i, wt, filter_size, quant, out, p);
      out += (pixels - i) * p.cout;
    }
  }
}
#undef FOUR_PIXELS_OPERANDS
#endif

Error quantized_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTtLLLIITTIItT"));
  const Tensor& in = *args[0]->tensor;
  const Tensor& wt = *args[1]->tensor;
  Tensor& out = *args[13]->tensor;
  PTERON_TRY(check_conv_tensors(kOp, in, wt, out));
  if (wt.size(3) != in.size(3)) {
    return fail(Error::NotSupported,
                "%s: weight has %d input channels, input %d (grouped convolutions are not "
                "supported; depthwise has its own op)",
                kOp, static_cast<int>(wt.size(3)), static_cast<int>(in.size(3)));
  }
  ConvParams p{};
  p.depth_multiplier = 1;
  PTERON_TRY(read_conv_params(kOp, args, 6, wt.size(0), &p));
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    const bool pointwise = p.kh == 1 && p.kw == 1 && p.win.stride[0] == 1 && p.win.stride[1] == 1 &&
                           p.win.padding[0] == 0 && p.win.padding[1] == 0;
    const size_t bytes = quantized_conv2d_scratch_bytes(p.cin, p.kh, p.kw, p.cout, pointwise);
    if (void* scratch = kernel_scratch(ctx, *args[12], bytes)) {
      conv_mve(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch, pointwise);
      return Error::Ok;
    }
  }
#endif
  conv_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_conv2d_nhwc.out", quantized_conv2d_nhwc_out);

}  // namespace pteron::cortex_m
