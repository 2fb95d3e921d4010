// cortex_m::quantized_linear_packed.out(Tensor input, Tensor weights, Tensor channel_quant,
//     int output_offset, int activation_min, int activation_max, *, Tensor(a!) out)
// (pteron's own: the fully connected layer with its constants in the layout the kernel streams,
// util/linear_packed.h.)
//
// arm_fully_connected_s8 with symmetric weights and the offsets folded at compile time:
// input [..., K] int8, out [..., N] int8, for every row of the input
//   acc[n] = kernel_sum[n] + sum_k x[k] * w[n][k]      (int32, wrapping)
//   out[n] = clamp(requantize(acc, mult[n], left[n], right[n]) + output_offset, min, max)
// which is what quantized_linear computes with bias and input_offset (kernel_sum = bias +
// input_offset * sum_k w[n][k]). The MVE path runs four output channels at once: one input
// vector feeds four VMLADAVA, the weights are one forward stream, and the four accumulators
// are requantised as one vector with the group's record. The DSP path (Cortex-M4/M7) runs the
// same four channels with SMLAD: eight input bytes extended to int16 pairs once for the four
// channels' weights, which are extended as they stream.
#include "kernels/cortex_m/util/dsp.h"
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/linear_packed.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"
#if PTERON_CORTEX_M_HOST
#include "kernels/cortex_m/host/conv_host.h"
#endif

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_linear_packed.out";

struct PackedParams {
  int32_t rows, k, n, chunks, groups;
  int32_t out_off, act_min, act_max;
};

// Shifts a record may hold: left in [0, 31], right in [-31, 0]; multipliers are >= 0.
constexpr uint32_t kMaxShiftCount = 31;

bool record_valid(int32_t mult, int32_t left, int32_t right) {
  return mult >= 0 && left >= 0 && left <= 31 && right <= 0 && right >= -31;
}

int8_t finish_packed(uint32_t acc, const int32_t* q, int32_t c, const PackedParams& p) {
  const int32_t mult = q[kLinearMultiplier * kLinearGroup + c];
  const int32_t left = q[kLinearLeftShift * kLinearGroup + c];
  const int32_t right = q[kLinearRightShift * kLinearGroup + c];
  const auto shifted = static_cast<int32_t>(acc << left);
  const int32_t r = rounding_divide_by_pot(doubling_high_mult_no_sat(shifted, mult), -right);
  return static_cast<int8_t>(clamp_i32(r + p.out_off, p.act_min, p.act_max));
}

// Every channel's record in range, else the call fails (the scalar and DSP paths check first).
Error check_records(const int32_t* quant, const PackedParams& p) {
  for (int32_t g = 0; g < p.groups; ++g) {
    const int32_t* q = quant + g * kLinearQuantFields * kLinearGroup;
    for (int32_t c = 0; c < kLinearGroup; ++c) {
      if (!record_valid(q[kLinearMultiplier * kLinearGroup + c],
                        q[kLinearLeftShift * kLinearGroup + c],
                        q[kLinearRightShift * kLinearGroup + c])) {
        return fail(Error::InvalidArgument,
                    "%s: channel %d's multiplier or shifts are out of range ([0, 2^31), left "
                    "[0, 31], right [-31, 0])",
                    kOp, static_cast<int>(g * kLinearGroup + c));
      }
    }
  }
  return Error::Ok;
}

// The reference: the same sums in the packed layout, accumulated modulo 2^32 as VMLADAVA does.
Error packed_scalar(const int8_t* in, const int8_t* w, const int32_t* quant, int8_t* out,
                    const PackedParams& p) {
  PTERON_TRY(check_records(quant, p));
  const int64_t group_bytes = int64_t{p.chunks} * kLinearGroup * kLinearChunk;
  for (int32_t r = 0; r < p.rows; ++r, in += p.k, out += p.n) {
    for (int32_t n = 0; n < p.n; ++n) {
      const int32_t g = n / kLinearGroup, c = n % kLinearGroup;
      const int32_t* q = quant + g * kLinearQuantFields * kLinearGroup;
      const int8_t* wg = w + g * group_bytes + c * kLinearChunk;
      auto acc = static_cast<uint32_t>(q[kLinearKernelSum * kLinearGroup + c]);
      for (int32_t i0 = 0; i0 < p.k; i0 += kLinearChunk, wg += kLinearGroup * kLinearChunk) {
        const int32_t len = p.k - i0 < kLinearChunk ? p.k - i0 : kLinearChunk;
        for (int32_t i = 0; i < len; ++i) acc += static_cast<uint32_t>(in[i0 + i] * wg[i]);
      }
      out[n] = finish_packed(acc, q, c, p);
    }
  }
  return Error::Ok;
}

