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
// stride 1 and no padding read the input pixels in place (the fast path). Convolutions with few
// input channels take narrow variants when every shift is negative (scratch.h: 1x1 on <= 32
// channels, 3-row kernels with rows of a few bytes, i.e. first layers), which keep input pixels
// in registers across all output channels instead. Scratch: quantized_conv2d_scratch_bytes.
#include <cstring>

#include "kernels/cortex_m/dsp/dsp_kernels.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/path.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/conv_host.h"
#endif

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
// results, which share the channel's ChannelQuant, requantized as one vector and scattered to
// the four pixels' outputs. The requantisation is requantize_mve's arithmetic with its rounding
// fix-up folded into VQRDMLAH: the accumulator starts at -1 for negative values when the
// channel shifts right (round_fix; the high half has their sign, or is 0 and the -1 rounds
// away), 0 otherwise. Rows of at most 16 bytes (1x1
// convolutions of up to 16 input channels) are loaded once into vectors (lanes past `len` zero)
// and stay there for every output channel, whose filter is one predicated load and four VMLADAV.
// Inline assembly because GCC 12 emits no tail-predicated loops and spills around the
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
        "   vmov        q4[2], q4[0], r6, r10  \n"    // lanes 0 and 2: pixels 0 and 2
        "   vmov        q4[3], q4[1], r8, r12  \n"    // lanes 1 and 3: pixels 1 and 3
        "   ldm         r7, {r0, r1, r2, r3, r4} \n"  // offset_sum, mult, left, right, round_fix
        "   add         r7, r7, #32            \n"
        "   vadd.i32    q4, q4, r0             \n"
        "   vshl.s32    q4, r2                 \n"
        "   vshr.s32    q5, q4, #31            \n"
        "   vmul.i32    q5, q5, r4             \n"
        "   vqrdmlah.s32 q5, q4, r1            \n"
        "   vrshl.s32   q5, r3                 \n"
        "   ldr         r0, [r9, #24]          \n"  // out_off
        "   vadd.i32    q4, q5, r0             \n"
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
      "   vmov        q4[2], q4[0], r8, r12  \n"       // lanes 0 and 2: pixels 0 and 2
      "   vmov        q4[3], q4[1], r10, r6  \n"       // lanes 1 and 3: pixels 1 and 3
      "   ldm         r7, {r6, r8, r10, r11, r12} \n"  // offset_sum, mult, left, right, round_fix
      "   add         r7, r7, #32            \n"
      "   vadd.i32    q4, q4, r6             \n"
      "   vshl.s32    q4, r10                \n"
      "   vshr.s32    q2, q4, #31            \n"
      "   vmul.i32    q2, q2, r12            \n"
      "   vqrdmlah.s32 q2, q4, r8            \n"
      "   vrshl.s32   q2, r11                \n"
      "   ldr         r11, [r9, #24]         \n"
      "   vadd.i32    q4, q2, r11            \n"
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

// The narrow-input variants (scratch.h: conv2d_narrow_pointwise / conv2d_narrow_rows). With few
// input channels each dot product is short, so the general path's per-channel work (the dot
// loop's set-up, the four-lane requantisation of every channel of four pixels) outweighs the
// multiply-accumulates. These variants keep a block of output pixels' input in vector
// registers for every output channel: 1x1 on <= 16 channels requantises as it goes; the others
// write int32 accumulators for a tile of pixels, and one pass then requantises each channel's
// row of the tile, four pixels a vector. They need every shift to be a right shift (shift < 0,
// true of any layer whose scale is below one), which makes the rounding fix-up one VSHR folded
// into VQRDMLAH.

// The narrow variants' per-channel record (kConv2dNarrowRecord bytes, one LDM).
struct NarrowQuant {
  int32_t offset_sum, mult, right;  // right = shift < 0
};
static_assert(sizeof(NarrowQuant) == kConv2dNarrowRecord, "one LDM of three words");

