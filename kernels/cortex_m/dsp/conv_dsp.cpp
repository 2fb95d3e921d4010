// quantized_conv2d_nhwc on the DSP extension: arm_convolve_s8's DSP form, four output pixels a
// block instead of two. Each block's four windows (im2col columns of K = kh * kw * cin bytes)
// are extended once to int16 with the input offset added (SXTAB16: padding becomes 0) and stored
// interleaved, four bytes of K at a time: the four pixels' [x0, x2] words, then their [x1, x3]
// words. Per output channel one loop then reads four filter bytes, extends them twice (SXTB16,
// SXTB16 ROR #8) and feeds each to the four columns' words (LDM, four SMLAD): 13 instructions per
// 16 MACs, the filter read once per block of four pixels.
#include "kernels/cortex_m/dsp/dsp_kernels.h"
#include "kernels/cortex_m/scratch.h"
#include "kernels/cortex_m/util/dsp.h"

#if PTERON_CORTEX_M_DSP
namespace pteron::cortex_m {
namespace {

using namespace dsp;

// One group of the dot loops below: four filter bytes (one word, extended twice) times the
// four pixels' interleaved column words, accumulated in r0-r3 (r4: columns, r5: filter).
#define PTERON_MAC4_GROUP                              \
  "   ldr         r8, [r5], #4                     \n" \
  "   ldm         r4!, {r9, r10, r11, r12}         \n" \
  "   sxtb16      lr, r8                           \n" \
  "   smlad       r0, r9, lr, r0                   \n" \
  "   smlad       r1, r10, lr, r1                  \n" \
  "   smlad       r2, r11, lr, r2                  \n" \
  "   smlad       r3, r12, lr, r3                  \n" \
  "   ldm         r4!, {r9, r10, r11, r12}         \n" \
  "   sxtb16      lr, r8, ror #8                   \n" \
  "   smlad       r0, r9, lr, r0                   \n" \
  "   smlad       r1, r10, lr, r1                  \n" \
  "   smlad       r2, r11, lr, r2                  \n" \
  "   smlad       r3, r12, lr, r3                  \n"

// What dot4_dsp's loop reads and leaves.
struct Dot4 {
  const int32_t* columns;  // the block's interleaved columns: `groups` x 8 words
  const int8_t* filter;    // the output channel's filter (K bytes, read in words)
  int32_t groups;          // >= 1: words of the filter
  int32_t acc[4];          // in: the start (bias); out: the four pixels' sums
};

// acc[p] += sum over the groups' words of the filter times column p, for the four pixels.
void dot4_dsp(Dot4& d) {
  register Dot4* d_r asm("r0") = &d;
  __asm volatile(
      "   push        {r0}                             \n"
      "   ldrd        r4, r5, [r0]                     \n"  // columns, filter
      "   ldr         r6, [r0, #8]                     \n"  // groups
      "   ldrd        r2, r3, [r0, #20]                \n"
      "   ldrd        r0, r1, [r0, #12]                \n"  // the accumulators
      "   lsrs        r7, r6, #1                       \n"  // pairs of groups
      "   beq         2f                               \n"
      "1:                                              \n" PTERON_MAC4_GROUP PTERON_MAC4_GROUP
      "   subs        r7, r7, #1                       \n"
      "   bne         1b                               \n"
      "2:                                              \n"
      "   lsls        r6, r6, #31                      \n"  // an odd group left?
      "   beq         3f                               \n" PTERON_MAC4_GROUP
      "3:                                              \n"
      "   pop         {r6}                             \n"
      "   strd        r0, r1, [r6, #12]                \n"
      "   strd        r2, r3, [r6, #20]                \n"
      "   mov         r0, r6                           \n"
      : "+r"(d_r)
      :
      : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14", "memory",
        "cc");
}

// What channels_dsp's loop reads and advances: one block of four pixels, every output channel.
struct Channels {
  const int32_t* columns;      // 0: the block's interleaved columns
  const int8_t* filter;        // 4: the next channel's filter
  int32_t groups;              // 8: words of a filter (>= 1)
  int32_t channels;            // 12: channels left (>= 1)
  const int32_t* bias;         // 16: the next channel's bias
  const RequantRecord* quant;  // 20: the next channel's record (all fast())
  int8_t* out;                 // 24: the next channel's output of the first pixel
  int32_t cout;                // 28: bytes from one pixel's outputs to the next's
  int32_t out_off;             // 32
  int32_t act_min, act_max;    // 36, 40
  int32_t filter_fix;          // 44: 4 * groups - K, the bytes read past each filter
  int32_t bias_step;           // 48: 4, or 0 with bias pointing at a zero
};

// Every output channel of a block of four pixels: the accumulators start at the bias, the dot
// loop (two groups a step, 26 instructions per 32 MACs), then the four sums requantised with
// the channel's record (PTERON_DSP_REQUANT) and stored at the four pixels' outputs. About 45
// instructions a channel besides the loop (55 with an activation range that is not all of int8).
template <bool kFullRange>
void channels_dsp(Channels& c) {
  register Channels* c_r asm("r0") = &c;
#define PTERON_CH_BODY(finish)                                                             \
  "   push        {r0}                             \n"                                     \
  "1:                                              \n"                                     \
  "   ldr         r6, [sp]                         \n"                                     \
  "   ldrd        r4, r5, [r6]                     \n"                                     \
  "   ldr         r7, [r6, #16]                    \n"                                     \
  "   ldr         r8, [r6, #48]                    \n"                                     \
  "   ldr         r0, [r7]                         \n"                                     \
  "   add         r7, r7, r8                       \n"                                     \
  "   str         r7, [r6, #16]                    \n"                                     \
  "   mov         r1, r0                           \n"                                     \
  "   mov         r2, r0                           \n"                                     \
  "   mov         r3, r0                           \n"                                     \
  "   ldr         r7, [r6, #8]                     \n"                                     \
  "   lsrs        r7, r7, #1                       \n"                                     \
  "   bcc         3f                               \n" PTERON_MAC4_GROUP                   \
  "3:                                              \n"                                     \
  "   cbz         r7, 5f                           \n"                                     \
  "4:                                              \n" PTERON_MAC4_GROUP PTERON_MAC4_GROUP \
  "   subs        r7, r7, #1                       \n"                                     \
  "   bne         4b                               \n"                                     \
  "5:                                              \n"                                     \
  "   ldr         r6, [sp]                         \n"                                     \
  "   ldr         r8, [r6, #44]                    \n"                                     \
  "   sub         r5, r5, r8                       \n"                                     \
  "   str         r5, [r6, #4]                     \n"                                     \
  "   ldr         r4, [r6, #20]                    \n"                                     \
  "   ldm         r4!, {r8, r9, r10}               \n"                                     \
  "   str         r4, [r6, #20]                    \n"                                     \
  "   ldr         r11, [r6, #32]                   \n" finish                              \
  "   ldrd        r4, r5, [r6, #24]                \n"                                     \
  "   strb        r0, [r4]                         \n"                                     \
  "   add         r7, r4, r5                       \n"                                     \
  "   strb        r1, [r7]                         \n"                                     \
  "   add         r7, r7, r5                       \n"                                     \
  "   strb        r2, [r7]                         \n"                                     \
  "   add         r7, r7, r5                       \n"                                     \
  "   strb        r3, [r7]                         \n"                                     \
  "   adds        r4, r4, #1                       \n"                                     \
  "   str         r4, [r6, #24]                    \n"                                     \
  "   ldr         r7, [r6, #12]                    \n"                                     \
  "   subs        r7, r7, #1                       \n"                                     \
  "   str         r7, [r6, #12]                    \n"                                     \
  "   bne         1b                               \n"                                     \
  "   pop         {r0}                             \n"
#define PTERON_CH_REQUANT(acc) PTERON_DSP_REQUANT(acc, "r8", "r9", "r10", "r11")
#define PTERON_CH_CLAMP(acc) PTERON_DSP_CLAMP(acc, "r12", "lr")
  if (kFullRange) {
    __asm volatile(PTERON_CH_BODY(PTERON_CH_REQUANT("r0") PTERON_CH_REQUANT("r1")
                                      PTERON_CH_REQUANT("r2") PTERON_CH_REQUANT("r3"))
                   : "+r"(c_r)
                   :
                   : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12",
                     "r14", "memory", "cc");
  } else {
    __asm volatile(
        PTERON_CH_BODY("   ldrd        r12, lr, [r6, #36]               \n" PTERON_CH_REQUANT("r0")
                           PTERON_CH_CLAMP("r0") PTERON_CH_REQUANT("r1") PTERON_CH_CLAMP("r1")
                               PTERON_CH_REQUANT("r2") PTERON_CH_CLAMP("r2") PTERON_CH_REQUANT("r3")
                                   PTERON_CH_CLAMP("r3"))
        : "+r"(c_r)
        :
        : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14",
          "memory", "cc");
  }
#undef PTERON_CH_BODY
#undef PTERON_CH_REQUANT
#undef PTERON_MAC4_GROUP
#undef PTERON_CH_CLAMP
}

// Pixel `p`'s (0..3) bytes [4j, 4j + 4) of its window, as its two words in group j.
inline void put_word(int32_t* columns, int32_t j, int32_t p, int32_t x, int32_t offset2) {
  columns[8 * j + p] = sxtab16(offset2, x);
  columns[8 * j + 4 + p] = sxtab16_ror8(offset2, x);
}

// Window bytes [4 * first, 4 * (first + n)) of pixel p from `src` (n words), or zeros (padding:
// -input_offset + input_offset) when src is nullptr.
void put_words(int32_t* columns, int32_t first, int32_t n, int32_t p, const int8_t* src,
               int32_t offset2) {
  if (src == nullptr) {
    for (int32_t j = first; j < first + n; ++j) columns[8 * j + p] = columns[8 * j + 4 + p] = 0;
    return;
  }
  for (int32_t j = first; j < first + n; ++j, src += 4)
    put_word(columns, j, p, load_word(src), offset2);
}

// Pixel p's window (output pixel oy, ox) into the columns: straight from the input rows when
// every tap is whole words (cin a multiple of 4), else gathered into `bytes` first (K4 bytes:
// -input_offset in the padding and past K, so those halves are 0).
void window(const int8_t* in_b, int32_t* columns, int8_t* bytes, int32_t oy, int32_t ox, int32_t p,
            int32_t groups, const ConvParams& c, int32_t offset2) {
  const int32_t y0 = oy * c.win.stride[0] - c.win.padding[0];
  const int32_t x0 = ox * c.win.stride[1] - c.win.padding[1];
  const bool words = c.cin % 4 == 0;
  const auto pad = static_cast<int8_t>(-c.in_off);
  int32_t j = 0;
  int8_t* b = bytes;
  for (int32_t ky = 0; ky < c.kh; ++ky) {
    const int32_t iy = y0 + ky * c.win.dilation[0];
    const bool row_inside = iy >= 0 && iy < c.h;
    const int8_t* row = in_b + static_cast<int64_t>(iy) * c.w * c.cin;
    for (int32_t kx = 0; kx < c.kw; ++kx) {
      const int32_t ix = x0 + kx * c.win.dilation[1];
      const int8_t* src = row_inside && ix >= 0 && ix < c.w ? row + ix * c.cin : nullptr;
      if (words) {
        put_words(columns, j, c.cin / 4, p, src, offset2);
        j += c.cin / 4;
      } else {
        for (int32_t i = 0; i < c.cin; ++i) *b++ = src ? src[i] : pad;
      }
    }
  }
  if (!words) {
    while (b < bytes + 4 * groups) *b++ = pad;
    put_words(columns, 0, groups, p, bytes, offset2);
  }
}

}  // namespace

void conv_dsp(const int8_t* in, const int8_t* wt, int8_t* out, const ConvParams& params,
              void* scratch) {
  const ConvParams c = params;
  const int32_t k = c.kh * c.kw * c.cin, groups = (k + 3) / 4;
  const int32_t offset2 =
      (c.in_off & 0xffff) | static_cast<int32_t>(static_cast<uint32_t>(c.in_off) << 16);
  auto* columns = static_cast<int32_t*>(scratch);
  auto* quant = reinterpret_cast<RequantRecord*>(columns + 8 * groups);
  auto* bytes = reinterpret_cast<int8_t*>(quant + c.cout);
  bool fast = true;
  for (int32_t oc = 0; oc < c.cout; ++oc) {
    quant[oc] = RequantRecord(c.mult[oc], c.shift[oc]);
    fast = fast && quant[oc].fast();
  }
  const bool full_range = c.act_min == kInt8Min && c.act_max == kInt8Max;
  static const int32_t kZero = 0;
  const int32_t pixels = c.oh * c.ow;
  // Past K the columns are 0, so reading a filter's last word into the next filter adds
  // nothing; the last filter's last partial word would read past the weights: that channel
  // goes through dot4_dsp with its last group added from its bytes.
  const int32_t last_full = k % 4 == 0 ? groups : groups - 1;
  const int32_t asm_channels = k % 4 == 0 ? c.cout : c.cout - 1;
  for (int32_t b = 0; b < c.n; ++b) {
    const int8_t* in_b = in + static_cast<int64_t>(b) * c.h * c.w * c.cin;
    for (int32_t i = 0; i < pixels; i += 4) {
      const int32_t count = pixels - i < 4 ? pixels - i : 4;
      for (int32_t p = 0; p < 4; ++p) {  // a partial block repeats its last pixel
        const int32_t q = i + (p < count ? p : count - 1);
        window(in_b, columns, bytes, q / c.ow, q % c.ow, p, groups, c, offset2);
      }
      int8_t* o = out + (static_cast<int64_t>(b) * pixels + i) * c.cout;
      int32_t oc = 0;
      if (fast && count == 4 && asm_channels > 0) {
        Channels ch{
            columns, wt,        groups,    asm_channels, c.bias ? c.bias : &kZero, quant,         o,
            c.cout,  c.out_off, c.act_min, c.act_max,    4 * groups - k,           c.bias ? 4 : 0};
        (full_range ? channels_dsp<true> : channels_dsp<false>)(ch);
        oc = asm_channels;
      }
      for (; oc < c.cout; ++oc) {
        const int32_t bias = c.bias ? c.bias[oc] : 0;
        Dot4 d{columns,
               wt + static_cast<int64_t>(oc) * k,
               oc + 1 < c.cout ? groups : last_full,
               {bias, bias, bias, bias}};
        if (d.groups > 0) dot4_dsp(d);
        if (d.groups < groups) {  // the last filter's partial word, from its bytes
          const int32_t j = groups - 1;
          const int8_t* f = wt + static_cast<int64_t>(oc) * k + 4 * j;
          const auto* h = reinterpret_cast<const int16_t*>(columns + 8 * j);
          for (int32_t p = 0; p < 4; ++p) {
            // halves: [x0, x2] at word p, [x1, x3] at word 4 + p
            const int16_t x[4] = {h[2 * p], h[8 + 2 * p], h[2 * p + 1], h[8 + 2 * p + 1]};
            for (int32_t t = 0; 4 * j + t < k; ++t) d.acc[p] += x[t] * f[t];
          }
        }
        for (int32_t p = 0; p < count; ++p) {
          const int32_t r = requantize(d.acc[p], c.mult[oc], c.shift[oc]) + c.out_off;
          o[p * c.cout + oc] = static_cast<int8_t>(clamp_i32(r, c.act_min, c.act_max));
        }
      }
    }
  }
}

}  // namespace pteron::cortex_m
#endif
