// cortex_m::quantized_depthwise_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias,
//     int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset,
//     int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts,
//     int activation_min, int activation_max, Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_depthwise_conv_s8: input [N, H, W, C] int8, weight [1, kH, kW, C * m] int8
// (ExecuTorch's layout), bias [C * m] int32, out [N, OH, OW, C * m]; output channel oc reads
// input channel oc / m. Requantisation per output channel as in quantized_conv2d_nhwc.
// The MVE paths (depth multiplier 1) accumulate eight channels as int16 lanes for two
// neighbouring output pixels at once: 3x3 with horizontal stride 1 or 2 and dilation 1 (MobileNet,
// DS-CNN) for every pixel in one inline-assembly loop over row buffers that hold the padding
// (depthwise3x3_mve); other shapes in intrinsics away from the left/right edges and one pixel at
// a time at them (depthwise_mve). Scratch: quantized_depthwise_conv2d_scratch_bytes. The DSP
// path (Cortex-M4/M7, depth multiplier 1): dsp/depthwise_dsp.cpp.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels/cortex_m/dsp/dsp_kernels.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/path.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/vector_kernels.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_depthwise_conv2d_nhwc.out";

void depthwise_scalar(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p) {
  const int32_t m = p.depth_multiplier, cout = p.cout, in_off = p.in_off;
  conv_reference(in, out, p, [=](const int8_t* x, int32_t oc, int32_t tap) {
    return (x[oc / m] + in_off) * wt[tap * cout + oc];
  });
}

#if PTERON_CORTEX_M_MVE
// The MVE path works on eight channels at a time as int16 lanes: VMULLB/VMULLT multiply the
// even and the odd lanes into int32 products, so the accumulators hold even and odd channels
// apart and VMOVNB/VMOVNT interleave them back when the int8 results are stored. Every tap
// reads the input as it is (no input offset per tap): per channel the int32 base
// bias + input_offset * sum(weights of all taps) is added once, and taps in the padding read
// a row of -input_offset bytes, whose products cancel their share of that base.
constexpr int32_t kMaxTaps = 64;

// memset and memcpy, 16 bytes a step (newlib-nano's go byte by byte).
void fill_bytes(int8_t* dst, int8_t value, int32_t n) {
  const int8x16_t v = vdupq_n_s8(value);
  for (; n >= 16; n -= 16, dst += 16) vst1q_s8(dst, v);
  if (n > 0) vstrbq_p_s8(dst, v, vctp8q(static_cast<uint32_t>(n)));
}
void copy_bytes(int8_t* dst, const int8_t* src, int32_t n) {
  for (; n >= 16; n -= 16, dst += 16, src += 16) vst1q_s8(dst, vld1q_s8(src));
  if (n > 0) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(n));
    vstrbq_p_s8(dst, vldrbq_z_s8(src, pr), pr);
  }
}

// Per group of four channels, in channel order: base, multiplier, and the shift split into its
// left (>= 0) and right (<= 0) parts, as requantize_mve splits it. A block of eight channels is
// two groups; the even/odd-lane paths gather their lanes (kEvenLanes, kOddLanes).
struct GroupQuant {
  int32_t base[4], mult[4], left[4], right[4];
};
using BlockQuant = GroupQuant[2];

struct DwMve {
  const ConvParams* p;
  const BlockQuant* quant;
  const int8_t* pad_row;  // w * cin bytes of -input_offset
};

void prepare_mve(const int8_t* wt, const ConvParams& p, BlockQuant* quant, int8_t* pad_row) {
  const int32_t taps = p.kh * p.kw;
  int32_t c0 = 0;  // whole groups of four channels as vectors, the rest one by one
  for (; c0 + 4 <= p.cout; c0 += 4) {
    int32x4_t sum = vdupq_n_s32(0);
    for (int32_t t = 0; t < taps; ++t) sum = vaddq_s32(sum, vldrbq_s32(wt + t * p.cout + c0));
    const int32x4_t bias = p.bias ? vldrwq_s32(p.bias + c0) : vdupq_n_s32(0);
    const int32x4_t shift = vldrwq_s32(p.shift + c0);
    GroupQuant& q = quant[c0 / 8][(c0 / 4) % 2];
    vst1q_s32(q.base, vmlaq_n_s32(bias, sum, p.in_off));
    vst1q_s32(q.mult, vldrwq_s32(p.mult + c0));
    vst1q_s32(q.left, vmaxq_s32(shift, vdupq_n_s32(0)));
    vst1q_s32(q.right, vminq_s32(shift, vdupq_n_s32(0)));
  }
  for (int32_t c = c0; c < p.cout; ++c) {
    int32_t sum = 0;
    for (int32_t t = 0; t < taps; ++t) sum += wt[t * p.cout + c];
    GroupQuant& q = quant[c / 8][(c / 4) % 2];
    const int32_t lane = c % 4;
    q.base[lane] = (p.bias ? p.bias[c] : 0) + p.in_off * sum;
    q.mult[lane] = p.mult[c];
    q.left[lane] = p.shift[c] > 0 ? p.shift[c] : 0;
    q.right[lane] = p.shift[c] > 0 ? 0 : p.shift[c];
  }
  for (int32_t c = p.cout; c % 8 != 0; ++c) {  // unused lanes of the last block: harmless values
    GroupQuant& q = quant[c / 8][(c / 4) % 2];
    const int32_t lane = c % 4;
    q.base[lane] = 0, q.mult[lane] = 1 << 30, q.left[lane] = 0, q.right[lane] = 0;
  }
  fill_bytes(pad_row, static_cast<int8_t>(-p.in_off), p.w * p.cin);
}

