// aten::randn_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out)
// out = standard normal values from pteron's seeded generator (util/random.h); floating dtypes.
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/random.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error randn_like_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::randn_like.out";
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_out_like(kOp, *args[0]->tensor, out));
  return fill_random(kOp, out, /*normal=*/true);
}

}  // namespace

PTERON_KERNEL("aten::randn_like.out", randn_like_out, "TiT");

}  // namespace pteron
