// cortex_m::quantized_linear.out(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum,
//     int input_offset, int filter_offset, int output_offset, int[] requantize_multipliers,
//     int[] requantize_shifts, int activation_max, int activation_min, *, Tensor(a!) out)
// (pteron's schema takes the multipliers and shifts as int32 tensors; the kernel takes both.)
//
// CMSIS-NN arm_fully_connected_s8 (per-channel when the lists have one entry per output):
// input [..., K] int8, weights [N, K] int8, bias [N] int32, out [..., N] int8.
//   acc[n] = sum_k (x[k] + input_offset) * (w[n][k] + filter_offset) + bias[n]
// or, when kernel_sum is given (ExecuTorch's MVE form, bias and input_offset folded in),
//   acc[n] = sum_k x[k] * (w[n][k] + filter_offset) + kernel_sum[n].
// out = clamp(requantize(acc, mult[n], shift[n]) + output_offset, activation_min, max).
// The MVE path sums x*w and w in the same 16-lane loop and adds the offset terms after, which
// is the same int32 value; it needs no scratch.
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::quantized_linear.out";

struct LinearParams {
  int32_t rows, k, n;
  const int32_t* bias;        // or nullptr
  const int32_t* kernel_sum;  // or nullptr
  int32_t in_off, w_off, out_off, act_min, act_max;
  // Multipliers and shifts: int lists (ExecuTorch's schema) or int32 tensors (what pteron's
  // lowering emits: a list of n ints is n values in the program, each held in method memory).
  const int64_t* mult;
  const int64_t* shift;
  const int32_t* mult32;  // set instead of mult/shift for tensors
  const int32_t* shift32;
  bool per_channel;
};

inline int8_t finish(int32_t acc, int32_t n, const LinearParams& p) {
  const int32_t c = p.per_channel ? n : 0;
  const int32_t r =
      p.mult32 ? requantize(acc, p.mult32[c], p.shift32[c])
               : requantize(acc, static_cast<int32_t>(p.mult[c]), static_cast<int32_t>(p.shift[c]));
  return static_cast<int8_t>(clamp_i32(r + p.out_off, p.act_min, p.act_max));
}

void linear_scalar(const int8_t* in, const int8_t* w, int8_t* out, const LinearParams& p) {
  for (int32_t r = 0; r < p.rows; ++r, in += p.k, out += p.n) {
    for (int32_t n = 0; n < p.n; ++n) {
      const int8_t* wn = w + static_cast<int64_t>(n) * p.k;
      int32_t acc = 0;
      if (p.kernel_sum) {
        for (int32_t i = 0; i < p.k; ++i) acc += in[i] * (wn[i] + p.w_off);
        acc += p.kernel_sum[n];
      } else {
        for (int32_t i = 0; i < p.k; ++i) acc += (in[i] + p.in_off) * (wn[i] + p.w_off);
        if (p.bias) acc += p.bias[n];
      }
      out[n] = finish(acc, n, p);
    }
  }
}

#if PTERON_CORTEX_M_MVE
// Sums of x*w and of w for four rows of `w` (each `len` long), sharing each x load; full
// vectors unpredicated, the tail loading zeros past the end.
void dot4_mve(const int8_t* x, const int8_t* w, int32_t len, int32_t xw[4], int32_t w_sum[4]) {
  const int8_t* w0 = w;
  const int8_t* w1 = w0 + len;
  const int8_t* w2 = w1 + len;
  const int8_t* w3 = w2 + len;
  int32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int32_t i = 0;
  auto step = [&](int8x16_t xv, int8x16_t v0, int8x16_t v1, int8x16_t v2, int8x16_t v3) {
    a0 = vmladavaq_s8(a0, xv, v0), s0 = vaddvaq_s8(s0, v0);
    a1 = vmladavaq_s8(a1, xv, v1), s1 = vaddvaq_s8(s1, v1);
    a2 = vmladavaq_s8(a2, xv, v2), s2 = vaddvaq_s8(s2, v2);
    a3 = vmladavaq_s8(a3, xv, v3), s3 = vaddvaq_s8(s3, v3);
  };
  for (; i + 16 <= len; i += 16) {
    step(vldrbq_s8(x + i), vldrbq_s8(w0 + i), vldrbq_s8(w1 + i), vldrbq_s8(w2 + i),
         vldrbq_s8(w3 + i));
  }
  if (i < len) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    step(vldrbq_z_s8(x + i, pr), vldrbq_z_s8(w0 + i, pr), vldrbq_z_s8(w1 + i, pr),
         vldrbq_z_s8(w2 + i, pr), vldrbq_z_s8(w3 + i, pr));
  }
  xw[0] = a0, xw[1] = a1, xw[2] = a2, xw[3] = a3;
  w_sum[0] = s0, w_sum[1] = s1, w_sum[2] = s2, w_sum[3] = s3;
}

