// Shared body of the bitwise_{and,or,xor}.Tensor_out and .Scalar_out kernels: integer and bool
// tensors only (as in torch), broadcasting, bool results are the logical operation.
#pragma once

#include <type_traits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// `f` combines two int64 values; it is applied in each dtype's own integer type.
template <typename Fn>
Error bitwise_tensor_out(const char* op, Span<EValue*> args, Fn f) {
  Tensor& out = *args[2]->tensor;
  if (!is_integral(out.dtype(), /*include_bool=*/true)) {
    return fail(Error::NotSupported, "%s: out dtype %s is not an integer or bool type", op,
                scalar_type_name(out.dtype()));
  }
  return binary_elementwise(
      op, *args[0]->tensor, *args[1]->tensor, out, kIntTypes | kBoolType, [f](auto x, auto y) {
        using C = decltype(x);
        // Mixed-dtype calls compute in double: go through int64.
        if constexpr (std::is_floating_point_v<C>) {
          return static_cast<C>(f(static_cast<int64_t>(x), static_cast<int64_t>(y)));
        } else {
          return static_cast<C>(f(x, y));
        }
      });
}

// args: self, other (an integer or bool Scalar), out. A bool tensor with an integer scalar
// promotes to an integer out, as in torch; a floating scalar is refused (torch raises too).
template <typename Fn>
Error bitwise_scalar_out(const char* op, Span<EValue*> args, Fn f) {
  const Tensor& in = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  const ScalarArg s(*args[1]);
  if (s.floating) {
    return fail(Error::InvalidArgument, "%s: the scalar must be an integer or bool, got %g", op,
                s.d);
  }
  if (!is_integral(out.dtype(), /*include_bool=*/true)) {
    return fail(Error::NotSupported, "%s: out dtype %s is not an integer or bool type", op,
                scalar_type_name(out.dtype()));
  }
  return unary_elementwise<kIntTypes | kBoolType, kIntTypes | kBoolType>(
      op, in, out, [f, s](auto x) {
        using C = decltype(x);
        if constexpr (std::is_floating_point_v<C>) {  // mixed dtypes: exact through int64
          return static_cast<C>(f(static_cast<int64_t>(x), s.i));
        } else if constexpr (std::is_same_v<C, bool>) {
          return static_cast<bool>(f(static_cast<int64_t>(x), static_cast<int64_t>(s.i != 0)));
        } else {
          return static_cast<C>(f(x, static_cast<C>(s.i)));
        }
      });
}

}  // namespace pteron
