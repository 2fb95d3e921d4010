// aten::index_put.out(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False, *,
// Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/index_put.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// out = self; out[indices] = values (or += with accumulate, duplicates adding up), values
// broadcast to the indexed shape. A KV-cache write: out is usually self's own memory.
Error index_put_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::index_put.out";
  return index_put_into(ctx, kOp, *args[0]->tensor, args[1]->tensor_list, *args[2]->tensor,
                        args[3]->b, *args[4]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::index_put.out", index_put_out, "TOTBT");

}  // namespace pteron