// What requantize_tile_mve's loops read from memory.
struct alignas(16) RequantTile {
  const int32_t* acc;        // channel 0's accumulators; then a row of `tile` per channel
  int8_t* out;               // the tile's first pixel, channel 0
  const NarrowQuant* quant;  // channel 0's record
  int32_t count;             // pixels in the tile
  int32_t acc_stride;        // bytes between two channels' accumulator rows
  int32_t out_step;          // 4 * cout: four pixels on
  int32_t out_off;
  int8_t* out_end;       // out + cout
  int32_t lo[4], hi[4];  // activation range
  uint32_t scatter[4];   // 0, cout, 2 * cout, 3 * cout: four pixels' outputs
};

// out = clamp(requantize(acc + offset_sum) + out_off) for the tile's pixels and every channel:
// per channel a tail-predicated loop over the pixels (lanes past `count` neither loaded nor
// stored), the channel's offset, multiplier and shift in core registers. requantize() with
// shift = -s, s >= 1, is VQRDMULH then a rounding shift by s that rounds the midpoint away
// from zero: VRSHL rounds it up, so negative values lose one first. VQRDMLAH adds the high half
// to the accumulator register, which starts as -1 for negative values (VSHR #31); their sign
// is the high half's, and where the high half is 0 the -1 still rounds to 0.
void requantize_tile_mve(const int32_t* acc, int32_t tile, int32_t count, int8_t* out,
                         const NarrowQuant* quant, const ConvParams& p) {
  RequantTile r;
  r.acc = acc, r.out = out, r.quant = quant, r.count = count;
  r.acc_stride = tile * static_cast<int32_t>(sizeof(int32_t));
  r.out_step = 4 * p.cout, r.out_off = p.out_off, r.out_end = out + p.cout;
  for (int32_t k = 0; k < 4; ++k) {
    r.lo[k] = p.act_min, r.hi[k] = p.act_max, r.scatter[k] = static_cast<uint32_t>(k * p.cout);
  }
  register RequantTile* r_r asm("r9") = &r;
  __asm volatile(
      "   vldrw.32     q5, [r9, #32]          \n"  // activation min
      "   vldrw.32     q6, [r9, #48]          \n"  // activation max
      "   vldrw.32     q7, [r9, #64]          \n"  // scatter offsets
      "   ldm          r9, {r0, r1, r2, r3, r4, r5, r6} \n"
      "   ldr          r9, [r9, #28]          \n"  // out_end
      "3:                                     \n"  // per channel
      "   ldm          r2!, {r8, r10, r11}    \n"  // offset_sum, mult, right (-s)
      "   mov          r12, r0                \n"
      "   mov          r7, r1                 \n"
      "   wlstp.32     lr, r3, 1f             \n"
      "2:                                     \n"  // per four pixels
      "   vldrw.32     q0, [r12], #16         \n"
      "   vadd.i32     q0, q0, r8             \n"
      "   vshr.s32     q1, q0, #31            \n"
      "   vqrdmlah.s32 q1, q0, r10            \n"
      "   vrshl.s32    q1, r11                \n"
      "   vadd.i32     q1, q1, r6             \n"
      "   vmax.s32     q1, q1, q5             \n"
      "   vmin.s32     q1, q1, q6             \n"
      "   vstrb.32     q1, [r7, q7]           \n"
      "   add          r7, r7, r5             \n"
      "   letp         lr, 2b                 \n"
      "1:                                     \n"
      "   add          r0, r0, r4             \n"
      "   add          r1, r1, #1             \n"
      "   cmp          r1, r9                 \n"
      "   bne          3b                     \n"
      : "+r"(r_r)
      :
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r10", "r11", "r12", "r14", "q0",
        "q1", "q5", "q6", "q7", "memory", "cc");
}

