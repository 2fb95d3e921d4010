// aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out)
//
// The scan and its dtype rules are util/cum_scan.h's (shared with cumprod).
#include "kernels/portable/util/cum_scan.h"

namespace pteron {
namespace {

Error cumsum_out(KernelContext&, Span<EValue*> args) {
  return cum_scan::scan_out("aten::cumsum.out", args, 0, [](auto acc, auto v) { return acc + v; });
}

}  // namespace

PTERON_KERNEL("aten::cumsum.out", cumsum_out, "TIiT");

}  // namespace pteron
