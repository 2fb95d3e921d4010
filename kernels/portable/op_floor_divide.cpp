// aten::floor_divide.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::floor_divide.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// out = floor(self / other) in the promoted dtype (integers stay integers); an integer
// division by zero fails, as torch raises ZeroDivisionError. Not defined for bool.
#include <type_traits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// On the mixed-dtype path C is double even for an integer out: a zero divisor is flagged there
// too, and the floored double quotient is exact for every integer the out dtype holds.
struct FloorDivide {
  bool int_out;
  bool* zero;

  template <typename C>
  C operator()(C x, C y) const {
    if constexpr (std::is_same_v<C, bool>) {
      return x;  // instantiated by the dispatch, never called: bool is refused
    } else if constexpr (std::is_floating_point_v<C>) {
      if (int_out && y == 0) {
        *zero = true;
        return 0;
      }
      return float_floor_divide(x, y);
    } else {
      return int_divide<Rounding::kFloor>(x, y, zero);
    }
  }
};

Error check_not_bool(const char* op, ScalarType t) {
  if (t == ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: not supported for bool tensors", op);
  }
  return Error::Ok;
}

Error floor_divide_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::floor_divide.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_not_bool(kOp, a.dtype()));
  PTERON_TRY(check_not_bool(kOp, b.dtype()));
  bool zero = false;
  PTERON_TRY(binary_elementwise(kOp, a, b, out, kRealTypes,
                                FloorDivide{!is_floating(out.dtype()), &zero}));
  return zero ? fail(Error::InvalidArgument, "%s: integer division by zero", kOp) : Error::Ok;
}

Error floor_divide_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::floor_divide.Scalar_out";
  const Tensor& a = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_not_bool(kOp, a.dtype()));
  const ScalarArg s(*args[1]);
  PTERON_TRY(check_scalar_fits_out(kOp, s, out));
  bool zero = false;
  const FloorDivide divide{!is_floating(out.dtype()), &zero};
  const Error e = unary_elementwise<kRealTypes, kRealTypes>(
      kOp, a, out, [&](auto x) { return divide(x, s.as<decltype(x)>()); });
  if (e != Error::Ok) return e;
  return zero ? fail(Error::InvalidArgument, "%s: integer division by zero", kOp) : Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::floor_divide.out", floor_divide_out, "TTT");
PTERON_KERNEL("aten::floor_divide.Scalar_out", floor_divide_scalar_out, "TST");

}  // namespace pteron