// What pointwise_fused_mve reads (and advances).
struct alignas(16) PointwiseFused {
  const int8_t* pixels;  // the block's first input pixel
  int32_t step;          // bytes from one pixel of the block to the next: cin, or 0
  int32_t cin;
  uint32_t saved_vpr;        // the predicate register, which GCC 12 has no clobber name for
  const int8_t* filters;     // 16 bytes a filter, cin of them used
  int8_t* out;               // the block's first pixel's output
  const NarrowQuant* quant;  // channel 0's record
  int32_t unused;
  int32_t out_off;
  int32_t pairs;         // cout / 2
  int32_t out_skip;      // 3 * cout: from the block's first pixel's channel cout to the next block
  int32_t blocks;        // blocks of four pixels to do
  int16_t lo[8], hi[8];  // activation range
  uint16_t scatter[8];   // channels c and c + 1 of the four pixels: k * cout + {0, 1}
};

// `blocks` runs of four pixels of a 1x1 convolution with cin <= 16 and an even number of output
// channels, every channel: each pixel is one predicated load (lanes past cin zero, so the filter
// table's lanes there may hold anything), then per channel one filter load, four VMLADAV (even
// registers only), the four sums moved into one vector two lanes at a time and requantised as
// in requantize_tile_mve up to the rounding shift. Two channels' results are then narrowed
// (saturating) into one vector of 16-bit lanes, which takes the output offset (saturating), the
// activation range and a scatter store of eight bytes in one instruction each. No accumulators
// go through memory. Step 0 computes one pixel (four times, stored to the same place): a short
// last block.
void pointwise_fused_mve(PointwiseFused& f) {
  register PointwiseFused* f_r asm("r9") = &f;
  __asm volatile(
      "   vmrs         r12, p0                \n"
      "   str          r12, [r9, #12]         \n"
      "   vldrw.32     q7, [r9, #80]          \n"  // scatter offsets
      "4:                                     \n"  // per block of four pixels
      "   ldm          r9, {r0, r4, r11}      \n"  // pixels, step, cin
      "   vctp.8       r11                    \n"
      "   add          r1, r0, r4             \n"
      "   add          r2, r1, r4             \n"
      "   add          r3, r2, r4             \n"
      "   vpstttt                             \n"
      "   vldrbt.8     q0, [r0]               \n"
      "   vldrbt.8     q1, [r1]               \n"
      "   vldrbt.8     q2, [r2]               \n"
      "   vldrbt.8     q3, [r3]               \n"
      "   add          r0, r3, r4             \n"
      "   str          r0, [r9]               \n"  // the next block's pixels
      "   ldrd         r1, r3, [r9, #16]      \n"  // filters, out
      "   ldr          r5, [r9, #24]          \n"  // records
      "   ldrd         r12, r7, [r9, #32]     \n"  // out_off, pairs
      "   dls          lr, r7                 \n"
      "2:                                     \n"  // per pair of output channels
      "   vldrb.8      q4, [r1], #16          \n"  // the first channel
      "   vmladav.s8   r0, q0, q4             \n"
      "   vmladav.s8   r2, q1, q4             \n"
      "   vmladav.s8   r4, q2, q4             \n"
      "   vmladav.s8   r6, q3, q4             \n"
      "   vmov         q5[2], q5[0], r0, r4   \n"  // lanes 0 and 2: pixels 0 and 2
      "   vmov         q5[3], q5[1], r2, r6   \n"  // lanes 1 and 3: pixels 1 and 3
      "   ldm          r5!, {r8, r10, r11}    \n"  // offset_sum, mult, right (-s)
      "   vadd.i32     q5, q5, r8             \n"
      "   vshr.s32     q6, q5, #31            \n"
      "   vqrdmlah.s32 q6, q5, r10            \n"
      "   vrshl.s32    q6, r11                \n"
      "   vldrb.8      q4, [r1], #16          \n"  // the second channel
      "   vmladav.s8   r0, q0, q4             \n"
      "   vmladav.s8   r2, q1, q4             \n"
      "   vmladav.s8   r4, q2, q4             \n"
      "   vmladav.s8   r6, q3, q4             \n"
      "   vmov         q5[2], q5[0], r0, r4   \n"
      "   vmov         q5[3], q5[1], r2, r6   \n"
      "   ldm          r5!, {r8, r10, r11}    \n"
      "   vadd.i32     q5, q5, r8             \n"
      "   vshr.s32     q4, q5, #31            \n"
      "   vqrdmlah.s32 q4, q5, r10            \n"
      "   vrshl.s32    q4, r11                \n"
      "   vqmovnb.s32  q5, q6                 \n"  // first channel: even 16-bit lanes
      "   vqmovnt.s32  q5, q4                 \n"  // second channel: odd lanes
      "   vqadd.s16    q5, q5, r12            \n"
      "   vldrw.32     q4, [r9, #48]          \n"  // activation min
      "   vmax.s16     q5, q5, q4             \n"
      "   vldrw.32     q6, [r9, #64]          \n"  // activation max
      "   vmin.s16     q5, q5, q6             \n"
      "   vstrb.16     q5, [r3, q7]           \n"
      "   add          r3, r3, #2             \n"
      "   le           lr, 2b                 \n"
      "   ldrd         r7, r8, [r9, #40]      \n"  // out_skip, blocks
      "   add          r3, r3, r7             \n"
      "   subs         r8, r8, #1             \n"
      "   str          r3, [r9, #20]          \n"  // the next block's out
      "   str          r8, [r9, #44]          \n"
      "   bne          4b                     \n"
      "   ldr          r12, [r9, #12]         \n"
      "   vmsr         p0, r12                \n"
      :
      : "r"(f_r)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r10", "r11", "r12", "r14", "q0",
        "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}

void conv_pointwise_fused_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                              const NarrowQuant* quant, uint8_t* rest) {
  PointwiseFused f;
  f.filters = wt;  // 16 input channels: the weights are the table
  if (p.cin != 16) {
    int8_t* table = reinterpret_cast<int8_t*>(rest);
    for (int32_t oc = 0; oc < p.cout; ++oc) copy_mve(table + oc * 16, wt + oc * p.cin, p.cin);
    f.filters = table;
  }
  f.quant = quant, f.cin = p.cin, f.out_off = p.out_off, f.pairs = p.cout / 2;
  f.out_skip = 3 * p.cout;
  for (int32_t k = 0; k < 8; ++k) {
    f.lo[k] = static_cast<int16_t>(p.act_min), f.hi[k] = static_cast<int16_t>(p.act_max);
    f.scatter[k] = static_cast<uint16_t>(k / 2 * p.cout + k % 2);
  }
  const int64_t pixels = static_cast<int64_t>(p.n) * p.h * p.w;
  const int64_t full = pixels / 4 * 4;
  if (full > 0) {
    f.pixels = in, f.step = p.cin, f.out = out, f.blocks = static_cast<int32_t>(full / 4);
    pointwise_fused_mve(f);
  }
  for (int32_t k = 0; k < 8; ++k) f.scatter[k] = static_cast<uint16_t>(k % 2);
  for (int64_t i = full; i < pixels; ++i) {  // one to three pixels: one at a time
    f.pixels = in + i * p.cin, f.step = 0, f.out = out + i * p.cout, f.blocks = 1;
    pointwise_fused_mve(f);
  }
}

// What pointwise_block_wide_mve reads.
struct alignas(16) PointwiseBlock {
  const int8_t* pixels[6];  // three input pixels (a short block repeats its last one); 6 slots
  const int8_t* filters;    // 32 bytes a filter, cin of them used
  int32_t* acc;             // the first pixel's accumulator in channel 0's row
  int32_t acc_stride;       // bytes between two channels' rows
  int32_t cout;
  int32_t cin;
};

// The accumulators of three pixels of a 1x1 convolution with 16 < cin <= 32, for every channel:
// each pixel is two vectors (the second a load predicated to cin - 16 lanes, so the filter
// table's lanes past cin may hold anything), per channel two filter loads and six VMLADAV
// (even registers only) whose sums are three consecutive accumulators of the channel's row.
void pointwise_block_wide_mve(PointwiseBlock& b) {
  register PointwiseBlock* b_r asm("r9") = &b;
  __asm volatile(
      "   vmrs         r12, p0                \n"
      "   ldr          r11, [r9, #40]         \n"  // cin
      "   sub          r11, r11, #16          \n"
      "   vctp.8       r11                    \n"
      "   ldm          r9, {r0, r1, r2}       \n"
      "   vldrb.8      q0, [r0], #16          \n"  // pixel 0: channels 0..15
      "   vldrb.8      q2, [r1], #16          \n"
      "   vldrb.8      q4, [r2], #16          \n"
      "   vpsttt                              \n"
      "   vldrbt.8     q1, [r0]               \n"  // pixel 0: channels 16..cin-1
      "   vldrbt.8     q3, [r1]               \n"
      "   vldrbt.8     q5, [r2]               \n"
      "   vmsr         p0, r12                \n"
      "   ldrd         r1, r3, [r9, #24]      \n"  // filters, acc
      "   ldrd         r5, r11, [r9, #32]     \n"  // acc_stride, cout
      "   dls          lr, r11                \n"
      "2:                                     \n"
      "   vldrb.8      q6, [r1], #16          \n"
      "   vldrb.8      q7, [r1], #16          \n"
      "   vmladav.s8   r0, q0, q6             \n"
      "   vmladava.s8  r0, q1, q7             \n"
      "   vmladav.s8   r2, q2, q6             \n"
      "   vmladava.s8  r2, q3, q7             \n"
      "   vmladav.s8   r4, q4, q6             \n"
      "   vmladava.s8  r4, q5, q7             \n"
      "   stm          r3, {r0, r2, r4}       \n"
      "   add          r3, r3, r5             \n"
      "   le           lr, 2b                 \n"
      :
      : "r"(b_r)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r11", "r12", "r14", "q0", "q1", "q2", "q3", "q4", "q5",
        "q6", "q7", "memory", "cc");
}

// 1x1 convolutions of 17 to 32 input channels: tiles of pixels, blocks of three, then the
// tile's requantisation.
void conv_pointwise_wide_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                             const NarrowQuant* quant, uint8_t* rest) {
  const int32_t tile = static_cast<int32_t>(conv2d_narrow_tile_pixels(p.cout, false));
  int32_t* acc = reinterpret_cast<int32_t*>(rest);
  rest += align_scratch(static_cast<size_t>(p.cout) * tile * sizeof(int32_t));
  const int8_t* filters = wt;  // 32 input channels: the weights are the table
  if (p.cin != 32) {
    int8_t* table = reinterpret_cast<int8_t*>(rest);
    for (int32_t oc = 0; oc < p.cout; ++oc) copy_mve(table + oc * 32, wt + oc * p.cin, p.cin);
    filters = table;
  }
  PointwiseBlock b;
  b.filters = filters, b.acc_stride = tile * static_cast<int32_t>(sizeof(int32_t));
  b.cout = p.cout, b.cin = p.cin;
  const int64_t pixels = static_cast<int64_t>(p.n) * p.h * p.w;
  for (int64_t base = 0; base < pixels; base += tile) {
    const int32_t count = pixels - base < tile ? static_cast<int32_t>(pixels - base) : tile;
    const int8_t* x = in + base * p.cin;
    for (int32_t k = 0; k < count; k += 3) {
      for (int32_t j = 0; j < 3; ++j) b.pixels[j] = x + (k + j < count ? k + j : count - 1) * p.cin;
      b.acc = acc + k;
      pointwise_block_wide_mve(b);
    }
    requantize_tile_mve(acc, tile, count, out + base * p.cout, quant, p);
  }
}

