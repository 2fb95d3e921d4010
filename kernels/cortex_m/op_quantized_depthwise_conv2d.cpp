// cortex_m::quantized_depthwise_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias,
//     int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset,
//     int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts,
//     int activation_min, int activation_max, Tensor? scratch, *, Tensor(a!) out)
//
// CMSIS-NN arm_depthwise_conv_s8: input [N, H, W, C] int8, weight [1, kH, kW, C * m] int8
// (ExecuTorch's layout), bias [C * m] int32, out [N, OH, OW, C * m]; output channel oc reads
// input channel oc / m. Requantisation per output channel as in quantized_conv2d_nhwc.
// The MVE path (depth multiplier 1, arm_depthwise_conv_s8_opt's idea) accumulates eight
// channels per step for two neighbouring output pixels at once away from the left/right edges.
// Scratch: quantized_depthwise_conv2d_scratch_bytes.
#include <cstddef>
#include <cstring>

#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/conv_params.h"
#include "kernels/cortex_m/util/path.h"

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
  std::memset(pad_row, -p.in_off, static_cast<size_t>(p.w) * p.cin);
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

// Four horizontally neighbouring output pixels of a 3x3 depthwise convolution whose windows lie
// inside the input's columns, four channels at a time as int32 lanes (CMSIS-NN's
// arm_nn_depthwise_conv_nt_t_s8 scheme): each weight vector is loaded once for the four pixels,
// the accumulators start at the channels' base, and the four results of a channel group share
// one load of its GroupQuant. Inline assembly because GCC 12 hoists the intrinsics version's
// loads and spills (more instructions than the two-pixel path).
struct QuadArgs {
  const int8_t* rows[3];  // the three kernel rows' inputs at the first pixel's window start
  const int8_t* wt;
  int32_t step, tap_step, cout;
  int8_t* out;
  const GroupQuant* quant;
  int32_t out_off, act_min, act_max, groups;
};