// Loads eight int8 channels widened to int16; only the last block of channels is predicated
// (a predicated load costs a VPST more).
template <bool kTail>
inline int16x8_t load8(const int8_t* p, mve_pred16_t pr) {
  return kTail ? vldrbq_z_s16(p, pr) : vldrbq_s16(p);
}

// The even (0, 2, 4, 6) and the odd channels of a block of eight, as int32 indices into its two
// GroupQuant records (base fields; the other fields follow at +4, +8, +12).
alignas(16) constexpr uint32_t kBlockLanes[2][4] = {{0, 2, 16, 18}, {1, 3, 17, 19}};
inline uint32x4_t block_lanes(bool odd) { return vldrwq_u32(kBlockLanes[odd ? 1 : 0]); }

// requantize_mve with the shift already split, then the output offset and the clamp, with the
// lanes' parameters gathered once for the pixels that share them.
struct LaneQuant {
  int32x4_t base, mult, left, right;
  LaneQuant(const int32_t* q, uint32x4_t lanes)
      : base(vldrwq_gather_shifted_offset_s32(q, lanes)),
        mult(vldrwq_gather_shifted_offset_s32(q + 4, lanes)),
        left(vldrwq_gather_shifted_offset_s32(q + 8, lanes)),
        right(vldrwq_gather_shifted_offset_s32(q + 12, lanes)) {}
  int32x4_t operator()(int32x4_t acc, int32_t out_off, int32x4_t lo, int32x4_t hi) const {
    int32x4_t v = vqrdmulhq_s32(vshlq_s32(vaddq_s32(acc, base), left), mult);
    v = vrshlq_s32(vqaddq_s32(v, vshrq_n_s32(vandq_s32(v, right), 31)), right);
    return vminq_s32(vmaxq_s32(vaddq_n_s32(v, out_off), lo), hi);
  }
};

// Interleaves a pixel's even and odd channels back and stores them.
template <bool kTail>
inline void store_block(int32x4_t even, int32x4_t odd, int8_t* out, mve_pred16_t pr) {
  const int16x8_t v = vmovntq_s32(vmovnbq_s32(vuninitializedq_s16(), even), odd);
  if (kTail) {
    vstrbq_p_s16(out, v, pr);
  } else {
    vstrbq_s16(out, v);
  }
}

// Eight channels from c of two horizontally neighbouring output pixels whose windows lie inside
// the input's columns: each weight vector is loaded once for the two. `rows[ky]` is input row
// y0 + ky * dilation (or the padding row) at the first pixel's window start.
template <bool kTail>
inline void pixel_pair_block(const int8_t* const* rows, const int8_t* wt, int8_t* __restrict out,
                             const DwMve& d, int32_t step, int32_t c) {
  const ConvParams& p = *d.p;
  const mve_pred16_t pr = kTail ? vctp16q(static_cast<uint32_t>(p.cout - c)) : 0xffff;
  const int32_t tap_step = p.win.dilation[1] * p.cin, cout = p.cout, kh = p.kh, kw = p.kw;
  int32x4_t ae = vdupq_n_s32(0), ao = ae, be = ae, bo = ae;
  for (int32_t ky = 0; ky < kh; ++ky) {
    const int8_t* x = rows[ky] + c;
    const int8_t* w = wt + ky * kw * cout + c;
    for (int32_t kx = 0; kx < kw; ++kx, x += tap_step, w += cout) {
      const int16x8_t wv = load8<kTail>(w, pr);
      const int16x8_t xa = load8<kTail>(x, pr);
      const int16x8_t xb = load8<kTail>(x + step, pr);
      ae = vaddq_s32(ae, vmullbq_int_s16(xa, wv));
      ao = vaddq_s32(ao, vmulltq_int_s16(xa, wv));
      be = vaddq_s32(be, vmullbq_int_s16(xb, wv));
      bo = vaddq_s32(bo, vmulltq_int_s16(xb, wv));
    }
  }
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  const int32_t* q = d.quant[c / 8][0].base;
  {
    const LaneQuant even(q, block_lanes(false));
    ae = even(ae, p.out_off, lo, hi);
    be = even(be, p.out_off, lo, hi);
  }
  {
    const LaneQuant odd(q, block_lanes(true));
    ao = odd(ao, p.out_off, lo, hi);
    bo = odd(bo, p.out_off, lo, hi);
  }
  store_block<kTail>(ae, ao, out + c, pr);
  store_block<kTail>(be, bo, out + cout + c, pr);
}

