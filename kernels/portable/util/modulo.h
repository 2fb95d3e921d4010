// fmod and remainder differ only in whose sign the result takes (see util/divide.h), so their
// Tensor and Scalar out-variants share these bodies. `value(x, y, &zero)` computes one element
// and sets `zero` on an integer division by zero, which is an error (torch raises too).
#pragma once

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// args: self, other, out.
template <typename ValueFn>
Error modulo_tensor_out(const char* op, const char* name, Span<EValue*> args, ValueFn value) {
  bool zero = false;
  PTERON_TRY(binary_elementwise(op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                kRealTypes, [&](auto x, auto y) { return value(x, y, &zero); }));
  if (zero) return fail(Error::InvalidArgument, "%s: integer %s by zero", op, name);
  return Error::Ok;
}

// args: self, other (a Scalar), out.
template <typename ValueFn>
Error modulo_scalar_out(const char* op, const char* name, Span<EValue*> args, ValueFn value) {
  const ScalarArg other(*args[1]);
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_scalar_fits_out(op, other, out));
  const Tensor& self = *args[0]->tensor;
  if (!other.floating && other.i == 0 && !is_floating(self.dtype())) {
    return fail(Error::InvalidArgument, "%s: integer %s by zero", op, name);
  }
  bool zero = false;  // cannot be set: zero divisors were rejected above
  return unary_elementwise<kAllTypes, kRealTypes>(
      op, self, out, [&](auto x) { return value(x, other.as<decltype(x)>(), &zero); });
}

}  // namespace pteron
