// aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out)
// out = min(max(self, min_val), max_val); ReLU6 is hardtanh(0, 6). NaN stays NaN.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error hardtanh_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::hardtanh.out";
  const ScalarArg lo(*args[1]), hi(*args[2]);
  return unary_elementwise<kRealTypes, kRealTypes>(kOp, *args[0]->tensor, *args[3]->tensor,
                                                   [lo, hi](auto x) {
                                                     using C = decltype(x);
                                                     const C l = lo.as<C>(), h = hi.as<C>();
                                                     return x < l ? l : (x > h ? h : x);
                                                   });
}

}  // namespace

PTERON_KERNEL("aten::hardtanh.out", hardtanh_out, "TSST");

}  // namespace pteron