#if PTERON_CORTEX_M_MVE
// `groups` (>= 1) whole groups of four output channels for one input row x of k bytes: for each,
// the accumulators start at the kernel sums and a tail-predicated low-overhead loop (WLSTP/LETP)
// takes the row 16 bytes at a time, each input vector loaded once for the four channels' weight
// vectors (one pointer, always forward: the packed layout); then the four sums are requantised
// as one vector (requantize_mve's arithmetic: VSHL by the left shifts, VQRDMULH, the sign
// fix-up, VRSHL by the right shifts), offset, clamped and stored as four bytes. The records are
// checked on the way, as vectors: the largest multiplier (unsigned: a negative one is huge) and
// the largest shift count (left, and minus right) come back in worst_mult / worst_shift; the
// caller fails the call when they are out of range (what was written is then garbage, but no
// value makes this code read or write out of bounds). Inline assembly: GCC 12 emits no
// tail-predicated loops and spills around the intrinsics form.
// 10 instructions per 64 MACs in the loop, 25 per group around it.
void packed_groups_mve(const int8_t* x, const int8_t* w, const int32_t* quant, int8_t* out,
                       int32_t groups, int32_t k, const PackedParams& p, uint32_t& worst_mult,
                       uint32_t& worst_shift) {
  register const int8_t* x_r asm("r0") = x;
  register int32_t lo_r asm("r1") = p.act_min;  // then the running input pointer, then a result
  register const int8_t* w_r asm("r2") = w;
  register const int32_t* q_r asm("r3") = quant;
  register int32_t hi_r asm("r4") = p.act_max;  // then channel 0's accumulator, then a result
  register int8_t* out_r asm("r5") = out;
  register int32_t groups_r asm("r9") = groups;
  register int32_t k_r asm("r11") = k;
  register int32_t off_r asm("r12") = p.out_off;
  __asm volatile(
      "   vdup.32     q6, r1                 \n"  // activation min
      "   vdup.32     q7, r4                 \n"  // activation max
      "   vmov.i32    q4, #0                 \n"  // largest multiplier seen
      "   vmov.i32    q5, #0                 \n"  // largest shift count seen
      "1:                                    \n"
      "   mov         r1, r0                 \n"
      "   ldm         r3!, {r4, r6, r8, r10} \n"  // kernel sums: the accumulators' start
      "   wlstp.8     lr, r11, 3f            \n"
      "2:                                    \n"
      "   vldrb.8     q0, [r1], #16          \n"
      "   vldrb.8     q1, [r2], #16          \n"
      "   vmladava.s8 r4, q0, q1             \n"
      "   vldrb.8     q2, [r2], #16          \n"
      "   vmladava.s8 r6, q0, q2             \n"
      "   vldrb.8     q3, [r2], #16          \n"
      "   vmladava.s8 r8, q0, q3             \n"
      "   vldrb.8     q1, [r2], #16          \n"
      "   vmladava.s8 r10, q0, q1            \n"
      "   letp        lr, 2b                 \n"
      "3:                                    \n"
      "   vmov        q0[2], q0[0], r4, r8   \n"  // lanes 0 and 2: channels 0 and 2
      "   vmov        q0[3], q0[1], r6, r10  \n"  // lanes 1 and 3: channels 1 and 3
      "   vldrw.32    q1, [r3]               \n"  // multipliers
      "   vldrw.32    q2, [r3, #16]          \n"  // left shifts
      "   vldrw.32    q3, [r3, #32]          \n"  // right shifts (<= 0)
      "   adds        r3, r3, #48            \n"
      "   vmax.u32    q4, q4, q1             \n"
      "   vmax.u32    q5, q5, q2             \n"
      "   vshl.s32    q0, q0, q2             \n"
      "   vqrdmulh.s32 q0, q0, q1            \n"
      "   vneg.s32    q1, q3                 \n"
      "   vmax.u32    q5, q5, q1             \n"
      "   vand        q1, q0, q3             \n"  // sign fix-up: -1 for negative values that
      "   vshr.s32    q1, q1, #31            \n"  // shift right, so VRSHL rounds away from 0
      "   vqadd.s32   q0, q0, q1             \n"
      "   vrshl.s32   q0, q0, q3             \n"
      "   vadd.i32    q0, q0, r12            \n"  // output offset
      "   vmax.s32    q0, q0, q6             \n"
      "   vmin.s32    q0, q0, q7             \n"
      "   vstrb.32    q0, [r5], #4           \n"
      "   subs        r9, r9, #1             \n"
      "   bne         1b                     \n"
      "   movs        r1, #0                 \n"
      "   vmaxv.u32   r1, q4                 \n"
      "   movs        r4, #0                 \n"
      "   vmaxv.u32   r4, q5                 \n"
      : "+r"(lo_r), "+r"(w_r), "+r"(q_r), "+r"(hi_r), "+r"(out_r), "+r"(groups_r)
      : "r"(x_r), "r"(k_r), "r"(off_r)
      : "r6", "r8", "r10", "r14", "q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7", "memory", "cc");
  worst_mult = static_cast<uint32_t>(lo_r);
  worst_shift = static_cast<uint32_t>(hi_r);
}

