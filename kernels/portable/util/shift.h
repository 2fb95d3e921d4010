// Bit shifts with torch's CPU semantics, shared by bitwise_{left,right}_shift and
// __lshift__/__rshift__: a shift by a negative amount or by the type's width or more gives 0
// (left) or fills with the sign bit (right; 0 for unsigned types), where C++ leaves it undefined.
#pragma once

#include <climits>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

template <bool kLeft, typename T>
inline T shift_value(T a, T b) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = static_cast<int>(sizeof(T) * CHAR_BIT);
  const bool out_of_range = (std::is_signed_v<T> && b < 0) || static_cast<U>(b) >= U(kBits);
  if constexpr (kLeft) {
    return out_of_range ? T(0) : static_cast<T>(static_cast<U>(a) << static_cast<int>(b));
  } else {
    if (!out_of_range) return static_cast<T>(a >> static_cast<int>(b));
    if constexpr (std::is_signed_v<T>)
      return static_cast<T>(a >> (kBits - 1));
    else
      return T(0);
  }
}

// The shift done in `dtype` (the out dtype) on values the mixed-dtype path hands over as
// doubles: each operand is first cast to that dtype, as torch's type promotion does.
template <bool kLeft>
inline double shift_in_dtype(ScalarType dtype, double a, double b) {
  double r = 0;
  dispatch_dtype_in<kIntTypes>(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    r = static_cast<double>(shift_value<kLeft>(store_value<T>(a), store_value<T>(b)));
  });
  return r;
}

// Integer (or bool, promoted) operands, integer out: torch has no float or bool shifts.
inline Error check_shift_dtypes(const char* op, const Tensor& a, const Tensor* b,
                                const Tensor& out) {
  const bool ok = is_integral(a.dtype(), /*include_bool=*/true) &&
                  (b == nullptr || is_integral(b->dtype(), /*include_bool=*/true)) &&
                  is_integral(out.dtype(), /*include_bool=*/false);
  if (!ok) {
    return fail(Error::NotSupported, "%s: shifts take integer tensors, got %s%s%s -> %s", op,
                scalar_type_name(a.dtype()), b ? ", " : "", b ? scalar_type_name(b->dtype()) : "",
                scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

// args: self, other (Tensor), out.
template <bool kLeft>
Error shift_tensor_out(const char* op, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_shift_dtypes(op, a, &b, out));
  const ScalarType dtype = out.dtype();
  return binary_elementwise(op, a, b, out, kIntTypes, [dtype](auto x, auto y) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(shift_in_dtype<kLeft>(dtype, x, y));
    else if constexpr (std::is_same_v<C, bool>)
      return x;  // instantiated by the dispatch, never called: out is an integer type
    else
      return shift_value<kLeft>(x, y);
  });
}

// args: self, other (Scalar), out.
template <bool kLeft>
Error shift_scalar_out(const char* op, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_shift_dtypes(op, a, nullptr, out));
  const ScalarArg s(*args[1]);
  if (s.floating) {
    return fail(Error::InvalidArgument, "%s: the shift amount must be an integer, got %g", op, s.d);
  }
  const ScalarType dtype = out.dtype();
  return unary_elementwise<kIntTypes | kBoolType, kIntTypes>(op, a, out, [dtype, s](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(shift_in_dtype<kLeft>(dtype, x, static_cast<double>(s.i)));
    else
      return shift_value<kLeft>(x, static_cast<C>(s.i));
  });
}

// args: self (Scalar), other (Tensor), out: the scalar shifted by each element, in out's dtype
// (the tensor's: a Python number does not promote it).
template <bool kLeft>
Error shift_scalar_tensor_out(const char* op, Span<EValue*> args) {
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_shift_dtypes(op, b, nullptr, out));
  const ScalarArg s(*args[0]);
  if (s.floating) {
    return fail(Error::InvalidArgument, "%s: the shifted value must be an integer, got %g", op,
                s.d);
  }
  const ScalarType dtype = out.dtype();
  return unary_elementwise<kIntTypes | kBoolType, kIntTypes>(op, b, out, [dtype, s](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(shift_in_dtype<kLeft>(dtype, static_cast<double>(s.i), x));
    else
      return shift_value<kLeft>(static_cast<C>(s.i), x);
  });
}

}  // namespace pteron
