// aten::signbit.out(Tensor self, *, Tensor(a!) out)
// out = whether self's sign bit is set: true for -0.0 and negative NaNs too (std::signbit);
// bool out for every real and bool input, as in torch.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error signbit_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::signbit.out";
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  if (out.dtype() != ScalarType::Bool) {
    return fail(Error::InvalidArgument, "%s: out dtype must be Bool, got %s", kOp,
                scalar_type_name(out.dtype()));
  }
  // The mixed-dtype path hands f a double converted from the input: exact, sign of zero kept.
  return unary_elementwise<kAllTypes, kBoolType>(kOp, in, out, [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(std::signbit(x));
    else
      return static_cast<C>(0);  // bool -> bool
  });
}

}  // namespace

PTERON_KERNEL("aten::signbit.out", signbit_out, "TT");

}  // namespace pteron