Error packed_mve(const int8_t* in, const int8_t* w, const int32_t* quant, int8_t* out,
                 const PackedParams& p) {
  const int32_t full = p.n / kLinearGroup, tail = p.n % kLinearGroup;
  const int32_t* tail_quant = quant + full * kLinearQuantFields * kLinearGroup;
  const int8_t* tail_w = w + int64_t{full} * p.chunks * kLinearGroup * kLinearChunk;
  for (int32_t r = 0; r < p.rows; ++r, in += p.k, out += p.n) {
    uint32_t mult = 0, shift = 0, tail_mult = 0, tail_shift = 0;
    if (full > 0) packed_groups_mve(in, w, quant, out, full, p.k, p, mult, shift);
    if (tail > 0) {
      alignas(4) int8_t last[kLinearGroup];
      packed_groups_mve(in, tail_w, tail_quant, last, 1, p.k, p, tail_mult, tail_shift);
      for (int32_t c = 0; c < tail; ++c) out[full * kLinearGroup + c] = last[c];
    }
    if (mult > INT32_MAX || tail_mult > INT32_MAX || shift > kMaxShiftCount ||
        tail_shift > kMaxShiftCount) {
      return fail(Error::InvalidArgument,
                  "%s: a channel's multiplier or shifts are out of range ([0, 2^31), left [0, "
                  "31], right [-31, 0])",
                  kOp);
    }
  }
  return Error::Ok;
}
#endif

#if PTERON_CORTEX_M_DSP
// What packed_chunks_dsp's loop reads and leaves: the input and weight pointers, the number of
// 16-byte chunks (>= 1) and the group's four accumulators.
struct PackedChunks {
  const int8_t* x;
  const int8_t* w;
  int32_t chunks;
  int32_t acc[kLinearGroup];
};

// Adds `chunks` 16-byte chunks of the input row times the group's four rows (the packed layout:
// per chunk the four rows' 16 bytes back to back) to the four accumulators. Per half chunk the
// input's eight bytes are extended to four int16-pair words once; each row's eight weight bytes
// (one LDRD at an immediate offset) are extended one word at a time into the SMLADs: 42
// instructions per 32 MACs. Inline assembly: the loop needs all fourteen free registers (four
// accumulators, two pointers, the count, four input words, three weight words), which GCC 12
// spills. Weights must be 4-byte aligned (LDRD); the input may be at any address (LDR).
void packed_chunks_dsp(PackedChunks& c) {
  register PackedChunks* c_r asm("r0") = &c;
#define PTERON_LINEAR_DSP_ROW(acc, offset)       \
  "   ldrd        r11, r12, [r5, #" #offset      \
  "]\n"                                          \
  "   sxtb16      lr, r11                    \n" \
  "   smlad       " #acc ", r9, lr, " #acc       \
  "  \n"                                         \
  "   sxtb16      r11, r11, ror #8           \n" \
  "   smlad       " #acc ", r7, r11, " #acc      \
  " \n"                                          \
  "   sxtb16      lr, r12                    \n" \
  "   smlad       " #acc ", r10, lr, " #acc      \
  " \n"                                          \
  "   sxtb16      r12, r12, ror #8           \n" \
  "   smlad       " #acc ", r8, r12, " #acc " \n"
#define PTERON_LINEAR_DSP_HALF(base)                                             \
  "   ldr         r7, [r4], #4               \n"                                 \
  "   ldr         r8, [r4], #4               \n"                                 \
  "   sxtb16      r9, r7                     \n"                                 \
  "   sxtb16      r7, r7, ror #8             \n"                                 \
  "   sxtb16      r10, r8                    \n"                                 \
  "   sxtb16      r8, r8, ror #8             \n" PTERON_LINEAR_DSP_ROW(r0, base) \
      PTERON_LINEAR_DSP_ROW(r1, base + 16) PTERON_LINEAR_DSP_ROW(r2, base + 32)  \
          PTERON_LINEAR_DSP_ROW(r3, base + 48)
  __asm volatile(
      "   push        {r0}                       \n"
      "   ldrd        r4, r5, [r0]               \n"  // x, w
      "   ldr         r6, [r0, #8]               \n"  // chunks
      "   ldrd        r2, r3, [r0, #20]          \n"
      "   ldrd        r0, r1, [r0, #12]          \n"  // the accumulators
      "1:                                        \n"
      PTERON_LINEAR_DSP_HALF(0)
      PTERON_LINEAR_DSP_HALF(8)
      "   adds        r5, r5, #64                \n"
      "   subs        r6, r6, #1                 \n"
      "   bne         1b                         \n"
      "   pop         {r6}                       \n"
      "   strd        r4, r5, [r6]               \n"
      "   strd        r0, r1, [r6, #12]          \n"
      "   strd        r2, r3, [r6, #20]          \n"
      "   mov         r0, r6                     \n"
      : "+r"(c_r)
      :
      : "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "r12", "r14",
        "memory", "cc");
#undef PTERON_LINEAR_DSP_HALF
#undef PTERON_LINEAR_DSP_ROW
}