void dot1_mve(const int8_t* x, const int8_t* w, int32_t len, int32_t xw[1], int32_t w_sum[1]) {
  int32_t a = 0, s = 0;
  for (int32_t i = 0; i < len; i += 16) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(len - i));
    const int8x16_t wv = vldrbq_z_s8(w + i, pr);
    a = vmladavaq_s8(a, vldrbq_z_s8(x + i, pr), wv);
    s = vaddvaq_s8(s, wv);
  }
  xw[0] = a, w_sum[0] = s;
}

void linear_mve(const int8_t* in, const int8_t* w, int8_t* out, const LinearParams& p) {
  for (int32_t r = 0; r < p.rows; ++r, in += p.k, out += p.n) {
    int32_t x_sum = 0;
    for (int32_t i = 0; i < p.k; i += 16) {
      const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(p.k - i));
      x_sum = vaddvaq_s8(x_sum, vldrbq_z_s8(in + i, pr));
    }
    for (int32_t n = 0; n < p.n;) {
      int32_t xw[4], w_sum[4];
      const int8_t* wn = w + static_cast<int64_t>(n) * p.k;
      const int32_t rows = p.n - n >= 4 ? 4 : 1;
      if (rows == 4) {
        dot4_mve(in, wn, p.k, xw, w_sum);
      } else {
        dot1_mve(in, wn, p.k, xw, w_sum);
      }
      for (int32_t j = 0; j < rows; ++j, ++n) {
        int32_t acc;
        if (p.kernel_sum) {
          acc = xw[j] + p.w_off * x_sum + p.kernel_sum[n];
        } else {
          acc = xw[j] + p.in_off * w_sum[j] + p.w_off * x_sum + p.k * p.in_off * p.w_off;
          if (p.bias) acc += p.bias[n];
        }
        out[n] = finish(acc, n, p);
      }
    }
  }
}
#endif

