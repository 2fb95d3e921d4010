// aten::rand.out(SymInt[] size, *, Tensor(a!) out)
// out = uniform in [0, 1) values from pteron's seeded generator (util/random.h); floating dtypes.
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/random.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error rand_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::rand.out";
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, out));
  return fill_random(kOp, out, /*normal=*/false);
}

}  // namespace

PTERON_KERNEL("aten::rand.out", rand_out, "LT");

}  // namespace pteron