void pixel_pair_mve(const int8_t* const* rows, const int8_t* wt, int8_t* out, const DwMve& d,
                    int32_t step) {
  const int32_t cout = d.p->cout;
  int32_t c = 0;
  for (; c + 8 <= cout; c += 8) pixel_pair_block<false>(rows, wt, out, d, step, c);
  if (c < cout) pixel_pair_block<true>(rows, wt, out, d, step, c);
}

// One output pixel, any window position: taps outside the input read the padding row.
template <bool kTail>
inline void pixel_block(const int8_t* const* taps, int32_t n, const int8_t* wt,
                        int8_t* __restrict out, const DwMve& d, int32_t c) {
  const ConvParams& p = *d.p;
  const mve_pred16_t pr = kTail ? vctp16q(static_cast<uint32_t>(p.cout - c)) : 0xffff;
  int32x4_t ae = vdupq_n_s32(0), ao = ae;
  const int8_t* w = wt + c;
  for (int32_t t = 0; t < n; ++t, w += p.cout) {
    const int16x8_t wv = load8<kTail>(w, pr);
    const int16x8_t xa = load8<kTail>(taps[t] + c, pr);
    ae = vaddq_s32(ae, vmullbq_int_s16(xa, wv));
    ao = vaddq_s32(ao, vmulltq_int_s16(xa, wv));
  }
  const int32x4_t lo = vdupq_n_s32(p.act_min), hi = vdupq_n_s32(p.act_max);
  const int32_t* q = d.quant[c / 8][0].base;
  ae = LaneQuant(q, block_lanes(false))(ae, p.out_off, lo, hi);
  ao = LaneQuant(q, block_lanes(true))(ao, p.out_off, lo, hi);
  store_block<kTail>(ae, ao, out + c, pr);
}

void pixel_mve(const int8_t* const* rows, const int8_t* wt, int8_t* out, const DwMve& d,
               int32_t x0) {
  const ConvParams& p = *d.p;
  const int8_t* taps[kMaxTaps];
  int32_t n = 0;
  for (int32_t ky = 0; ky < p.kh; ++ky)
    for (int32_t kx = 0; kx < p.kw; ++kx) {
      const int32_t ix = x0 + kx * p.win.dilation[1];
      taps[n++] = ix < 0 || ix >= p.w ? d.pad_row : rows[ky] + ix * p.cin;
    }
  int32_t c = 0;
  for (; c + 8 <= p.cout; c += 8) pixel_block<false>(taps, n, wt, out, d, c);
  if (c < p.cout) pixel_block<true>(taps, n, wt, out, d, c);
}

// ---- 3x3 depthwise, horizontal stride 1 or 2, dilation 1: every output pixel one path ----
// Two horizontally neighbouring output pixels x eight channels per step, as int16 lanes whose
// even and odd channels VMULLB/VMULLT multiply into int32 accumulators (5 instructions per tap
// and pixel for eight MACs, the weights loaded once for both pixels). The input is read from
// three row buffers (a ring over the input rows) holding each row with its padding columns,
// block-major: block b (channels 8b..8b+7) of padded column j at b * plane + 8 * j. So every
// pixel, edges included, takes the same inline-assembly loop with immediate offsets, and a row
// outside the input is a buffer of padding. Taps read the input as it is; per channel the int32
// base bias + input_offset * sum(weights) starts the accumulators, and padding bytes are
// -input_offset, whose products cancel their share of it (as in the general path).

// Per block of eight channels: its weights and requantisation, even lanes (channels 0, 2, 4, 6
// of the block) then odd lanes; the offsets are the assembly's.
struct alignas(16) DwBlock {
  int8_t wt[80];  // 0: tap t (ky * 3 + kx) at 8 * t; channels past the last are 0
  int32_t base[2][4], mult[2][4], left[2][4], right[2][4];  // 80, 112, 144, 176
};
static_assert(sizeof(DwBlock) == 208, "quantized_depthwise_conv2d_scratch_bytes' record size");

