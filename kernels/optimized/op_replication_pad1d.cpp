// aten::replication_pad1d.out for row-major tensors of any dtype: rows copied with their pads
// written around them, split over threads (util/pad_rows.h); the rest runs the portable kernel.
#include "kernels/optimized/util/pad_rows.h"

namespace pteron::optimized {
namespace {

Error replication_pad1d_out(KernelContext& ctx, Span<EValue*> args) {
  return pad_rows_out("aten::replication_pad1d.out", 1, PadMode::Replicate, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::replication_pad1d.out", replication_pad1d_out, "TLT");

}  // namespace pteron::optimized