// What rows_blocks_mve reads (and advances).
struct alignas(16) RowsBlock {
  const int8_t* rows[3];  // the three kernel rows' bytes under the block's first pixel
  int32_t second;         // bytes from the first pixel's window to the third's: 2 * step
  int32_t lanes;          // step + kw * cin: two neighbouring pixels' window rows
  const int8_t* filters;  // per channel and kernel row: the row at lane 0, then at lane `step`
  int32_t* acc;           // the first pixel's accumulator in channel 0's row
  int32_t acc_stride;     // bytes between two channels' rows
  int32_t cout;
  int32_t blocks;      // blocks of four pixels to do, each 4 * step bytes and 4 pixels on
  uint32_t saved_vpr;  // the predicate register, which GCC 12 has no clobber name for
};

// The accumulators of `blocks` runs of four neighbouring output pixels of a 3-row convolution whose
// window rows (R = kw * cin bytes) start `step` = stride_w * cin bytes apart, step + R <= 16: one
// vector from each kernel row holds the first two pixels' window rows (lanes 0..R-1 and step..), a
// second from 2 * step on the other two's. The filter table has each kernel row twice, at lane
// 0 and at lane step, zeros elsewhere, so per channel six filter loads and twelve VMLADAV give
// the four sums straight from the input, with no im2col copy.
void rows_blocks_mve(RowsBlock& b) {
  register RowsBlock* b_r asm("r9") = &b;
  __asm volatile(
      "   vmrs         r8, p0                 \n"
      "   str          r8, [r9, #40]          \n"
      "4:                                     \n"    // per block of four pixels
      "   ldm          r9, {r0, r1, r2, r3, r4} \n"  // rows, second, lanes
      "   vctp.8       r4                     \n"
      "   add          r4, r0, r3             \n"
      "   add          r5, r1, r3             \n"
      "   add          r6, r2, r3             \n"
      "   vpstttt                             \n"
      "   vldrbt.8     q0, [r0]               \n"  // kernel row 0: pixels 0 and 1
      "   vldrbt.8     q1, [r4]               \n"  // pixels 2 and 3
      "   vldrbt.8     q2, [r1]               \n"  // kernel row 1
      "   vldrbt.8     q3, [r5]               \n"
      "   vpstt                               \n"
      "   vldrbt.8     q4, [r2]               \n"  // kernel row 2
      "   vldrbt.8     q5, [r6]               \n"
      "   add          r0, r0, r3, lsl #1     \n"  // the next block's rows: 2 * second on
      "   add          r1, r1, r3, lsl #1     \n"
      "   add          r2, r2, r3, lsl #1     \n"
      "   stm          r9, {r0, r1, r2}       \n"
      "   ldrd         r1, r3, [r9, #20]      \n"  // filters, acc
      "   add          r5, r3, #16            \n"
      "   str          r5, [r9, #24]          \n"  // the next block's accumulators
      "   ldrd         r5, r8, [r9, #28]      \n"  // acc_stride, cout
      "   dls          lr, r8                 \n"
      "2:                                     \n"
      "   vldrb.8      q6, [r1], #16          \n"  // row 0 at lane 0: pixels 0 and 2
      "   vmladav.s8   r0, q0, q6             \n"
      "   vmladav.s8   r4, q1, q6             \n"
      "   vldrb.8      q7, [r1], #16          \n"  // row 0 at lane step: pixels 1 and 3
      "   vmladav.s8   r2, q0, q7             \n"
      "   vmladav.s8   r6, q1, q7             \n"
      "   vldrb.8      q6, [r1], #16          \n"
      "   vmladava.s8  r0, q2, q6             \n"
      "   vmladava.s8  r4, q3, q6             \n"
      "   vldrb.8      q7, [r1], #16          \n"
      "   vmladava.s8  r2, q2, q7             \n"
      "   vmladava.s8  r6, q3, q7             \n"
      "   vldrb.8      q6, [r1], #16          \n"
      "   vmladava.s8  r0, q4, q6             \n"
      "   vmladava.s8  r4, q5, q6             \n"
      "   vldrb.8      q7, [r1], #16          \n"
      "   vmladava.s8  r2, q4, q7             \n"
      "   vmladava.s8  r6, q5, q7             \n"
      "   stm          r3, {r0, r2, r4, r6}   \n"  // pixels 0, 1, 2, 3
      "   add          r3, r3, r5             \n"
      "   le           lr, 2b                 \n"
      "   ldr          r8, [r9, #36]          \n"
      "   subs         r8, r8, #1             \n"
      "   str          r8, [r9, #36]          \n"
      "   bne          4b                     \n"
      "   ldr          r8, [r9, #40]          \n"
      "   vmsr         p0, r8                 \n"
      :
      : "r"(b_r)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r14", "q0", "q1", "q2", "q3", "q4", "q5",
        "q6", "q7", "memory", "cc");
}