// What dw3x3_row_mve reads (offsets in its assembly): one output row's pixel pairs.
struct alignas(16) DwRowArgs {
  const int8_t* rows[3];  // 0: kernel rows' buffers at block 0, the first pair's window start
  int8_t* out;            // 12: the first pixel
  const DwBlock* blocks;  // 16
  int32_t pairs;          // 20
  int32_t channels;       // 24
  int32_t plane;          // 28: bytes from one block to the next in a row buffer
  int32_t cout;           // 32: bytes from one output pixel to the next
  int32_t out_off;        // 36
  int32_t unused[2];
  int16_t act_min[8], act_max[8];  // 48, 64
};
static_assert(offsetof(DwRowArgs, blocks) == 16 && offsetof(DwRowArgs, out_off) == 36 &&
                  offsetof(DwRowArgs, act_min) == 48 && offsetof(DwRowArgs, act_max) == 64,
              "dw3x3_row_mve's offsets");

// The assembly reads best one instruction a line.
// clang-format off
// One product of input X and weights W (8 int16 lanes each) added to a pixel's even and odd
// channel sums: q0/q1 pixel a's, q2/q3 pixel b's (q6 the product).
#define DW_MAC(X, W, EVEN, ODD)                      \
  "   vmullb.s16  q6, " X ", " W "            \n"    \
  "   vadd.i32    " EVEN ", " EVEN ", q6      \n"    \
  "   vmullt.s16  q6, " X ", " W "            \n"    \
  "   vadd.i32    " ODD ", " ODD ", q6        \n"
// A kernel row (input row buffer ROW, its taps' weights at W0..W2 in the block record r0) for
// both pixels. Stride 1: pixel b's tap kx reads pixel a's tap kx + 1, so each input vector is
// loaded once for both (7 loads a row instead of 9), w0/w1 in q4/q7, then w2 in q4.
#define DW_ROW_S1(ROW, W0, W1, W2)                   \
  "   vldrb.s16   q4, [r0, #" W0 "]            \n"   \
  "   vldrb.s16   q7, [r0, #" W1 "]            \n"   \
  "   vldrb.s16   q5, [" ROW "]                \n"   \
  DW_MAC("q5", "q4", "q0", "q1")                     \
  "   vldrb.s16   q5, [" ROW ", #8]            \n"   \
  DW_MAC("q5", "q7", "q0", "q1")                     \
  DW_MAC("q5", "q4", "q2", "q3")                     \
  "   vldrb.s16   q4, [r0, #" W2 "]            \n"   \
  "   vldrb.s16   q5, [" ROW ", #16]           \n"   \
  DW_MAC("q5", "q4", "q0", "q1")                     \
  DW_MAC("q5", "q7", "q2", "q3")                     \
  "   vldrb.s16   q5, [" ROW ", #24]           \n"   \
  DW_MAC("q5", "q4", "q2", "q3")
// Stride 2: pixel b's tap 0 is pixel a's tap 2 (8 loads a row instead of 9).
#define DW_ROW_S2(ROW, W0, W1, W2)                   \
  "   vldrb.s16   q4, [r0, #" W0 "]            \n"   \
  "   vldrb.s16   q7, [r0, #" W1 "]            \n"   \
  "   vldrb.s16   q5, [" ROW "]                \n"   \
  DW_MAC("q5", "q4", "q0", "q1")                     \
  "   vldrb.s16   q5, [" ROW ", #8]            \n"   \
  DW_MAC("q5", "q7", "q0", "q1")                     \
  "   vldrb.s16   q5, [" ROW ", #24]           \n"   \
  DW_MAC("q5", "q7", "q2", "q3")                     \
  "   vldrb.s16   q5, [" ROW ", #16]           \n"   \
  DW_MAC("q5", "q4", "q2", "q3")                     \
  "   vldrb.s16   q4, [r0, #" W2 "]            \n"   \
  DW_MAC("q5", "q4", "q0", "q1")                     \
  "   vldrb.s16   q5, [" ROW ", #32]           \n"   \
  DW_MAC("q5", "q4", "q2", "q3")
// The left shifts (layers with a positive shift only).
#define DW_LEFT_SHIFT                                \
  "   vldrw.32    q4, [r0, #144]              \n"    \
  "   vshl.s32    q0, q0, q4                  \n"    \
  "   vshl.s32    q2, q2, q4                  \n"    \
  "   vldrw.32    q4, [r0, #160]              \n"    \
  "   vshl.s32    q1, q1, q4                  \n"    \
  "   vshl.s32    q3, q3, q4                  \n"
