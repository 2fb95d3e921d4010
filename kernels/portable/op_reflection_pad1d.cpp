// aten::reflection_pad1d.out(Tensor self, SymInt[2] padding, *, Tensor(a!) out) -> Tensor(a!)
// The last 1 dim(s) padded by mirroring without repeating the edge (util/pad_modes.h).
#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error reflection_pad1d_out(KernelContext&, Span<EValue*> args) {
  return pad_modes_out("aten::reflection_pad1d.out", 1, PadMode::Reflect, args);
}

}  // namespace

PTERON_KERNEL("aten::reflection_pad1d.out", reflection_pad1d_out, "TLT");

}  // namespace pteron
