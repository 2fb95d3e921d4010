// cortex_m::softmax.out(Tensor input, int dim, int input_zero_point, int output_zero_point,
//     int input_multiplier, int input_shift, int diff_min, *, Tensor(a!) out)
//
// CMSIS-NN arm_softmax_s8 (TFLite's bit-exact int8 softmax) over the last dim: the output has
// scale 1/256 and zero point -128. input_multiplier/input_shift scale (x - max) into Q5.26
// (input_scale * 2^26 as a Q31 multiplier with a left shift in [0, 30]); differences below
// diff_min give -128. input_zero_point cancels in (x - max). exp and 1/(1+x) are gemmlowp's
// fixed-point polynomials. The MVE path finds each row's maximum with VMAXV; the fixed-point
// exponentials stay scalar (as in CMSIS-NN's MVE build).
#include "kernels/cortex_m/util/int8_args.h"
#include "kernels/cortex_m/util/path.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::softmax.out";
constexpr int32_t kAccumBits = 12;

inline int32_t mul_sat(int32_t a, int32_t b) { return doubling_high_mult_sat(a, b); }

// exp(x) for x <= 0 in Q5.26, result in Q0.31.
int32_t exp_on_negative_values(int32_t value) {
  int32_t shift = 24;
  const int32_t mod_minus_quarter = (value & ((1 << shift) - 1)) - (1 << shift);
  const int32_t remainder = mod_minus_quarter - value;
  const int32_t x = static_cast<int32_t>(static_cast<uint32_t>(mod_minus_quarter) << 5) + (1 << 28);
  const int32_t x2 = mul_sat(x, x);
  const int32_t poly = rounding_divide_by_pot(
      mul_sat(rounding_divide_by_pot(mul_sat(x2, x2), 2) + mul_sat(x2, x), 715827883) + x2, 1);
  int32_t result = 1895147668 + mul_sat(1895147668, x + poly);
  static const int32_t kFactors[7] = {1672461947, 1302514674, 790015084, 290630308,
                                      39332535,   720401,     242};
  for (int32_t f : kFactors) {
    if (remainder & (1 << shift)) result = mul_sat(result, f);
    ++shift;
  }
  return value == 0 ? INT32_MAX : result;
}

// 1 / (1 + x) for x in [0, 1) in Q0.31, result in Q2.29 (Newton-Raphson, three steps).
int32_t one_over_one_plus_x(int32_t value) {
  const int64_t sum = static_cast<int64_t>(value) + INT32_MAX;
  const int32_t half_denominator = static_cast<int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
  int32_t x = 1515870810 + mul_sat(half_denominator, -1010580540);
  const int32_t one = 1 << 29;
  for (int i = 0; i < 3; ++i) {
    x += saturating_mult_by_pot(mul_sat(x, one - mul_sat(half_denominator, x)), 2);
  }
  return saturating_mult_by_pot(x, 1);
}

int32_t count_leading_zeros(uint32_t v) {
  if (v == 0) return 32;
  return __builtin_clz(v);
}

// diff * 2^shift; diff_min keeps it in range for the values that get here.
inline int32_t wrapping_mul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

struct SoftmaxParams {
  int32_t rows, cols, mult, shift, diff_min;
};