// The rounding right shift of accumulator Q by q4 (<= 0), midpoint away from zero as
// requantize() does: a negative value is lowered by one first.
#define DW_RIGHT_SHIFT(Q)                            \
  "   vand        q5, " Q ", q4               \n"    \
  "   vshr.s32    q5, q5, #31                 \n"    \
  "   vqadd.s32   " Q ", " Q ", q5            \n"    \
  "   vrshl.s32   " Q ", " Q ", q4            \n"
// The whole row: for each pixel pair (r11 left), for each block (r6 channels left, r0 its
// record, r1-r3 the kernel rows, r4/r5 the two pixels' outputs).
#define DW_ROW_LOOP(ROW, LEFT)                                                      \
  "   ldr         r10, [r9, #32]              \n" /* cout */                     \
  "   ldr         r12, [r9, #36]              \n" /* output offset */            \
  "   ldr         r8, [r9, #28]               \n" /* plane */                    \
  "   ldr         r11, [r9, #20]              \n" /* pairs */                    \
  "2:                                         \n"                                \
  "   ldm         r9, {r1, r2, r3, r4}        \n"                                \
  "   ldr         r0, [r9, #16]               \n"                                \
  "   ldr         r6, [r9, #24]               \n"                                \
  "   add         r5, r4, r10                 \n"                                \
  "1:                                         \n"                                \
  "   vctp.16     r6                          \n" /* the block's channels */     \
  "   vldrw.32    q0, [r0, #80]               \n" /* bases */                    \
  "   vldrw.32    q1, [r0, #96]               \n"                                \
  "   vmov        q2, q0                      \n"                                \
  "   vmov        q3, q1                      \n"                                \
  ROW("r1", "0", "8", "16") ROW("r2", "24", "32", "40") ROW("r3", "48", "56", "64") \
  LEFT                                                                           \
  "   vldrw.32    q4, [r0, #112]              \n" /* multipliers */              \
  "   vqrdmulh.s32 q0, q0, q4                 \n"                                \
  "   vqrdmulh.s32 q2, q2, q4                 \n"                                \
  "   vldrw.32    q4, [r0, #128]              \n"                                \
  "   vqrdmulh.s32 q1, q1, q4                 \n"                                \
  "   vqrdmulh.s32 q3, q3, q4                 \n"                                \
  "   vldrw.32    q4, [r0, #176]              \n" /* right shifts */             \
  DW_RIGHT_SHIFT("q0") DW_RIGHT_SHIFT("q2")                                      \
  "   vldrw.32    q4, [r0, #192]              \n"                                \
  DW_RIGHT_SHIFT("q1") DW_RIGHT_SHIFT("q3")                                      \
  /* Saturating to int16 then clamping gives the int32 clamp's result: the bounds are int8. */ \
  "   vqmovnb.s32 q5, q0                      \n" /* pixel a, channels in order */ \
  "   vqmovnt.s32 q5, q1                      \n"                                \
  "   vqmovnb.s32 q6, q2                      \n" /* pixel b */                  \
  "   vqmovnt.s32 q6, q3                      \n"                                \
  "   vqadd.s16   q5, q5, r12                 \n"                                \
  "   vqadd.s16   q6, q6, r12                 \n"                                \
  "   vldrw.32    q4, [r9, #48]               \n" /* activation min */           \
  "   vmax.s16    q5, q5, q4                  \n"                                \
  "   vmax.s16    q6, q6, q4                  \n"                                \
  "   vldrw.32    q4, [r9, #64]               \n" /* activation max */           \
  "   vmin.s16    q5, q5, q4                  \n"                                \
  "   vmin.s16    q6, q6, q4                  \n"                                \
  "   vpstt                                   \n"                                \
  "   vstrbt.16   q5, [r4], #8                \n"                                \
  "   vstrbt.16   q6, [r5], #8                \n"                                \
  "   add         r0, r0, #208                \n" /* next block */               \
  "   add         r1, r1, r8                  \n"                                \
  "   add         r2, r2, r8                  \n"                                \
  "   add         r3, r3, r8                  \n"                                \
  "   subs        r6, r6, #8                  \n"                                \
  "   bgt         1b                          \n"                                \
  "   ldm         r9, {r1, r2, r3, r4}        \n" /* next pair */                \
  "   add         r1, r1, %[pair]             \n"                                \
  "   add         r2, r2, %[pair]             \n"                                \
  "   add         r3, r3, %[pair]             \n"                                \
  "   add         r4, r4, r10, lsl #1         \n"                                \
  "   stm         r9, {r1, r2, r3, r4}        \n"                                \
  "   subs        r11, r11, #1                \n"                                \
  "   bne         2b                          \n"