// 3-row convolutions with short rows: per output row, tiles of pixels, blocks of four (straight
// from the input, or from a padded copy of the block's window rows where it reaches the
// padding or past the row's end), then the tile's requantisation.
void conv_rows_narrow_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                          const NarrowQuant* quant, uint8_t* rest) {
  const int32_t cin = p.cin, row_bytes = p.kw * cin, step = p.win.stride[1] * cin;
  const int32_t tile = static_cast<int32_t>(conv2d_narrow_tile_pixels(p.cout, true));
  const int32_t sx = p.win.stride[1], span_px = 3 * sx + p.kw;  // input pixels a block reads
  const int8_t pad = static_cast<int8_t>(-p.in_off);
  int8_t* filters = reinterpret_cast<int8_t*>(rest);
  rest += align_scratch(static_cast<size_t>(p.cout) * 3 * 32);
  int32_t* acc = reinterpret_cast<int32_t*>(rest);
  rest += align_scratch(static_cast<size_t>(p.cout) * tile * sizeof(int32_t));
  int8_t* edge = reinterpret_cast<int8_t*>(rest);
  for (int32_t i = 0; i < p.cout * 3; ++i) {
    int8_t* f = filters + i * 32;
    fill_mve(f, 0, 32);
    copy_mve(f, wt + i * row_bytes, row_bytes);
    copy_mve(f + 16 + step, wt + i * row_bytes, row_bytes);
  }
  RowsBlock b;
  b.second = 2 * step, b.lanes = step + row_bytes, b.filters = filters;
  b.acc_stride = tile * static_cast<int32_t>(sizeof(int32_t)), b.cout = p.cout;
  for (int32_t n = 0; n < p.n; ++n) {
    const int8_t* in_b = in + static_cast<int64_t>(n) * p.h * p.w * cin;
    for (int32_t oy = 0; oy < p.oh; ++oy) {
      const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
      const int8_t* rows[3];
      bool rows_inside = true;
      for (int32_t ky = 0; ky < 3; ++ky) {
        const int32_t iy = y0 + ky * p.win.dilation[0];
        const bool inside = iy >= 0 && iy < p.h;
        rows_inside = rows_inside && inside;
        rows[ky] = inside ? in_b + static_cast<int64_t>(iy) * p.w * cin : nullptr;
      }
      int8_t* out_row = out + (static_cast<int64_t>(n) * p.oh + oy) * p.ow * p.cout;
      for (int32_t ox0 = 0; ox0 < p.ow; ox0 += tile) {
        const int32_t count = p.ow - ox0 < tile ? p.ow - ox0 : tile;
        for (int32_t k = 0, blocks = 1; k < count; k += 4 * blocks) {
          const int32_t x0 = (ox0 + k) * sx - p.win.padding[1];
          blocks = 1;
          if (rows_inside && x0 >= 0 && x0 + span_px <= p.w) {
            // This block and the next ones inside the input, up to the tile's end.
            const int32_t inside = (p.w - span_px - x0) / (4 * sx) + 1;
            const int32_t left = (count - k + 3) / 4;
            blocks = inside < left ? inside : left;
            for (int32_t ky = 0; ky < 3; ++ky) b.rows[ky] = rows[ky] + x0 * cin;
          } else {  // a copy of the block's window rows with -input_offset in the padding
            const int32_t lo = clamp_i32(x0, 0, p.w), hi = clamp_i32(x0 + span_px, 0, p.w);
            for (int32_t ky = 0; ky < 3; ++ky) {
              int8_t* dst = edge + ky * kConv2dNarrowEdgeRow;
              b.rows[ky] = dst;
              const int32_t iy = y0 + ky * p.win.dilation[0];
              if (iy < 0 || iy >= p.h || hi <= lo) {
                fill_mve(dst, pad, span_px * cin);
                continue;
              }
              fill_mve(dst, pad, (lo - x0) * cin);
              copy_mve(dst + (lo - x0) * cin, rows[ky] + lo * cin, (hi - lo) * cin);
              fill_mve(dst + (hi - x0) * cin, pad, (x0 + span_px - hi) * cin);
            }
          }
          b.acc = acc + k, b.blocks = blocks;
          rows_blocks_mve(b);
        }
        requantize_tile_mve(acc, tile, count, out_row + ox0 * p.cout, quant, p);
      }
    }
  }
}

