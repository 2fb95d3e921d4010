// aten::empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)
// out of shape size, contents unspecified (as torch.empty): only the shape is checked.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error empty_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::empty.out";
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, *args[2]->tensor));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::empty.out", empty_out, "LiT");

}  // namespace pteron