// One output row's a.pairs pixel pairs (>= 1); a.rows and a.out advance past them. kLeft: the
// layer has positive shifts.
template <int kStride, bool kLeft>
__attribute__((noinline)) void dw3x3_row_mve(DwRowArgs& a) {
  register DwRowArgs* a_r asm("r9") = &a;
#define DW_ASM(ROW, LEFT)                                                                      \
  __asm volatile(DW_ROW_LOOP(ROW, LEFT)                                                        \
                 :                                                                             \
                 : "r"(a_r), [pair] "n"(16 * kStride)                                          \
                 : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10", "r11", "r12", "q0",   \
                   "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc")
  if constexpr (kStride == 1 && kLeft) {
    DW_ASM(DW_ROW_S1, DW_LEFT_SHIFT);
  } else if constexpr (kStride == 1) {
    DW_ASM(DW_ROW_S1, "");
  } else if constexpr (kLeft) {
    DW_ASM(DW_ROW_S2, DW_LEFT_SHIFT);
  } else {
    DW_ASM(DW_ROW_S2, "");
  }
#undef DW_ASM
}
#undef DW_MAC
#undef DW_ROW_S1
#undef DW_ROW_S2
#undef DW_LEFT_SHIFT
#undef DW_RIGHT_SHIFT
#undef DW_ROW_LOOP
// clang-format on

// The block records; returns whether any shift is positive.
bool prepare_blocks(const int8_t* wt, const ConvParams& p, DwBlock* blocks) {
  alignas(16) static constexpr uint32_t kLanes[2][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}};
  const int32_t c = p.cout;
  bool left = false;
  for (int32_t c0 = 0; c0 < c; c0 += 8) {
    DwBlock& blk = blocks[c0 / 8];
    const int32_t rem = c - c0;
    const mve_pred16_t pr = vctp16q(static_cast<uint32_t>(rem));
    int16x8_t sum = vdupq_n_s16(0);
    for (int32_t t = 0; t < 9; ++t) {
      const int16x8_t w = vldrbq_z_s16(wt + t * c + c0, pr);
      sum = vaddq_s16(sum, w);
      vstrbq_s16(blk.wt + 8 * t, w);
    }
    const int32x4_t sums[2] = {vmovlbq_s16(sum), vmovltq_s16(sum)};
    for (int32_t odd = 0; odd < 2; ++odd) {
      const uint32x4_t lanes = vldrwq_u32(kLanes[odd]);
      const mve_pred16_t in = vcmpltq_n_s32(vreinterpretq_s32_u32(lanes), rem);
      const int32x4_t bias =
          p.bias ? vldrwq_gather_shifted_offset_z_s32(p.bias + c0, lanes, in) : vdupq_n_s32(0);
      const int32x4_t shift = vldrwq_gather_shifted_offset_z_s32(p.shift + c0, lanes, in);
      vst1q_s32(blk.base[odd], vmlaq_n_s32(bias, sums[odd], p.in_off));
      vst1q_s32(blk.mult[odd], vldrwq_gather_shifted_offset_z_s32(p.mult + c0, lanes, in));
      vst1q_s32(blk.left[odd], vmaxq_s32(shift, vdupq_n_s32(0)));
      vst1q_s32(blk.right[odd], vminq_s32(shift, vdupq_n_s32(0)));
      left = left || vmaxvq_s32(0, shift) > 0;
    }
  }
  return left;
}

// Input row iy (or padding for -1) into a row buffer whose padding columns hold -input_offset
// already: the row's pixels, eight bytes per block and column.
void fill_row(int8_t* buf, const int8_t* in_row, const ConvParams& p, int32_t plane) {
  // Columns past the last output pixel pair's reach (stride 2 dropping the input's last
  // column) are not needed and do not fit.
  const int32_t width = static_cast<int32_t>(depthwise3x3_padded_width(p.ow, p.win.stride[1]));
  const int32_t cols = std::min(p.w, std::max(int32_t{0}, width - p.win.padding[1]));
  int8_t* dst0 = buf + 8 * std::min(p.win.padding[1], width);
  if (p.cin == 8) {
    copy_bytes(dst0, in_row, 8 * cols);
    return;
  }
  int32_t c0 = 0;
  // Two blocks at a time: a column's 16 bytes, its halves scattered to the two blocks.
  for (; c0 + 16 <= p.cin; c0 += 16, dst0 += 2 * plane) {
    const int8_t* src = in_row + c0;
    // The two 64-bit lanes: the blocks' addresses (32-bit), eight bytes before the first store.
    uint32x4_t lanes = vdupq_n_u32(0);
    lanes = vsetq_lane_u32(reinterpret_cast<uintptr_t>(dst0) - 8, lanes, 0);
    lanes = vsetq_lane_u32(reinterpret_cast<uintptr_t>(dst0 + plane) - 8, lanes, 2);
    uint64x2_t at = vreinterpretq_u64_u32(lanes);
    for (int32_t x = 0; x < cols; ++x, src += p.cin) {
      vstrdq_scatter_base_wb_s64(&at, 8, vreinterpretq_s64_s8(vld1q_s8(src)));
    }
  }
  for (; c0 < p.cin; c0 += 8, dst0 += plane) {  // a last block (of up to eight channels)
    const mve_pred16_t pr = vctp16q(static_cast<uint32_t>(p.cin - c0));
    const int8_t* src = in_row + c0;
    int8_t* dst = dst0;
    for (int32_t x = 0; x < cols; ++x, src += p.cin, dst += 8) {
      vstrbq_s16(dst, vldrbq_z_s16(src, pr));
    }
  }
}

