// aten::empty_permuted.out(SymInt[] size, int[] physical_layout, *, Tensor(a!) out)
//     -> Tensor(a!)
// out of shape size, contents unspecified (what run_decompositions() makes of empty_like). The
// layout is out's own (the memory planner's), so physical_layout is only checked to be a
// permutation of the dims.
#include "kernels/portable/util/creation.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error empty_permuted_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::empty_permuted.out";
  const Span<const int64_t> layout = args[1]->int_list;
  const size_t rank = args[0]->int_list.size();
  PTERON_CHECK(layout.size() == rank, Error::InvalidArgument,
               "%s: physical_layout has %zu dims for %zu sizes", kOp, layout.size(), rank);
  uint64_t seen = 0;
  for (size_t d = 0; d < layout.size(); ++d) {
    PTERON_CHECK(layout[d] >= 0 && static_cast<size_t>(layout[d]) < rank && layout[d] < 64 &&
                     !(seen >> layout[d] & 1),
                 Error::InvalidArgument, "%s: physical_layout is not a permutation of the dims",
                 kOp);
    seen |= uint64_t{1} << layout[d];
  }
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, *args[2]->tensor));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::empty_permuted.out", empty_permuted_out, "LLT");

}  // namespace pteron