// Every row, four channels a step: the whole chunks straight from the input, the last partial
// chunk from a zero-padded copy (the weights are zero past K already), then the group's record.
Error packed_dsp(const int8_t* in, const int8_t* w, const int32_t* quant, int8_t* out,
                 const PackedParams& p) {
  PTERON_TRY(check_records(quant, p));
  const int32_t whole = p.k / kLinearChunk, rest = p.k % kLinearChunk;
  const int64_t group_bytes = int64_t{p.chunks} * kLinearGroup * kLinearChunk;
  for (int32_t r = 0; r < p.rows; ++r, in += p.k, out += p.n) {
    alignas(4) int8_t last[kLinearChunk] = {};
    for (int32_t i = 0; i < rest; ++i) last[i] = in[whole * kLinearChunk + i];
    for (int32_t g = 0; g < p.groups; ++g) {
      const int32_t* q = quant + g * kLinearQuantFields * kLinearGroup;
      PackedChunks c{in, w + g * group_bytes, whole, {}};
      for (int32_t k = 0; k < kLinearGroup; ++k) c.acc[k] = q[kLinearKernelSum * kLinearGroup + k];
      if (whole > 0) packed_chunks_dsp(c);
      if (rest > 0) {
        c.x = last, c.chunks = 1;
        packed_chunks_dsp(c);
      }
      const int32_t channels =
          p.n - g * kLinearGroup < kLinearGroup ? p.n - g * kLinearGroup : kLinearGroup;
      for (int32_t k = 0; k < channels; ++k)
        out[g * kLinearGroup + k] = finish_packed(static_cast<uint32_t>(c.acc[k]), q, k, p);
    }
  }
  return Error::Ok;
}
#endif

#if PTERON_CORTEX_M_HOST
// The host's dot-product tiles (host/conv_host.h), the rows as the pixels of a 1x1 convolution
// with the kernel sums as its bias and no input offset (they hold it already). False, having
// written nothing, where the host has no path, the scratch is short, or a record has both a
// left and a right shift, which a convolution's single shift cannot say (the scalar path then
// gives the record's exact arithmetic).
bool packed_host(KernelContext& ctx, const int8_t* in, const Tensor& w, const int32_t* quant,
                 int8_t* out, const PackedParams& p) {
  auto* records = static_cast<int32_t*>(
      ctx.allocate_scratch(3 * static_cast<size_t>(p.n) * sizeof(int32_t), 64));
  if (records == nullptr) return false;
  int32_t *bias = records, *mult = bias + p.n, *shift = mult + p.n;
  for (int32_t n = 0; n < p.n; ++n) {
    const int32_t left = quant[linear_quant_index(n, kLinearLeftShift)];
    const int32_t right = quant[linear_quant_index(n, kLinearRightShift)];
    if (left != 0 && right != 0) return false;
    bias[n] = quant[linear_quant_index(n, kLinearKernelSum)];
    mult[n] = quant[linear_quant_index(n, kLinearMultiplier)];
    shift[n] = left + right;
  }
  ConvParams c{};
  c.n = 1, c.h = 1, c.w = p.rows, c.cin = p.k, c.oh = 1, c.ow = p.rows, c.cout = p.n;
  c.kh = c.kw = 1, c.depth_multiplier = 1;
  c.win.kernel[0] = c.win.kernel[1] = 1;
  c.win.stride[0] = c.win.stride[1] = 1;
  c.win.dilation[0] = c.win.dilation[1] = 1;
  c.bias = bias, c.mult = mult, c.shift = shift;
  c.in_off = 0, c.out_off = p.out_off, c.act_min = p.act_min, c.act_max = p.act_max;
  return host::conv2d(ctx, in, w, out, c, host::WeightLayout::kLinearPacked);
}
#endif

