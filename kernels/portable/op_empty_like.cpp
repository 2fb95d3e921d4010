// aten::empty_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) ->
// Tensor(a!) out of self's shape, contents unspecified (as torch.empty_like): only the shape is
// checked.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error empty_like_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::empty_like.out";
  PTERON_TRY(expect_out_like(kOp, *args[0]->tensor, *args[2]->tensor));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::empty_like.out", empty_like_out, "TiT");

}  // namespace pteron