// Registers: r4-r6 the kernel rows, r8 the weights, r10 step, r11 tap step, r12 cout, lr out;
// per tap r0 (weights), r1 (input), r2, r3 (widening loads and stores need r0-r7).
void pixel_quad_mve(QuadArgs& a) {
  register QuadArgs* a_r asm("r9") = &a;
  __asm volatile(
      "   ldm         r9, {r4, r5, r6, r8} \n"
      "   ldr         r10, [r9, #16]     \n"
      "   ldr         r11, [r9, #20]     \n"
      "   ldr         r12, [r9, #24]     \n"
      "   ldr         lr, [r9, #28]      \n"
      "3:                                \n"
      "   ldr         r3, [r9, #32]      \n"  // this group's GroupQuant
      "   vldrw.32    q0, [r3]           \n"
      "   vmov        q1, q0             \n"
      "   vmov        q2, q0             \n"
      "   vmov        q3, q0             \n"
      "   mov         r0, r8             \n"
      "   mov         r1, r4             \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   mov         r1, r5             \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   mov         r1, r6             \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   add         r1, r1, r11        \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r12        \n"
      "   vldrb.s32   q5, [r1]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   add         r2, r1, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   add         r2, r2, r10        \n"
      "   vldrb.s32   q5, [r2]           \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrw.32    q4, [r3, #16]      \n"  // mult
      "   vldrw.32    q5, [r3, #32]      \n"  // left
      "   vshl.s32    q0, q0, q5         \n"
      "   vshl.s32    q1, q1, q5         \n"
      "   vshl.s32    q2, q2, q5         \n"
      "   vshl.s32    q3, q3, q5         \n"
      "   vqrdmulh.s32 q0, q0, q4        \n"
      "   vqrdmulh.s32 q1, q1, q4        \n"
      "   vqrdmulh.s32 q2, q2, q4        \n"
      "   vqrdmulh.s32 q3, q3, q4        \n"
      "   vldrw.32    q6, [r3, #48]      \n"  // right
      "   add         r3, r3, #64        \n"
      "   str         r3, [r9, #32]      \n"
      "   ldr         r2, [r9, #40]      \n"
      "   vdup.32     q4, r2             \n"  // activation min
      "   ldr         r2, [r9, #44]      \n"
      "   vdup.32     q5, r2             \n"  // activation max
      "   ldr         r2, [r9, #36]      \n"  // output offset
      "   mov         r3, lr             \n"
      "   vand        q7, q0, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q0, q0, q7         \n"
      "   vrshl.s32   q0, q0, q6         \n"
      "   vadd.i32    q0, q0, r2         \n"
      "   vmax.s32    q0, q0, q4         \n"
      "   vmin.s32    q0, q0, q5         \n"
      "   vstrb.32    q0, [r3]           \n"
      "   add         r3, r3, r12        \n"
      "   vand        q7, q1, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q1, q1, q7         \n"
      "   vrshl.s32   q1, q1, q6         \n"
      "   vadd.i32    q1, q1, r2         \n"
      "   vmax.s32    q1, q1, q4         \n"
      "   vmin.s32    q1, q1, q5         \n"
      "   vstrb.32    q1, [r3]           \n"
      "   add         r3, r3, r12        \n"
      "   vand        q7, q2, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q2, q2, q7         \n"
      "   vrshl.s32   q2, q2, q6         \n"
      "   vadd.i32    q2, q2, r2         \n"
      "   vmax.s32    q2, q2, q4         \n"
      "   vmin.s32    q2, q2, q5         \n"
      "   vstrb.32    q2, [r3]           \n"
      "   add         r3, r3, r12        \n"
      "   vand        q7, q3, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q3, q3, q7         \n"
      "   vrshl.s32   q3, q3, q6         \n"
      "   vadd.i32    q3, q3, r2         \n"
      "   vmax.s32    q3, q3, q4         \n"
      "   vmin.s32    q3, q3, q5         \n"
      "   vstrb.32    q3, [r3]           \n"
      "   adds        r4, r4, #4         \n"
      "   adds        r5, r5, #4         \n"
      "   adds        r6, r6, #4         \n"
      "   add         r8, r8, #4         \n"
      "   add         lr, lr, #4         \n"
      "   ldr         r2, [r9, #48]      \n"
      "   subs        r2, r2, #1         \n"
      "   str         r2, [r9, #48]      \n"
      "   bne         3b                 \n"
      :
      : "r"(a_r)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10", "r11", "r12", "r14", "q0", "q1",
        "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}

// pixel_quad_mve for kCin channels (<= 127) with dilation 1: taps, weights and the four
// pixels' outputs are kCin bytes apart, so every load and store advances its pointer by an
// immediate (13 instructions a tap instead of 18). Registers: r8, r10, r11 the kernel rows,
// r12 the weights, lr step; r0 weights, r1-r4 the pixels, r5 out, r6 scalars.
template <int kCin>
void pixel_quad_imm_mve(QuadArgs& a) {
  register QuadArgs* a_r asm("r9") = &a;
  __asm volatile(
      "   ldr         r8, [r9, #0]       \n"
      "   ldr         r10, [r9, #4]      \n"
      "   ldr         r11, [r9, #8]      \n"
      "   ldr         r12, [r9, #12]     \n"
      "   ldr         lr, [r9, #16]      \n"
      "3:                                \n"
      "   ldr         r5, [r9, #32]      \n"  // this group's GroupQuant
      "   vldrw.32    q0, [r5]           \n"
      "   vmov        q1, q0             \n"
      "   vmov        q2, q0             \n"
      "   vmov        q3, q0             \n"
      "   mov         r0, r12            \n"
      "   mov         r1, r8            \n"
      "   add         r2, r1, lr         \n"
      "   add         r3, r2, lr         \n"
      "   add         r4, r3, lr         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   mov         r1, r10            \n"
      "   add         r2, r1, lr         \n"
      "   add         r3, r2, lr         \n"
      "   add         r4, r3, lr         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   mov         r1, r11            \n"
      "   add         r2, r1, lr         \n"
      "   add         r3, r2, lr         \n"
      "   add         r4, r3, lr         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrb.s32   q4, [r0], %[c]     \n"
      "   vldrb.s32   q5, [r1], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], %[c]     \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   vldrw.32    q4, [r5, #16]      \n"  // mult
      "   vldrw.32    q5, [r5, #32]      \n"  // left
      "   vshl.s32    q0, q0, q5         \n"
      "   vshl.s32    q1, q1, q5         \n"
      "   vshl.s32    q2, q2, q5         \n"
      "   vshl.s32    q3, q3, q5         \n"
      "   vqrdmulh.s32 q0, q0, q4        \n"
      "   vqrdmulh.s32 q1, q1, q4        \n"
      "   vqrdmulh.s32 q2, q2, q4        \n"
      "   vqrdmulh.s32 q3, q3, q4        \n"
      "   vldrw.32    q6, [r5, #48]      \n"  // right
      "   add         r5, r5, #64        \n"
      "   str         r5, [r9, #32]      \n"
      "   ldr         r6, [r9, #40]      \n"
      "   vdup.32     q4, r6             \n"  // activation min
      "   ldr         r6, [r9, #44]      \n"
      "   vdup.32     q5, r6             \n"  // activation max
      "   ldr         r5, [r9, #28]      \n"  // out
      "   add         r6, r5, #4         \n"
      "   str         r6, [r9, #28]      \n"
      "   ldr         r6, [r9, #36]      \n"  // output offset
      "   vand        q7, q0, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q0, q0, q7         \n"
      "   vrshl.s32   q0, q0, q6         \n"
      "   vadd.i32    q0, q0, r6         \n"
      "   vmax.s32    q0, q0, q4         \n"
      "   vmin.s32    q0, q0, q5         \n"
      "   vstrb.32    q0, [r5], %[c]     \n"
      "   vand        q7, q1, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q1, q1, q7         \n"
      "   vrshl.s32   q1, q1, q6         \n"
      "   vadd.i32    q1, q1, r6         \n"
      "   vmax.s32    q1, q1, q4         \n"
      "   vmin.s32    q1, q1, q5         \n"
      "   vstrb.32    q1, [r5], %[c]     \n"
      "   vand        q7, q2, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q2, q2, q7         \n"
      "   vrshl.s32   q2, q2, q6         \n"
      "   vadd.i32    q2, q2, r6         \n"
      "   vmax.s32    q2, q2, q4         \n"
      "   vmin.s32    q2, q2, q5         \n"
      "   vstrb.32    q2, [r5], %[c]     \n"
      "   vand        q7, q3, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q3, q3, q7         \n"
      "   vrshl.s32   q3, q3, q6         \n"
      "   vadd.i32    q3, q3, r6         \n"
      "   vmax.s32    q3, q3, q4         \n"
      "   vmin.s32    q3, q3, q5         \n"
      "   vstrb.32    q3, [r5], %[c]     \n"
      "   add         r8, r8, #4         \n"
      "   add         r10, r10, #4       \n"
      "   add         r11, r11, #4       \n"
      "   add         r12, r12, #4       \n"
      "   ldr         r6, [r9, #48]      \n"
      "   subs        r6, r6, #1         \n"
      "   str         r6, [r9, #48]      \n"
      "   bne         3b                 \n"
      :
      : "r"(a_r), [c] "n"(kCin)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10", "r11", "r12", "r14", "q0", "q1",
        "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
}

// Any four output pixels of a 3x3 depthwise convolution (the ones pixel_quad_mve does not take:
// windows over the left or right padding, a row's last pixels), four channels at a time as
// pixel_quad_mve computes them, each pixel's nine taps read through its own input pointers
// (the padding row where a tap falls outside the input), which the loads advance by four
// channels and the table keeps for the next group.
struct QuadTable {
  const int8_t* taps[9][4];  // per tap, the four pixels' input at channel 0
  int8_t* outs[4];
  const int8_t* wt;
  int32_t cout;
  const GroupQuant* quant;
  int32_t out_off, act_min, act_max, groups;
};

// Registers: r9 the table, r8 the weights, r10 cout, r11 the GroupQuant, lr the groups left;
// r0 (weights), r1-r4 (the pixels), r5 (table row), r6 (scalars) are low for widening loads.
void pixel_table_mve(QuadTable& t) {
  register QuadTable* t_r asm("r9") = &t;
  __asm volatile(
      "   ldr         r8, [r9, #160]     \n"
      "   ldr         r10, [r9, #164]    \n"
      "   ldr         r11, [r9, #168]    \n"
      "   ldr         lr, [r9, #184]     \n"
      "3:                                \n"
      "   vldrw.32    q0, [r11]          \n"
      "   vmov        q1, q0             \n"
      "   vmov        q2, q0             \n"
      "   vmov        q3, q0             \n"
      "   mov         r0, r8             \n"
      "   mov         r5, r9             \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vldrb.s32   q4, [r0]           \n"
      "   add         r0, r0, r10        \n"
      "   vldrb.s32   q5, [r1], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q0, q0, q5         \n"
      "   vldrb.s32   q5, [r2], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q1, q1, q5         \n"
      "   vldrb.s32   q5, [r3], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q2, q2, q5         \n"
      "   vldrb.s32   q5, [r4], #4       \n"
      "   vmul.i32    q5, q5, q4         \n"
      "   vadd.i32    q3, q3, q5         \n"
      "   stm         r5!, {r1, r2, r3, r4} \n"
      "   vldrw.32    q4, [r11, #16]     \n"  // mult
      "   vldrw.32    q5, [r11, #32]     \n"  // left
      "   vshl.s32    q0, q0, q5         \n"
      "   vshl.s32    q1, q1, q5         \n"
      "   vshl.s32    q2, q2, q5         \n"
      "   vshl.s32    q3, q3, q5         \n"
      "   vqrdmulh.s32 q0, q0, q4        \n"
      "   vqrdmulh.s32 q1, q1, q4        \n"
      "   vqrdmulh.s32 q2, q2, q4        \n"
      "   vqrdmulh.s32 q3, q3, q4        \n"
      "   vldrw.32    q6, [r11, #48]     \n"  // right
      "   add         r11, r11, #64      \n"
      "   ldr         r6, [r9, #176]     \n"
      "   vdup.32     q4, r6             \n"  // activation min
      "   ldr         r6, [r9, #180]     \n"
      "   vdup.32     q5, r6             \n"  // activation max
      "   ldr         r6, [r9, #172]     \n"  // output offset
      "   ldm         r5, {r1, r2, r3, r4} \n"
      "   vand        q7, q0, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q0, q0, q7         \n"
      "   vrshl.s32   q0, q0, q6         \n"
      "   vadd.i32    q0, q0, r6         \n"
      "   vmax.s32    q0, q0, q4         \n"
      "   vmin.s32    q0, q0, q5         \n"
      "   vstrb.32    q0, [r1], #4      \n"
      "   vand        q7, q1, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q1, q1, q7         \n"
      "   vrshl.s32   q1, q1, q6         \n"
      "   vadd.i32    q1, q1, r6         \n"
      "   vmax.s32    q1, q1, q4         \n"
      "   vmin.s32    q1, q1, q5         \n"
      "   vstrb.32    q1, [r2], #4      \n"
      "   vand        q7, q2, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q2, q2, q7         \n"
      "   vrshl.s32   q2, q2, q6         \n"
      "   vadd.i32    q2, q2, r6         \n"
      "   vmax.s32    q2, q2, q4         \n"
      "   vmin.s32    q2, q2, q5         \n"
      "   vstrb.32    q2, [r3], #4      \n"
      "   vand        q7, q3, q6         \n"
      "   vshr.s32    q7, q7, #31        \n"
      "   vqadd.s32   q3, q3, q7         \n"
      "   vrshl.s32   q3, q3, q6         \n"
      "   vadd.i32    q3, q3, r6         \n"
      "   vmax.s32    q3, q3, q4         \n"
      "   vmin.s32    q3, q3, q5         \n"
      "   vstrb.32    q3, [r4], #4      \n"
      "   stm         r5, {r1, r2, r3, r4} \n"
      "   add         r8, r8, #4         \n"
      "   subs        lr, lr, #1         \n"
      "   bne         3b                 \n"
      :
      : "r"(t_r)
      : "r0", "r1", "r2", "r3", "r4", "r5", "r6", "r8", "r10", "r11", "r14", "q0", "q1", "q2", "q3",
        "q4", "q5", "q6", "q7", "memory", "cc");
}
static_assert(offsetof(QuadTable, wt) == 160 && offsetof(QuadTable, quant) == 168 &&
                  offsetof(QuadTable, out_off) == 172 && offsetof(QuadTable, groups) == 184,
              "pixel_table_mve's offsets");
static_assert(offsetof(QuadArgs, quant) == 32 && offsetof(QuadArgs, groups) == 48,
              "pixel_quad_mve's offsets");

// Output pixel (oy, ox) as entry k of the table: its taps' inputs (the padding row outside).
void table_pixel(QuadTable& t, int32_t k, const int8_t* in_b, int8_t* out, int32_t oy, int32_t ox,
                 const DwMve& d) {
  const ConvParams& p = *d.p;
  const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
  const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
  for (int32_t ky = 0; ky < 3; ++ky) {
    const int32_t iy = y0 + ky * p.win.dilation[0];
    const bool row_in = iy >= 0 && iy < p.h;
    const int8_t* row = in_b + static_cast<int64_t>(iy) * p.w * p.cin;
    for (int32_t kx = 0; kx < 3; ++kx) {
      const int32_t ix = x0 + kx * p.win.dilation[1];
      t.taps[ky * 3 + kx][k] = row_in && ix >= 0 && ix < p.w ? row + ix * p.cin : d.pad_row;
    }
  }
  t.outs[k] = out;
}

// Runs the table's four pixels.
void flush_table(QuadTable& t, const DwMve& d) {
  t.quant = d.quant[0], t.groups = d.p->cout / 4;
  pixel_table_mve(t);
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

void depthwise_mve(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& p,
                   void* scratch) {
  BlockQuant* quant = static_cast<BlockQuant*>(scratch);
  int8_t* pad_row =
      static_cast<int8_t*>(scratch) + align_scratch((p.cout + 7) / 8 * sizeof(BlockQuant));
  prepare_mve(wt, p, quant, pad_row);
  const DwMve d{&p, quant, pad_row};
  const int32_t reach = (p.kw - 1) * p.win.dilation[1];
  const int32_t step = p.win.stride[1] * p.cin;
  const bool quad = p.kh == 3 && p.kw == 3 && p.cout % 4 == 0;  // pixel_quad_mve's shapes
  void (*quad_fn)(QuadArgs&) = pixel_quad_mve;
  if (p.win.dilation[1] == 1) {
    quad_fn = p.cin == 8    ? pixel_quad_imm_mve<8>
              : p.cin == 16 ? pixel_quad_imm_mve<16>
              : p.cin == 32 ? pixel_quad_imm_mve<32>
              : p.cin == 64 ? pixel_quad_imm_mve<64>
                            : pixel_quad_mve;
  }
  QuadArgs qa{{},        wt,        step,     p.win.dilation[1] * p.cin,
              p.cout,    nullptr,   quant[0], p.out_off,
              p.act_min, p.act_max, 0};
  QuadTable table{};
  table.wt = wt, table.cout = p.cout, table.out_off = p.out_off;
  table.act_min = p.act_min, table.act_max = p.act_max;
  int32_t pending = 0;              // pixels in the table
  int32_t pending_at[4][2];         // their (oy, ox)
  const int8_t* rows[kMaxTaps];     // each kernel row's input row (or the padding row)
  const int8_t* shifted[kMaxTaps];  // the same, at a pixel's window start
  for (int32_t b = 0; b < p.n; ++b) {
    const int8_t* in_b = in + static_cast<int64_t>(b) * p.h * p.w * p.cin;
    for (int32_t oy = 0; oy < p.oh; ++oy) {
      const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
      for (int32_t ky = 0; ky < p.kh; ++ky) {
        const int32_t iy = y0 + ky * p.win.dilation[0];
        rows[ky] = iy < 0 || iy >= p.h ? pad_row
                                       : in + ((static_cast<int64_t>(b) * p.h + iy) * p.w) * p.cin;
      }
      for (int32_t ox = 0; ox < p.ow;) {
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        if (quad && ox + 4 <= p.ow && x0 >= 0 && x0 + 3 * p.win.stride[1] + reach < p.w) {
          for (int32_t ky = 0; ky < 3; ++ky) qa.rows[ky] = rows[ky] + x0 * p.cin;
          qa.out = out, qa.quant = quant[0], qa.groups = p.cout / 4;
          quad_fn(qa);
          ox += 4, out += 4 * p.cout;
        } else if (quad) {
          pending_at[pending][0] = oy, pending_at[pending][1] = ox;
          table_pixel(table, pending++, in_b, out, oy, ox, d);
          if (pending == 4) flush_table(table, d), pending = 0;
          ++ox, out += p.cout;
        } else if (ox + 2 <= p.ow && x0 >= 0 && x0 + p.win.stride[1] + reach < p.w) {
          for (int32_t ky = 0; ky < p.kh; ++ky) shifted[ky] = rows[ky] + x0 * p.cin;
          pixel_pair_mve(shifted, wt, out, d, step);
          ox += 2, out += 2 * p.cout;
        } else {
          pixel_mve(rows, wt, out, d, x0);
          ++ox, out += p.cout;
        }
      }
    }
    // A batch's last one to three table pixels: one at a time costs less than a table of four
    // that repeats them.
    for (int32_t k = 0; k < pending; ++k) {
      const int32_t y0 = pending_at[k][0] * p.win.stride[0] - p.win.padding[0];
      for (int32_t ky = 0; ky < p.kh; ++ky) {
        const int32_t iy = y0 + ky * p.win.dilation[0];
        rows[ky] = iy < 0 || iy >= p.h ? pad_row : in_b + static_cast<int64_t>(iy) * p.w * p.cin;
      }
      pixel_mve(rows, wt, table.outs[k], d, pending_at[k][1] * p.win.stride[1] - p.win.padding[1]);
    }
    pending = 0;
  }
}
#endif

Error quantized_depthwise_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  PTERON_TRY(check_args(kOp, args, "TTtLLLIIITTIItT"));
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
    const size_t bytes = quantized_depthwise_conv2d_scratch_bytes(p.cout, p.w);
    if (void* scratch = kernel_scratch(ctx, *args[13], bytes)) {
      depthwise_mve(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p, scratch);
      return Error::Ok;
    }
  }
#endif
  depthwise_scalar(in.data<int8_t>(), wt.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_depthwise_conv2d_nhwc.out", quantized_depthwise_conv2d_nhwc_out);

}  // namespace pteron::cortex_m
