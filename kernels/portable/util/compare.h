// Shared bodies of the comparison kernels (eq, ne, lt, gt, le, ge), Tensor and Scalar forms.
#pragma once

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/predicate.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// <op>.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out). `cmp` is a transparent
// comparator (std::less<> ...). Mixed input dtypes compare in double.
template <typename Cmp>
Error compare_tensor_out(const char* op, Span<EValue*> args, Cmp cmp) {
  return binary_predicate<kAllTypes>(op, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                                     [cmp](auto x, auto y) { return cmp(x, y); });
}

// <op>.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out), compared in torch's promoted
// type: a floating tensor compares with the scalar rounded to its dtype (so a float16 tensor
// equals 0.1 where torch says so), an integer tensor with a floating scalar compares in
// float32, and an integer tensor takes an integer scalar cast to its dtype (int8 == 257 holds
// where the element is 1, as in torch); a bool tensor compares with an integer scalar as int64.
template <typename Cmp>
Error compare_scalar_out(const char* op, Span<EValue*> args, Cmp cmp) {
  const Tensor& self = *args[0]->tensor;
  ScalarArg s(*args[1]);
  if (is_floating(self.dtype())) {
    // Round the scalar to the tensor's dtype and back.
    uint64_t storage = 0;
    convert_elements(ScalarType::Double, &s.d, 1, self.dtype(), &storage, 1, 1);
    convert_elements(self.dtype(), &storage, 1, ScalarType::Double, &s.d, 1, 1);
  }
  return unary_predicate<kAllTypes>(op, self, *args[2]->tensor, [cmp, s](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>)
      return cmp(x, static_cast<C>(s.d));
    else if (s.floating)
      return cmp(static_cast<float>(x), static_cast<float>(s.d));
    else if constexpr (std::is_same_v<C, bool>)
      return cmp(static_cast<int64_t>(x), s.i);
    else
      return cmp(x, static_cast<C>(s.i));
  });
}

}  // namespace pteron
