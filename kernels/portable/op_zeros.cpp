// aten::zeros.out(SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
// out (of shape size) = 0 in out's dtype (zero bits are 0 in every dtype).
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/fill.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error zeros_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::zeros.out";
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_out_size_list(kOp, args[0]->int_list, out));
  fill_with_bits(out, 0);
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::zeros.out", zeros_out, "LT");

}  // namespace pteron
