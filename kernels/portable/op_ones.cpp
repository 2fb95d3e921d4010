// aten::ones.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
// out (of shape size) = 1 in out's dtype.
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error ones_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::ones.out";
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, out));
  fill_with_bits(out, scalar_bits(EValue::from_int(1), out.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::ones.out", ones_out, "LT");

}  // namespace pteron
