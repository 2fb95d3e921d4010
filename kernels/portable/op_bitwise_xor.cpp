// aten::bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// Integer and bool tensors only (as in torch); bool is logical xor.
#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error bitwise_xor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::bitwise_xor.Tensor_out";
  PTERON_TRY(check_args(kOp, args, "TTT"));
  Tensor& out = *args[2]->tensor;
  if (!is_integral(out.dtype(), /*include_bool=*/true)) {
    return fail(Error::NotSupported, "%s: out dtype %s is not an integer or bool type", kOp,
                scalar_type_name(out.dtype()));
  }
  return binary_elementwise(kOp, *args[0]->tensor, *args[1]->tensor, out, kIntTypes | kBoolType,
                            [](auto x, auto y) {
                              using C = decltype(x);
                              // Mixed-dtype calls compute in double: go through int64.
                              if constexpr (std::is_floating_point_v<C>) {
                                return static_cast<C>(static_cast<int64_t>(x) ^ static_cast<int64_t>(y));
                              } else {
                                return static_cast<C>(x ^ y);
                              }
                            });
}

}  // namespace

PTERON_KERNEL("aten::bitwise_xor.Tensor_out", bitwise_xor_out);

}  // namespace pteron
