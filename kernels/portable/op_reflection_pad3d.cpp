// aten::reflection_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
// The last 3 dim(s) padded by mirroring without repeating the edge (util/pad_modes.h).
#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error reflection_pad3d_out(KernelContext&, Span<EValue*> args) {
  return pad_modes_out("aten::reflection_pad3d.out", 3, PadMode::Reflect, args);
}

}  // namespace

PTERON_KERNEL("aten::reflection_pad3d.out", reflection_pad3d_out, "TLT");

}  // namespace pteron