Error quantized_linear_packed_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& w = *args[1]->tensor;
  const Tensor& quant = *args[2]->tensor;
  Tensor& out = *args[6]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, w, "weights"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_dtype(kOp, quant, ScalarType::Int, "channel_quant"));
  PTERON_TRY(check_rank(kOp, w, 4, "weights"));
  PTERON_TRY(check_rank(kOp, quant, 3, "channel_quant"));
  if (in.dim() < 1 || out.dim() != in.dim()) {
    return fail(Error::InvalidArgument, "%s: input and out need the same rank (at least 1)", kOp);
  }
  for (int32_t d = 0; d + 1 < in.dim(); ++d) {
    if (in.size(d) != out.size(d)) {
      return fail(Error::InvalidArgument, "%s: input and out differ in dim %d", kOp,
                  static_cast<int>(d));
    }
  }
  PackedParams p{};
  p.k = in.size(in.dim() - 1);
  p.n = out.size(out.dim() - 1);
  p.groups = static_cast<int32_t>(linear_groups(p.n));
  p.chunks = static_cast<int32_t>(linear_chunks(p.k));
  if (w.size(0) != p.groups || w.size(1) != p.chunks || w.size(2) != kLinearGroup ||
      w.size(3) != kLinearChunk) {
    return fail(Error::InvalidArgument,
                "%s: weights [%d, %d, %d, %d] are not the packed layout of input [..., %d] and "
                "out [..., %d] (expected [%d, %d, %d, %d])",
                kOp, static_cast<int>(w.size(0)), static_cast<int>(w.size(1)),
                static_cast<int>(w.size(2)), static_cast<int>(w.size(3)), static_cast<int>(p.k),
                static_cast<int>(p.n), static_cast<int>(p.groups), static_cast<int>(p.chunks),
                static_cast<int>(kLinearGroup), static_cast<int>(kLinearChunk));
  }
  if (quant.size(0) != p.groups || quant.size(1) != kLinearQuantFields ||
      quant.size(2) != kLinearGroup) {
    return fail(Error::InvalidArgument, "%s: channel_quant must be [%d, %d, %d], got [%d, %d, %d]",
                kOp, static_cast<int>(p.groups), static_cast<int>(kLinearQuantFields),
                static_cast<int>(kLinearGroup), static_cast<int>(quant.size(0)),
                static_cast<int>(quant.size(1)), static_cast<int>(quant.size(2)));
  }
  PTERON_TRY(check_zero_point(kOp, args[3]->i, "output_offset"));
  PTERON_TRY(check_activation(kOp, args[4]->i, args[5]->i));
  p.out_off = static_cast<int32_t>(args[3]->i);
  p.act_min = static_cast<int32_t>(args[4]->i);
  p.act_max = static_cast<int32_t>(args[5]->i);
  if (out.numel() == 0) return Error::Ok;
  p.rows = static_cast<int32_t>(out.numel() / p.n);
  const int8_t* x = p.k == 0 ? nullptr : in.data<int8_t>();
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    return packed_mve(x, w.data<int8_t>(), quant.data<int32_t>(), out.data<int8_t>(), p);
  }
#endif
#if PTERON_CORTEX_M_DSP
  if (use_dsp() && reinterpret_cast<uintptr_t>(w.data<int8_t>()) % 4 == 0) {
    return packed_dsp(x, w.data<int8_t>(), quant.data<int32_t>(), out.data<int8_t>(), p);
  }
#endif
#if PTERON_CORTEX_M_HOST
  if (p.k > 0) {
    PTERON_TRY(check_records(quant.data<int32_t>(), p));
    if (packed_host(ctx, x, w, quant.data<int32_t>(), out.data<int8_t>(), p)) return Error::Ok;
  }
#endif
  return packed_scalar(x, w.data<int8_t>(), quant.data<int32_t>(), out.data<int8_t>(), p);
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_linear_packed.out", quantized_linear_packed_out, "TTTIIIT");

}  // namespace pteron::cortex_m