// One row, given its maximum.
void softmax_row(const int8_t* in, int8_t* out, int32_t max, const SoftmaxParams& p) {
  const int32_t scale = 1 << p.shift;
  int32_t sum = 0;
  for (int32_t c = 0; c < p.cols; ++c) {
    const int32_t diff = in[c] - max;
    if (diff >= p.diff_min) {
      sum += rounding_divide_by_pot(
          exp_on_negative_values(mul_sat(wrapping_mul(diff, scale), p.mult)), kAccumBits);
    }
  }
  const int32_t headroom = count_leading_zeros(static_cast<uint32_t>(sum));
  const int32_t shifted =
      sum > 0 ? static_cast<int32_t>(static_cast<uint32_t>(sum) << headroom) : 0;
  const int32_t shifted_scale =
      one_over_one_plus_x(static_cast<int32_t>(static_cast<uint32_t>(shifted) - 0x80000000u));
  const int32_t bits_over_unit = kAccumBits - headroom + 23;
  for (int32_t c = 0; c < p.cols; ++c) {
    const int32_t diff = in[c] - max;
    if (diff >= p.diff_min) {
      const int32_t e = exp_on_negative_values(mul_sat(wrapping_mul(diff, scale), p.mult));
      const int32_t r =
          rounding_divide_by_pot(mul_sat(shifted_scale, e), bits_over_unit) + kInt8Min;
      out[c] = static_cast<int8_t>(clamp_i32(r, kInt8Min, kInt8Max));
    } else {
      out[c] = static_cast<int8_t>(kInt8Min);
    }
  }
}

int32_t row_max_scalar(const int8_t* in, int32_t n) {
  int32_t m = kInt8Min;
  for (int32_t c = 0; c < n; ++c) m = in[c] > m ? in[c] : m;
  return m;
}

#if PTERON_CORTEX_M_MVE
int32_t row_max_mve(const int8_t* in, int32_t n) {
  int8_t m = static_cast<int8_t>(kInt8Min);
  for (int32_t c = 0; c < n; c += 16) {
    const mve_pred16_t pr = vctp8q(static_cast<uint32_t>(n - c));
    m = vmaxvq_p_s8(m, vldrbq_z_s8(in + c, pr), pr);
  }
  return m;
}
#endif

Error softmax_out(KernelContext&, Span<EValue*> args) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[7]->tensor;
  PTERON_TRY(check_int8(kOp, in, "input"));
  PTERON_TRY(check_int8(kOp, out, "out"));
  PTERON_TRY(check_same_shape(kOp, in, out, "input and out"));
  const int64_t rank = in.dim();
  const int64_t dim = args[1]->i < 0 ? args[1]->i + rank : args[1]->i;
  if (rank < 1 || dim != rank - 1) {
    return fail(Error::NotSupported, "%s: only the last dim is supported (dim %lld of %lld)", kOp,
                static_cast<long long>(args[1]->i), static_cast<long long>(rank));
  }
  if (args[3]->i != kInt8Min) {
    return fail(Error::InvalidArgument,
                "%s: output_zero_point must be -128 (scale 1/256), got %lld", kOp,
                static_cast<long long>(args[3]->i));
  }
  const int64_t mult = args[4]->i, shift = args[5]->i, diff_min = args[6]->i;
  if (mult < 0 || mult > INT32_MAX || shift < 0 || shift > 30 || diff_min > 0 ||
      diff_min < INT32_MIN) {
    return fail(Error::InvalidArgument,
                "%s: input_multiplier %lld / input_shift %lld / diff_min %lld out of range", kOp,
                static_cast<long long>(mult), static_cast<long long>(shift),
                static_cast<long long>(diff_min));
  }
  SoftmaxParams p{};
  p.cols = in.size(static_cast<int32_t>(rank - 1));
  p.rows = p.cols == 0 ? 0 : static_cast<int32_t>(in.numel() / p.cols);
  p.mult = static_cast<int32_t>(mult);
  p.shift = static_cast<int32_t>(shift);
  p.diff_min = static_cast<int32_t>(diff_min);
  const int8_t* src = in.data<int8_t>();
  int8_t* dst = out.data<int8_t>();
  for (int32_t r = 0; r < p.rows; ++r, src += p.cols, dst += p.cols) {
#if PTERON_CORTEX_M_MVE
    const int32_t max = use_mve() ? row_max_mve(src, p.cols) : row_max_scalar(src, p.cols);
#else
    const int32_t max = row_max_scalar(src, p.cols);
#endif
    softmax_row(src, dst, max, p);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::softmax.out", softmax_out, "TIIIIIIT");

}  // namespace pteron::cortex_m
