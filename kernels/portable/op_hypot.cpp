// aten::hypot.out(Tensor self, Tensor other, *, Tensor(a!) out)
// out = sqrt(self^2 + other^2) without intermediate overflow (std::hypot), with broadcasting.
// Floating inputs only, as in torch.
#include <cmath>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error hypot_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::hypot.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  if (!is_floating(a.dtype()) || !is_floating(b.dtype())) {
    return fail(Error::NotSupported, "%s: floating inputs only, got %s and %s", kOp,
                scalar_type_name(a.dtype()), scalar_type_name(b.dtype()));
  }
  return binary_float_elementwise(kOp, a, b, *args[2]->tensor,
                                  [](auto x, auto y) { return std::hypot(x, y); });
}

}  // namespace

PTERON_KERNEL("aten::hypot.out", hypot_out, "TTT");

}  // namespace pteron