Error quantized_linear_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  const Tensor& w = *args[1]->tensor;
  Tensor& out = *args[11]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, w, "weights"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_rank(kOp, w, 2, "weights"));
  if (in.dim() < 1 || out.dim() != in.dim()) {
    return fail(Error::InvalidArgument, "%s: input and out need the same rank (at least 1)", kOp);
  }
  LinearParams p{};
  p.k = w.size(1);
  p.n = w.size(0);
  if (in.size(in.dim() - 1) != p.k || out.size(out.dim() - 1) != p.n) {
    return fail(Error::InvalidArgument,
                "%s: input [..., %d] and out [..., %d] do not match weights [%d, %d]", kOp,
                static_cast<int>(in.size(in.dim() - 1)), static_cast<int>(out.size(out.dim() - 1)),
                static_cast<int>(p.n), static_cast<int>(p.k));
  }
  for (int32_t d = 0; d + 1 < in.dim(); ++d) {
    if (in.size(d) != out.size(d)) {
      return fail(Error::InvalidArgument, "%s: input and out differ in dim %d", kOp,
                  static_cast<int>(d));
    }
  }
  p.rows = p.k == 0 ? static_cast<int32_t>(out.numel() / (p.n ? p.n : 1))
                    : static_cast<int32_t>(in.numel() / p.k);
  p.bias = nullptr;
  p.kernel_sum = nullptr;
  for (int i = 2; i <= 3; ++i) {
    if (args[i]->is_none()) continue;
    const Tensor& t = *args[i]->tensor;
    PTERON_TRY(check_dtype(kOp, t, ScalarType::Int, i == 2 ? "bias" : "kernel_sum"));
    if (t.numel() != p.n) {
      return fail(Error::InvalidArgument, "%s: %s needs %d values, got %lld", kOp,
                  i == 2 ? "bias" : "kernel_sum", static_cast<int>(p.n),
                  static_cast<long long>(t.numel()));
    }
    (i == 2 ? p.bias : p.kernel_sum) = t.data<int32_t>();
  }
  const bool tensors = args[7]->is_tensor() && args[8]->is_tensor();
  if (!tensors && !(args[7]->tag == Tag::IntList && args[8]->tag == Tag::IntList)) {
    return fail(Error::InvalidArgument,
                "%s: requantize_multipliers and requantize_shifts must both be int lists or both "
                "int32 tensors",
                kOp);
  }
  Span<const int64_t> mult, shift;
  size_t count = 0;
  if (tensors) {
    PTERON_TRY(check_dtype(kOp, *args[7]->tensor, ScalarType::Int, "requantize_multipliers"));
    PTERON_TRY(check_dtype(kOp, *args[8]->tensor, ScalarType::Int, "requantize_shifts"));
    count = static_cast<size_t>(args[7]->tensor->numel());
    if (args[8]->tensor->numel() != args[7]->tensor->numel()) count = 0;  // reported below
    p.mult32 = args[7]->tensor->data<int32_t>();
    p.shift32 = args[8]->tensor->data<int32_t>();
  } else {
    mult = args[7]->int_list, shift = args[8]->int_list;
    count = mult.size() == shift.size() ? mult.size() : 0;
  }
  if (count != 1 && count != static_cast<size_t>(p.n)) {
    return fail(Error::InvalidArgument,
                "%s: multipliers and shifts differ in number or are not 1 or one per output (%d)",
                kOp, static_cast<int>(p.n));
  }
  for (size_t i = 0; i < count; ++i) {
    PTERON_TRY(check_requant(kOp, tensors ? p.mult32[i] : mult[i],
                             tensors ? p.shift32[i] : shift[i], "output"));
  }
  const int64_t in_off = args[4]->i, w_off = args[5]->i;
  if (in_off < -255 || in_off > 255 || w_off < -255 || w_off > 255) {
    return fail(Error::InvalidArgument, "%s: input_offset %lld / filter_offset %lld out of range",
                kOp, static_cast<long long>(in_off), static_cast<long long>(w_off));
  }
  PTERON_TRY(check_zero_point(kOp, args[6]->i, "output_offset"));
  PTERON_TRY(check_activation(kOp, args[10]->i, args[9]->i));
  p.in_off = static_cast<int32_t>(in_off);
  p.w_off = static_cast<int32_t>(w_off);
  p.out_off = static_cast<int32_t>(args[6]->i);
  p.act_max = static_cast<int32_t>(args[9]->i);
  p.act_min = static_cast<int32_t>(args[10]->i);
  p.mult = mult.data();
  p.shift = shift.data();
  p.per_channel = count > 1;
  if (out.numel() == 0) return Error::Ok;
#if PTERON_CORTEX_M_MVE
  if (use_mve()) {
    linear_mve(in.data<int8_t>(), w.data<int8_t>(), out.data<int8_t>(), p);
    return Error::Ok;
  }
#endif
  linear_scalar(in.data<int8_t>(), w.data<int8_t>(), out.data<int8_t>(), p);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::quantized_linear.out", quantized_linear_out, "TTttIII**IIT");

}  // namespace pteron::cortex_m
