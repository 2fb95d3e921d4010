// aten::sym_size.int(Tensor self, int dim) -> SymInt and aten::sym_numel(Tensor self) -> SymInt:
// the run-time sizes of a bounded dynamic program, written into the Int value after the
// arguments (ExecuTorch's prim-op convention: args..., out).
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error sym_size_int(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sym_size.int";
  PTERON_CHECK(args.size() == 3, Error::InvalidProgram, "%s: %zu arguments, expected 3", kOp,
               args.size());
  const Tensor& self = *args[0]->tensor;
  int64_t dim = args[1]->i;
  if (dim < 0) dim += self.dim();
  PTERON_CHECK(dim >= 0 && dim < self.dim(), Error::InvalidArgument,
               "%s: dim %lld out of range for a %d-d tensor", kOp,
               static_cast<long long>(args[1]->i), self.dim());
  *args[2] = EValue::from_int(self.size(static_cast<int32_t>(dim)));
  return Error::Ok;
}

Error sym_numel(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::sym_numel";
  PTERON_CHECK(args.size() == 2, Error::InvalidProgram, "%s: %zu arguments, expected 2", kOp,
               args.size());
  *args[1] = EValue::from_int(args[0]->tensor->numel());
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::sym_size.int", sym_size_int, "TII");
PTERON_KERNEL("aten::sym_numel", sym_numel, "TI");

}  // namespace pteron