void depthwise3x3_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                      void* scratch) {
  const int32_t nblocks = (p.cout + 7) / 8, s = p.win.stride[1];
  const int32_t width = static_cast<int32_t>(depthwise3x3_padded_width(p.ow, s));
  const int32_t plane = 8 * width;
  const size_t row_bytes = static_cast<size_t>(nblocks) * plane;
  DwBlock* blocks = static_cast<DwBlock*>(scratch);
  int8_t* bufs = static_cast<int8_t*>(scratch) + align_scratch(nblocks * sizeof(DwBlock));
  int8_t* tail = bufs + align_scratch(3 * row_bytes);  // an odd row's last pixel pair
  const bool left = prepare_blocks(wt, p, blocks);
  void (*row_fn)(DwRowArgs&) = s == 1 ? (left ? dw3x3_row_mve<1, true> : dw3x3_row_mve<1, false>)
                                      : (left ? dw3x3_row_mve<2, true> : dw3x3_row_mve<2, false>);
  // Every buffer starts as a padding row: its padding columns stay so.
  fill_bytes(bufs, static_cast<int8_t>(-p.in_off), static_cast<int32_t>(3 * row_bytes));
  constexpr int32_t kPad = -1, kEmpty = -2;
  int32_t held[3] = {kPad, kPad, kPad};  // which input row each buffer holds

  DwRowArgs a{};
  a.blocks = blocks, a.channels = p.cout, a.plane = plane, a.cout = p.cout, a.out_off = p.out_off;
  for (int32_t i = 0; i < 8; ++i) {
    a.act_min[i] = static_cast<int16_t>(p.act_min), a.act_max[i] = static_cast<int16_t>(p.act_max);
  }
  const size_t in_row = static_cast<size_t>(p.w) * p.cin,
               out_row = static_cast<size_t>(p.ow) * p.cout;
  for (int32_t b = 0; b < p.n; ++b) {
    held[0] = held[1] = held[2] = kEmpty;  // a new image: rows of the last one are stale
    held[0] = kPad;
    if (b > 0) fill_bytes(bufs, static_cast<int8_t>(-p.in_off), static_cast<int32_t>(row_bytes));
    const int8_t* in_b = in + static_cast<size_t>(b) * p.h * in_row;
    for (int32_t oy = 0; oy < p.oh; ++oy, out += out_row) {
      int32_t want[3];
      for (int32_t ky = 0; ky < 3; ++ky) {
        const int32_t iy = oy * p.win.stride[0] - p.win.padding[0] + ky * p.win.dilation[0];
        want[ky] = iy < 0 || iy >= p.h ? kPad : iy;
      }
      const int8_t* rows[3];
      for (int32_t ky = 0; ky < 3; ++ky) {
        int32_t k = 0;
        while (k < 3 && held[k] != want[ky]) ++k;
        if (k == 3) {  // load it into a buffer this output row does not need
          for (k = 0; k < 3; ++k)
            if (held[k] != want[0] && held[k] != want[1] && held[k] != want[2]) break;
          int8_t* buf = bufs + k * row_bytes;
          if (want[ky] == kPad) {
            fill_bytes(buf, static_cast<int8_t>(-p.in_off), static_cast<int32_t>(row_bytes));
          } else {
            fill_row(buf, in_b + static_cast<size_t>(want[ky]) * in_row, p, plane);
          }
          held[k] = want[ky];
        }
        rows[ky] = bufs + k * row_bytes;
      }
      for (int32_t ky = 0; ky < 3; ++ky) a.rows[ky] = rows[ky];
      a.out = out;
      a.pairs = p.ow / 2;
      if (a.pairs > 0) row_fn(a);  // leaves a.rows at the last pixel's window
      if (p.ow % 2 != 0) {
        a.out = tail, a.pairs = 1;
        row_fn(a);
        copy_bytes(out + out_row - p.cout, tail, p.cout);
      }
    }
  }
}

