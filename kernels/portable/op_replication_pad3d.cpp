// aten::replication_pad3d.out(Tensor self, SymInt[6] padding, *, Tensor(a!) out) -> Tensor(a!)
// The last 3 dim(s) padded by repeating the edge element (util/pad_modes.h).
#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error replication_pad3d_out(KernelContext&, Span<EValue*> args) {
  return pad_modes_out("aten::replication_pad3d.out", 3, PadMode::Replicate, args);
}

}  // namespace

PTERON_KERNEL("aten::replication_pad3d.out", replication_pad3d_out, "TLT");

}  // namespace pteron
