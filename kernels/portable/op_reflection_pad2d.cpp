// aten::reflection_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
// The last 2 dim(s) padded by mirroring without repeating the edge (util/pad_modes.h).
#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error reflection_pad2d_out(KernelContext&, Span<EValue*> args) {
  return pad_modes_out("aten::reflection_pad2d.out", 2, PadMode::Reflect, args);
}

}  // namespace

PTERON_KERNEL("aten::reflection_pad2d.out", reflection_pad2d_out, "TLT");

}  // namespace pteron
