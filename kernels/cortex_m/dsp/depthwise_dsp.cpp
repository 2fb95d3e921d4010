// quantized_depthwise_conv2d_nhwc (depth multiplier 1) on the DSP extension. An output pixel's
// taps are taken two at a time for four channels: one word of each tap's four input bytes,
// packed so each 16-bit half holds the same channel of both taps (PKHBT/PKHTB), extended to
// int16 with the input offset added (SXTAB16; padding taps read a row of -input_offset, so they
// add 0) and multiplied by the pair's weights, extended once per call into scratch: SMLAD, one
// per channel and pair; then each channel's requantisation, in the same assembly when every
// channel's record can (RequantRecord::fast()).
#include "kernels/cortex_m/dsp/dsp_kernels.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/dsp.h"

#if PTERON_CORTEX_M_DSP
namespace pteron::cortex_m {
namespace {

using namespace dsp;

// A channel's requantisation record (RequantRecord's fields) and its bias, as groups_dsp reads
// them.
struct DwRecord {
  int32_t mult, right, half, bias;
};

// The loop over pairs of taps for channels c..c+3 of one pixel: per pair the two taps' words of
// four channels, packed so each half holds one channel of both taps (PKHBT/PKHTB), extended
// with the input offset added (SXTAB16) and multiplied by the pair's weights (SMLAD): 17
// instructions per 8 MACs. r4: tap pointers, r5: weights (advanced), r6: pairs (counted down),
// r7: the group's byte offset in a pixel, r8: the input offset in both halves; r0-r3 the sums.
#define PTERON_DW_PAIRS_LOOP                           \
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
  : "+r"(d_r)                                                                                \
  :                                                                                          \
  : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14", "memory", \
    "cc"

// What pairs_dsp reads and leaves: one group of four channels of one pixel.
struct Pairs {
  const int8_t* const* taps;  // 0: the pixel's tap pointers, two a pair
  const int32_t* weights;     // 4: the group's weights: per pair four words
  int32_t pairs;              // 8: >= 1
  int32_t channel;            // 12: byte offset of the group's first channel in a pixel
  int32_t offset2;            // 16: the input offset in both halves
  int32_t acc[4];             // 20: in: the start (bias); out: the four channels' sums
};

// The group's four sums, left in d.acc (for channels the assembly does not requantise).
void pairs_dsp(Pairs& d) {
  register Pairs* d_r asm("r0") = &d;
  __asm volatile(
      "   push        {r0}                             \n"
      "   ldrd        r4, r5, [r0]                     \n"
      "   ldrd        r6, r7, [r0, #8]                 \n"
      "   ldr         r8, [r0, #16]                    \n"
      "   ldrd        r2, r3, [r0, #28]                \n"
      "   ldrd        r0, r1, [r0, #20]                \n" PTERON_DW_PAIRS_LOOP
      "   pop         {r6}                             \n"
      "   strd        r0, r1, [r6, #20]                \n"
      "   strd        r2, r3, [r6, #28]                \n"
      "   mov         r0, r6                           \n" PTERON_DW_OPERANDS);
}

// What groups_dsp reads and advances: every group of four channels of one pixel.
struct Groups {
  const int8_t* const* taps;  // 0
  const int32_t* weights;     // 4: the first group's weights (the groups' follow each other)
  int32_t pairs;              // 8: >= 1
  int32_t groups;             // 12: >= 1, counted down
  int32_t offset2;            // 16
  const DwRecord* quant;      // 20: the next channel's record (every channel fast())
  int8_t* out;                // 24: the next channel's output
  int32_t out_off;            // 28
  int32_t act_min, act_max;   // 32, 36
};

// Every group of the pixel: the sums start at the channels' biases, the pairs loop, then each
// channel requantised with its record (PTERON_DSP_REQUANT) and stored. About 25 instructions a
// group besides the loop and 10 a channel (16 with an activation range not all of int8).
template <bool kFullRange>
void groups_dsp(Groups& g) {
  register Groups* d_r asm("r0") = &g;
#define PTERON_DW_CHANNEL(acc, clamp)                                      \
  "   ldm         r4, {r9, r10, r11}               \n"                     \
  "   adds        r4, r4, #16                      \n" PTERON_DSP_REQUANT( \
      acc, "r9", "r10", "r11", "r12") clamp "   strb        " acc ", [r5], #1                \n"
#define PTERON_DW_BODY(channels)                                            \
  "   push        {r0}                             \n"                      \
  "   ldr         r5, [r0, #4]                     \n"                      \
  "   movs        r7, #0                           \n"                      \
  "2:                                              \n"                      \
  "   ldr         r6, [sp]                         \n"                      \
  "   ldr         r4, [r6, #20]                    \n"                      \
  "   ldr         r0, [r4, #12]                    \n"                      \
  "   ldr         r1, [r4, #28]                    \n"                      \
  "   ldr         r2, [r4, #44]                    \n"                      \
  "   ldr         r3, [r4, #60]                    \n"                      \
  "   ldr         r4, [r6]                         \n"                      \
  "   ldr         r8, [r6, #16]                    \n"                      \
  "   ldr         r6, [r6, #8]                     \n" PTERON_DW_PAIRS_LOOP \
  "   ldr         r6, [sp]                         \n"                      \
  "   str         r5, [r6, #4]                     \n"                      \
  "   ldr         r4, [r6, #20]                    \n"                      \
  "   ldr         r5, [r6, #24]                    \n"                      \
  "   ldr         r12, [r6, #28]                   \n"                      \
  "   ldrd        r8, lr, [r6, #32]                \n" channels             \
  "   str         r4, [r6, #20]                    \n"                      \
  "   str         r5, [r6, #24]                    \n"                      \
  "   ldr         r5, [r6, #4]                     \n"                      \
  "   adds        r7, r7, #4                       \n"                      \
  "   ldr         r8, [r6, #12]                    \n"                      \
  "   subs        r8, r8, #1                       \n"                      \
  "   str         r8, [r6, #12]                    \n"                      \
  "   bne         2b                               \n"                      \
  "   pop         {r0}                             \n"
#define PTERON_DW_CLAMP PTERON_DSP_CLAMP("r0", "r8", "lr")
  if (kFullRange) {
    __asm volatile(PTERON_DW_BODY(PTERON_DW_CHANNEL("r0", "") PTERON_DW_CHANNEL(
        "r1", "") PTERON_DW_CHANNEL("r2", "") PTERON_DW_CHANNEL("r3", "")) PTERON_DW_OPERANDS);
  } else {
    __asm volatile(PTERON_DW_BODY(
        PTERON_DW_CHANNEL("r0", PTERON_DSP_CLAMP("r0", "r8", "lr"))
            PTERON_DW_CHANNEL("r1", PTERON_DSP_CLAMP("r1", "r8", "lr"))
                PTERON_DW_CHANNEL("r2", PTERON_DSP_CLAMP("r2", "r8", "lr")) PTERON_DW_CHANNEL(
                    "r3", PTERON_DSP_CLAMP("r3", "r8", "lr"))) PTERON_DW_OPERANDS);
  }
#undef PTERON_DW_CHANNEL
#undef PTERON_DW_BODY
#undef PTERON_DW_CLAMP
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
  // w(second tap)], in the order the loop reads them. The odd last tap pairs with a weight of 0
  // (and reads the padding row).
  auto* weights = static_cast<int32_t*>(scratch);
  auto* pad =
      reinterpret_cast<int8_t*>(weights) + align_scratch(static_cast<size_t>(pairs) * 4 * p.cout);
  auto* tap = reinterpret_cast<const int8_t**>(pad + align_scratch(p.cout));
  auto* quant =
      reinterpret_cast<DwRecord*>(reinterpret_cast<uint8_t*>(tap) +
                                  align_scratch(static_cast<size_t>(pairs) * 2 * sizeof(void*)));
  bool fast = true;  // every group requantises in groups_dsp
  for (int32_t c = 0; c < p.cout; ++c) {
    const RequantRecord r(p.mult[c], p.shift[c]);
    quant[c] = DwRecord{r.mult, r.right, r.half, p.bias ? p.bias[c] : 0};
    fast = fast && (c >= c4 || r.fast());
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
        if (fast && c4 > 0) {
          Groups g{tap,   weights, pairs,     c4 / 4,    offset2,
                   quant, out,     p.out_off, p.act_min, p.act_max};
          (full_range ? groups_dsp<true> : groups_dsp<false>)(g);
        } else {
          for (int32_t c = 0; c < c4; c += 4) {
            Pairs d{tap, weights + c * pairs, pairs, c, offset2, {}};
            for (int32_t k = 0; k < 4; ++k) d.acc[k] = quant[c + k].bias;
            pairs_dsp(d);
            for (int32_t k = 0; k < 4; ++k) out[c + k] = finish(d.acc[k], c + k, p);
          }
        }
        for (int32_t c = c4; c < p.cout; ++c) {  // the last one to three channels
          int32_t acc = quant[c].bias;
          for (int32_t t = 0; t < taps; ++t) acc += (tap[t][c] + p.in_off) * wt[t * p.cout + c];
          out[c] = finish(acc, c, p);
        }
      }
    }
  }
}

}  // namespace pteron::cortex_m
#endif
