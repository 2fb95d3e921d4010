// Shared body of the bitwise_{and,or,xor}.Tensor_out kernels: integer and bool tensors only
// (as in torch), broadcasting, bool results are the logical operation.
#pragma once

#include <type_traits>

#include "kernels/portable/util/elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// `f` combines two int64 values; it is applied in each dtype's own integer type.
template <typename Fn>
Error bitwise_tensor_out(const char* op, Span<EValue*> args, Fn f) {
  PTERON_TRY(check_args(op, args, "TTT"));
  Tensor& out = *args[2]->tensor;
  if (!is_integral(out.dtype(), /*include_bool=*/true)) {
    return fail(Error::NotSupported, "%s: out dtype %s is not an integer or bool type", op,
                scalar_type_name(out.dtype()));
  }
  return binary_elementwise(op, *args[0]->tensor, *args[1]->tensor, out, kIntTypes | kBoolType,
                            [f](auto x, auto y) {
                              using C = decltype(x);
                              // Mixed-dtype calls compute in double: go through int64.
                              if constexpr (std::is_floating_point_v<C>) {
                                return static_cast<C>(f(static_cast<int64_t>(x), static_cast<int64_t>(y)));
                              } else {
                                return static_cast<C>(f(x, y));
                              }
                            });
}

}  // namespace pteron
