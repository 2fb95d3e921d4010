// quantized_depthwise_conv2d_nhwc (depth multiplier 1) on the DSP extension. An output pixel's
// taps are taken two at a time for four channels: one word of each tap's four input bytes,
// packed so each 16-bit half holds the same channel of both taps (PKHBT/PKHTB), extended to
// int16 with the input offset added (SXTAB16; padding taps read a row of -input_offset, so they
// add 0) and multiplied by the pair's weights, extended once per call into scratch: SMLAD, one
// per channel and pair. 13 instructions per 8 MACs; then each channel's requantisation.
#include "kernels/cortex_m/dsp/dsp_kernels.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/dsp.h"

#if PTERON_CORTEX_M_DSP
namespace pteron::cortex_m {
namespace {

using namespace dsp;

// What pairs_dsp's loop reads and leaves.
struct Pairs {
  const int8_t* const* taps;  // the pixel's tap pointers, two a pair
  const int32_t* weights;     // the channel group's weights: per pair four words
  int32_t pairs;              // >= 1
  int32_t channel;            // byte offset of the group's first channel in a pixel
  int32_t offset2;            // the input offset in both halves
  int32_t acc[4];             // in: the start (bias); out: the four channels' sums
  // For the variants that requantise (RequantRecord: every channel's fast_requant_ok()):
  const RequantRecord* quant;  // the group's four records
  int8_t* out;                 // the four channels' outputs
  int32_t out_off, act_min, act_max;
};

// The loop: per pair the two taps' words of four channels, packed so each half holds one
// channel of both taps (PKHBT/PKHTB), extended with the input offset added (SXTAB16) and
// multiplied by the pair's weights (SMLAD): 17 instructions per 8 MACs. The struct is r0 on
// entry and on the stack during the loop.
#define PTERON_DW_PAIRS_LOOP                           \
  "   push        {r0}                             \n" \
  "   ldrd        r4, r5, [r0]                     \n" \
  "   ldrd        r6, r7, [r0, #8]                 \n" \
  "   ldr         r8, [r0, #16]                    \n" \
  "   ldrd        r2, r3, [r0, #28]                \n" \
  "   ldrd        r0, r1, [r0, #20]                \n" \
  "1:                                              \n" \
  "   ldm         r4!, {r10, r11}                  \n" \
  "   ldr         r10, [r10, r7]                   \n" \
  "   ldr         r11, [r11, r7]                   \n" \
  "   pkhbt       r12, r10, r11, lsl #16           \n" \
  "   pkhtb       r11, r11, r10, asr #16           \n" \
  "   ldrd        r10, lr, [r5], #8                \n" \
  "   sxtab16     r9, r8, r12                      \n" \
  "   smlad       r0, r9, r10, r0                  \n" \
  "   sxtab16     r9, r8, r12, ror #8              \n" \
  "   smlad       r1, r9, lr, r1                   \n" \
  "   ldrd        r10, lr, [r5], #8                \n" \
  "   sxtab16     r9, r8, r11                      \n" \
  "   smlad       r2, r9, r10, r2                  \n" \
  "   sxtab16     r9, r8, r11, ror #8              \n" \
  "   smlad       r3, r9, lr, r3                   \n" \
  "   subs        r6, r6, #1                       \n" \
  "   bne         1b                               \n"
#define PTERON_DW_OPERANDS                                                                      \
  : "+r"(d_r)                                                                              \
  :                                                                                        \
  : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14", "memory", \
    "cc"

// The sums of channels c..c+3 over the taps' pairs, left in d.acc.
void pairs_dsp(Pairs& d) {
  register Pairs* d_r asm("r0") = &d;
  __asm volatile(PTERON_DW_PAIRS_LOOP
                 "   pop         {r6}                             \n"
                 "   strd        r0, r1, [r6, #20]                \n"
                 "   strd        r2, r3, [r6, #28]                \n"
                 "   mov         r0, r6                           \n" PTERON_DW_OPERANDS);
}

// The same sums requantised with the group's records (fast_requant's arithmetic) and stored as
// the four channels' int8 outputs: 9 instructions a channel, 15 when the activation range is not
// all of int8.
template <bool kFullRange>
void pairs_requant_dsp(Pairs& d) {
  register Pairs* d_r asm("r0") = &d;
#define PTERON_DW_REQUANT(acc)                         \
  "   ldm         r4!, {r8, r9, r10}               \n" \
  "   qadd        " #acc ", " #acc ", " #acc           \
  "     \n"                                            \
  "   smmulr      " #acc ", " #acc                     \
  ", r8           \n"                                  \
  "   add         " #acc ", " #acc ", " #acc           \
  ", asr #31 \n"                                       \
  "   qadd        " #acc ", " #acc                     \
  ", r10          \n"                                  \
  "   asr         " #acc ", " #acc                     \
  ", r9           \n"                                  \
  "   add         " #acc ", " #acc                     \
  ", r7           \n"                                  \
  "   ssat        " #acc ", #8, " #acc "           \n"
#define PTERON_DW_CLAMP(acc)                           \
  "   cmp         " #acc                               \
  ", r11                    \n"                        \
  "   it          lt                               \n" \
  "   movlt       " #acc                               \
  ", r11                    \n"                        \
  "   cmp         " #acc                               \
  ", r12                    \n"                        \
  "   it          gt                               \n" \
  "   movgt       " #acc ", r12                    \n"
#define PTERON_DW_STORE(acc) "   strb        " #acc ", [r5], #1               \n"
#define PTERON_DW_FINISH_SETUP                         \
  "   pop         {r6}                             \n" \
  "   push        {r6}                             \n" \
  "   ldr         r4, [r6, #36]                    \n" \
  "   ldr         r5, [r6, #40]                    \n" \
  "   ldr         r7, [r6, #44]                    \n" \
  "   ldrd        r11, r12, [r6, #48]              \n"
  if (kFullRange) {
    __asm volatile(
        PTERON_DW_PAIRS_LOOP PTERON_DW_FINISH_SETUP PTERON_DW_REQUANT(r0) PTERON_DW_STORE(r0)
            PTERON_DW_REQUANT(r1) PTERON_DW_STORE(r1) PTERON_DW_REQUANT(r2) PTERON_DW_STORE(r2)
                PTERON_DW_REQUANT(r3) PTERON_DW_STORE(
                    r3) "   pop         {r0}                             \n" PTERON_DW_OPERANDS);
  } else {
    __asm volatile(
        PTERON_DW_PAIRS_LOOP PTERON_DW_FINISH_SETUP PTERON_DW_REQUANT(r0) PTERON_DW_CLAMP(
            r0) PTERON_DW_STORE(r0) PTERON_DW_REQUANT(r1) PTERON_DW_CLAMP(r1) PTERON_DW_STORE(r1)
            PTERON_DW_REQUANT(r2) PTERON_DW_CLAMP(r2) PTERON_DW_STORE(r2) PTERON_DW_REQUANT(r3)
                PTERON_DW_CLAMP(r3) PTERON_DW_STORE(
                    r3) "   pop         {r0}                             \n" PTERON_DW_OPERANDS);
  }
#undef PTERON_DW_REQUANT
#undef PTERON_DW_CLAMP
#undef PTERON_DW_STORE
#undef PTERON_DW_FINISH_SETUP
}
#undef PTERON_DW_PAIRS_LOOP
#undef PTERON_DW_OPERANDS

inline int8_t finish(int32_t acc, int32_t c, const ConvParams& p) {
  const int32_t r = requantize(acc, p.mult[c], p.shift[c]) + p.out_off;
  return static_cast<int8_t>(clamp_i32(r, p.act_min, p.act_max));
}

}  // namespace

void depthwise_dsp(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& params,
                   void* scratch) {
  const ConvParams p = params;
  const int32_t taps = p.kh * p.kw, pairs = (taps + 1) / 2, c4 = p.cout / 4 * 4;
  const int32_t offset2 =
      (p.in_off & 0xffff) | static_cast<int32_t>(static_cast<uint32_t>(p.in_off) << 16);
  // Per group of four channels, per pair of taps, per channel, the int16 pair [w(first tap),
  // w(second tap)], in the order pairs_dsp reads them (the last group's missing channels 0).
  // The odd last tap pairs with a weight of 0 (and reads the padding row).
  auto* weights = static_cast<int32_t*>(scratch);
  auto* pad =
      reinterpret_cast<int8_t*>(weights) + align_scratch(static_cast<size_t>(pairs) * 4 * p.cout);
  auto* tap = reinterpret_cast<const int8_t**>(pad + align_scratch(p.cout));
  auto* quant = reinterpret_cast<RequantRecord*>(
      reinterpret_cast<uint8_t*>(tap) +
      align_scratch(static_cast<size_t>(pairs) * 2 * sizeof(void*)));
  // A group of four channels requantises in the loop's assembly when all four can.
  auto* group_fast = reinterpret_cast<uint8_t*>(quant + p.cout);
  for (int32_t c = 0; c < p.cout; ++c) quant[c] = RequantRecord(p.mult[c], p.shift[c]);
  for (int32_t c = 0; c < c4; c += 4) {
    group_fast[c / 4] =
        quant[c].fast() && quant[c + 1].fast() && quant[c + 2].fast() && quant[c + 3].fast();
  }
  const bool full_range = p.act_min == kInt8Min && p.act_max == kInt8Max;
  for (int32_t c = 0; c < c4; ++c) {
    for (int32_t t = 0; t < pairs; ++t) {
      const int32_t w0 = wt[(2 * t) * p.cout + c];
      const int32_t w1 = 2 * t + 1 < taps ? wt[(2 * t + 1) * p.cout + c] : 0;
      weights[(c / 4 * pairs + t) * 4 + c % 4] =
          (w0 & 0xffff) | static_cast<int32_t>(static_cast<uint32_t>(w1) << 16);
    }
  }
  for (int32_t c = 0; c < p.cout; ++c) pad[c] = static_cast<int8_t>(-p.in_off);
  tap[2 * pairs - 1] = pad;
  for (int32_t b = 0; b < p.n; ++b) {
    const int8_t* in_b = in + static_cast<int64_t>(b) * p.h * p.w * p.cin;
    for (int32_t oy = 0; oy < p.oh; ++oy) {
      const int32_t y0 = oy * p.win.stride[0] - p.win.padding[0];
      for (int32_t ox = 0; ox < p.ow; ++ox, out += p.cout) {
        const int32_t x0 = ox * p.win.stride[1] - p.win.padding[1];
        for (int32_t ky = 0, t = 0; ky < p.kh; ++ky) {
          const int32_t iy = y0 + ky * p.win.dilation[0];
          const bool row_inside = iy >= 0 && iy < p.h;
          const int8_t* row = in_b + static_cast<int64_t>(iy) * p.w * p.cin;
          for (int32_t kx = 0; kx < p.kw; ++kx, ++t) {
            const int32_t ix = x0 + kx * p.win.dilation[1];
            tap[t] = row_inside && ix >= 0 && ix < p.w ? row + ix * p.cin : pad;
          }
        }
        for (int32_t c = 0; c < c4; c += 4) {
          Pairs d{tap,     weights + c * pairs, pairs,     c,        offset2, {}, quant + c,
                  out + c, p.out_off,           p.act_min, p.act_max};
          for (int32_t k = 0; k < 4; ++k) d.acc[k] = p.bias ? p.bias[c + k] : 0;
          if (!group_fast[c / 4]) {
            pairs_dsp(d);
            for (int32_t k = 0; k < 4; ++k) out[c + k] = finish(d.acc[k], c + k, p);
          } else if (full_range) {
            pairs_requant_dsp<true>(d);
          } else {
            pairs_requant_dsp<false>(d);
          }
        }
        for (int32_t c = c4; c < p.cout; ++c) {  // the last one to three channels
          int32_t acc = p.bias ? p.bias[c] : 0;
          for (int32_t t = 0; t < taps; ++t) acc += (tap[t][c] + p.in_off) * wt[t * p.cout + c];
          out[c] = finish(acc, c, p);
        }
      }
    }
  }
}

}  // namespace pteron::cortex_m
#endif
