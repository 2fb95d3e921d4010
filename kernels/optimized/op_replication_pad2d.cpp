// aten::replication_pad2d.out for row-major tensors of any dtype: rows copied with their pads
// written around them, split over threads (util/pad_rows.h); the rest runs the portable kernel.
#include "kernels/optimized/util/pad_rows.h"

namespace pteron::optimized {
namespace {

Error replication_pad2d_out(KernelContext& ctx, Span<EValue*> args) {
  return pad_rows_out("aten::replication_pad2d.out", 2, PadMode::Replicate, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::replication_pad2d.out", replication_pad2d_out, "TLT");

}  // namespace pteron::optimized
