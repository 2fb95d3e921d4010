// aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out)
// aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out)
//
// True division needs a floating out. "trunc" and "floor" keep integer dtypes and fail on an
// integer division by zero, as torch raises ZeroDivisionError.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// Elementwise division in rounding mode M. On the mixed-dtype path C is double even for an
// integer out, so zero divisors are flagged there too.
template <Rounding M>
struct Divide {
  bool int_out;
  bool* zero;
  ScalarType storage;  // torch truncates a float16/bfloat16 quotient after rounding it to them

  template <typename C>
  C round_to_storage(C q) const {
    if (storage == ScalarType::Half) return static_cast<C>(half_to_float(float_to_half(q)));
    if (storage == ScalarType::BFloat16) return static_cast<C>(bf16_to_float(float_to_bf16(q)));
    return q;
  }

  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (M != Rounding::kTrue && int_out && y == 0) {
        *zero = true;
        return 0;
      }
      if constexpr (M == Rounding::kTrue)
        return x / y;
      else if constexpr (M == Rounding::kTrunc)
        return std::trunc(round_to_storage(x / y));
      else
        return float_floor_divide(x, y);
    } else {
      return int_divide<M>(x, y, zero);
    }
  }
};

Error parse_rounding(const char* op, const EValue& v, size_t index, Rounding* mode) {
  PTERON_TRY(check_string_arg(op, v, index, /*optional=*/true));
  if (v.is_none())
    *mode = Rounding::kTrue;
  else if (string_equals(v, "trunc"))
    *mode = Rounding::kTrunc;
  else if (string_equals(v, "floor"))
    *mode = Rounding::kFloor;
  else
    return fail(Error::InvalidArgument, "%s: rounding_mode must be None, 'trunc' or 'floor'", op);
  return Error::Ok;
}

Error zero_division(const char* op) {
  return fail(Error::InvalidArgument, "%s: integer division by zero", op);
}

template <Rounding M>
Error divide_tensors(const char* op, const Tensor& a, const Tensor& b, Tensor& out) {
  bool zero = false;
  const bool int_out = !is_floating(out.dtype());
  const unsigned set = M == Rounding::kTrue ? kFloatTypes : kRealTypes;
  PTERON_TRY(binary_elementwise(op, a, b, out, set, Divide<M>{int_out, &zero, out.dtype()}));
  return zero ? zero_division(op) : Error::Ok;
}

template <Rounding M>
Error divide_by_scalar(const char* op, const Tensor& a, const ScalarArg& s, Tensor& out) {
  bool zero = false;
  const bool int_out = !is_floating(out.dtype());
  constexpr unsigned kOutSet = M == Rounding::kTrue ? kFloatTypes : kRealTypes;
  if (M != Rounding::kTrue) PTERON_TRY(check_scalar_fits_out(op, s, out));
  const Divide<M> divide{int_out, &zero, out.dtype()};
  const Error e = unary_elementwise<kAllTypes, kOutSet>(
      op, a, out, [&](auto x) { return divide(x, s.as<decltype(x)>()); });
  if (e != Error::Ok) return e;
  return zero ? zero_division(op) : Error::Ok;
}

Error div_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::div.out";
  return divide_tensors<Rounding::kTrue>(kOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor);
}

Error div_out_mode(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::div.out_mode";
  Rounding mode = Rounding::kTrue;
  PTERON_TRY(parse_rounding(kOp, *args[2], 2, &mode));
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  switch (mode) {
    case Rounding::kTrue:
      return divide_tensors<Rounding::kTrue>(kOp, a, b, out);
    case Rounding::kTrunc:
      return divide_tensors<Rounding::kTrunc>(kOp, a, b, out);
    case Rounding::kFloor:
      return divide_tensors<Rounding::kFloor>(kOp, a, b, out);
  }
  return Error::Internal;
}

Error div_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::div.Scalar_out";
  return divide_by_scalar<Rounding::kTrue>(kOp, *args[0]->tensor, ScalarArg(*args[1]),
                                           *args[2]->tensor);
}

Error div_scalar_mode_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::div.Scalar_mode_out";
  Rounding mode = Rounding::kTrue;
  PTERON_TRY(parse_rounding(kOp, *args[2], 2, &mode));
  const Tensor& a = *args[0]->tensor;
  const ScalarArg s(*args[1]);
  Tensor& out = *args[3]->tensor;
  switch (mode) {
    case Rounding::kTrue:
      return divide_by_scalar<Rounding::kTrue>(kOp, a, s, out);
    case Rounding::kTrunc:
      return divide_by_scalar<Rounding::kTrunc>(kOp, a, s, out);
    case Rounding::kFloor:
      return divide_by_scalar<Rounding::kFloor>(kOp, a, s, out);
  }
  return Error::Internal;
}

}  // namespace

PTERON_KERNEL("aten::div.out", div_out, "TTT");
PTERON_KERNEL("aten::div.out_mode", div_out_mode, "TT*T");
PTERON_KERNEL("aten::div.Scalar_out", div_scalar_out, "TST");
PTERON_KERNEL("aten::div.Scalar_mode_out", div_scalar_mode_out, "TS*T");

}  // namespace pteron
