// aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error add_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::add.out";
  PTERON_TRY(check_args(kOp, args, "TTST"));
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  if (is_floating(out.dtype())) {
    const double alpha = args[2]->scalar_as_double();
    return binary_elementwise(kOp, a, b, out, kRealTypes,
                              [alpha](auto x, auto y) { return x + static_cast<decltype(y)>(alpha) * y; });
  }
  const int64_t alpha = args[2]->scalar_as_int();
  return binary_elementwise(kOp, a, b, out, kAllTypes, [alpha](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, bool>) return static_cast<bool>(x || (alpha != 0 && y));
    else return static_cast<C>(x + static_cast<C>(alpha) * y);
  });
}

}  // namespace

PTERON_KERNEL("aten::add.out", add_out);

}  // namespace pteron