void conv_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p, void* scratch,
              bool pointwise) {
  const int32_t filter_size = p.kh * p.kw * p.cin;
  auto offset_sum = [&](int32_t oc) {  // bias + input_offset * sum(filter)
    return (p.bias ? p.bias[oc] : 0) +
           p.in_off * sum_mve(wt + static_cast<int64_t>(oc) * filter_size, filter_size);
  };
  bool right_shifts = true;  // the narrow variants' requantisation needs shift < 0
  for (int32_t oc = 0; oc < p.cout; ++oc) right_shifts = right_shifts && p.shift[oc] < 0;
  const bool narrow_pointwise = conv2d_narrow_pointwise(p.cin, p.cout, pointwise);
  if (right_shifts &&
      (narrow_pointwise || (p.win.dilation[1] == 1 &&
                            conv2d_narrow_rows(p.cin, p.kh, p.kw, p.cout, p.win.stride[1])))) {
    NarrowQuant* quant = static_cast<NarrowQuant*>(scratch);
    for (int32_t oc = 0; oc < p.cout; ++oc) quant[oc] = {offset_sum(oc), p.mult[oc], p.shift[oc]};
    uint8_t* rest = static_cast<uint8_t*>(scratch) + align_scratch(p.cout * sizeof(NarrowQuant));
    if (narrow_pointwise && p.cin <= 16) {
      conv_pointwise_fused_mve(in, wt, out, p, quant, rest);
    } else if (narrow_pointwise) {
      conv_pointwise_wide_mve(in, wt, out, p, quant, rest);
    } else {
      conv_rows_narrow_mve(in, wt, out, p, quant, rest);
    }
    return;
  }
  ChannelQuant* quant = static_cast<ChannelQuant*>(scratch);
  for (int32_t oc = 0; oc < p.cout; ++oc) {
    quant[oc].offset_sum = offset_sum(oc);
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
    const size_t bytes =
        quantized_conv2d_scratch_bytes(p.cin, p.kh, p.kw, p.cout, pointwise, p.win.stride[1]);
    if (void* scratch = kernel_scratch(ctx, *args[12], bytes)) {
      conv_mve(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch, pointwise);
      return Error::Ok;
    }
  }
#endif
#if PTERON_CORTEX_M_DSP
  if (use_dsp()) {
    const size_t bytes = quantized_conv2d_scratch_bytes_dsp(p.cin, p.kh, p.kw, p.cout);
    if (void* scratch = kernel_scratch(ctx, *args[12], bytes)) {
      conv_dsp(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch);
      return Error::Ok;
    }
  }
#endif
#if PTERON_CORTEX_M_HOST
  // Hosted CPUs with 8-bit dot products (host/conv_host.h): the same bits, threaded.
  if (host::conv2d(ctx, in.data<int8_t>(), wt, out.data<int8_t>(), p)) return Error::Ok;
#endif
  conv_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_conv2d_nhwc.out", quantized_conv2d_nhwc_out, "TTtLLLIITTIItT");

}  // namespace pteron::cortex_m
