// aten::ones_like.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) ->
// Tensor(a!) out (of self's shape, its own dim order: memory_format is the planner's choice) = 1.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error ones_like_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::ones_like.out";
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(expect_out_like(kOp, *args[0]->tensor, out));
  fill_with_bits(out, scalar_bits(EValue::from_int(1), out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::ones_like.out", ones_like_out, "TiT");

}  // namespace pteron
