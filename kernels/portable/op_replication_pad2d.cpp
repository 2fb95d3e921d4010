// aten::replication_pad2d.out(Tensor self, SymInt[4] padding, *, Tensor(a!) out) -> Tensor(a!)
// The last 2 dim(s) padded by repeating the edge element (util/pad_modes.h).
#include "kernels/portable/util/pad_modes.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error replication_pad2d_out(KernelContext&, Span<EValue*> args) {
  return pad_modes_out("aten::replication_pad2d.out", 2, PadMode::Replicate, args);
}

}  // namespace

PTERON_KERNEL("aten::replication_pad2d.out", replication_pad2d_out, "TLT");

}  // namespace pteron