// Any other shape (depth multiplier 1): two pixels at a time away from the left/right edges,
// single pixels through a list of tap pointers (the padding row outside the input).
void depthwise_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                   void* scratch) {
  BlockQuant* quant = static_cast<BlockQuant*>(scratch);
  int8_t* pad_row =
      static_cast<int8_t*>(scratch) + align_scratch((p.cout + 7) / 8 * sizeof(BlockQuant));
  prepare_mve(wt, p, quant, pad_row);
  const DwMve d{&p, quant, pad_row};
  const int32_t reach = (p.kw - 1) * p.win.dilation[1];
  const int32_t step = p.win.stride[1] * p.cin;
  const int8_t* rows[kMaxTaps];     // each kernel row's input row (or the padding row)
  const int8_t* shifted[kMaxTaps];  // the same, at a pixel's window start
  for (int32_t b = 0; b < p.n; ++b) {
    for (int32_t oy = 0; oy < p.oh; ++oy) {
      const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
      for (int32_t ky = 0; ky < p.kh; ++ky) {
        const int32_t iy = y0 + ky * p.win.dilation[0];
        rows[ky] = iy < 0 || iy >= p.h ? pad_row
                                       : in + ((static_cast<int64_t>(b) * p.h + iy) * p.w) * p.cin;
      }
      for (int32_t ox = 0; ox < p.ow;) {
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        if (ox + 2 <= p.ow && x0 >= 0 && x0 + p.win.stride[1] + reach < p.w) {
          for (int32_t ky = 0; ky < p.kh; ++ky) shifted[ky] = rows[ky] + x0 * p.cin;
          pixel_pair_mve(shifted, wt, out, d, step);
          ox += 2, out += 2 * p.cout;
        } else {
          pixel_mve(rows, wt, out, d, x0);
          ++ox, out += p.cout;
        }
      }
    }
  }
}
#endif

Error quantized_depthwise_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& wt = *args[1]->tensor;
  Tensor& out = *args[14]->tensor;
  PTERON_TRY(check_conv_tensors(kOp, in, wt, out));
  ConvParams p{};
  const int64_t m = args[6]->i;
  if (m < 1 || wt.size(0) != 1 || static_cast<int64_t>(in.size(3)) * m != wt.size(3)) {
    return fail(Error::InvalidArgument,
                "%s: weight must be [1, kH, kW, C * depth_multiplier] with C = %d, m = %lld", kOp,
                static_cast<int>(in.size(3)), static_cast<long long>(m));
  }
  p.depth_multiplier = static_cast<int32_t>(m);
  PTERON_TRY(read_conv_params(kOp, args, 7, wt.size(3), &p));
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve() && p.depth_multiplier == 1 && p.kh * p.kw <= kMaxTaps) {
    const size_t bytes =
        quantized_depthwise_conv2d_scratch_bytes(p.cout, p.w, p.ow, p.win.stride[1]);
    if (void* scratch = kernel_scratch(ctx, *args[13], bytes)) {
      const bool rows3x3 = p.kh == 3 && p.kw == 3 && p.win.dilation[1] == 1 &&
                           (p.win.stride[1] == 1 || p.win.stride[1] == 2);
      (rows3x3 ? depthwise3x3_mve : depthwise_mve)(in.data<int8_t>(), wt.data<int8_t>(),
                                                   out.data<int8_t>(), p, scratch);
      return Error::Ok;
    }
  }
#endif
#if PTERON_CORTEX_M_DSP
  if (use_dsp() && p.depth_multiplier == 1) {
    const size_t bytes = quantized_depthwise_conv2d_scratch_bytes_dsp(p.cout, p.kh, p.kw);
    if (void* scratch = kernel_scratch(ctx, *args[13], bytes)) {
      depthwise_dsp(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch);
      return Error::Ok;
    }
  }
#endif
#if PTERON_CORTEX_M_HOST
  // Hosted CPUs with AVX2 or AVX-512 (host/vector_kernels.h): the same bits in vectors.
  if (host::depthwise(ctx, in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p))
    return Error::Ok;
#endif
  depthwise_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_depthwise_conv2d_nhwc.out", quantized_depthwise_conv2d_nhwc_out,
              "TTtLLLIIITTIItT");

}  // namespace pteron::cortex_m
