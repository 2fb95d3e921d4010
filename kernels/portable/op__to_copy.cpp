// aten::_to_copy.out(Tensor self, *, bool non_blocking=False, MemoryFormat? memory_format=None,
//                    Tensor(a!) out)
// out = self converted to out's dtype (any to any, C++ cast semantics like torch: float -> int
// truncates, x -> bool is x != 0; a real dtype -> complex gets imaginary 0). memory_format is not
// read: out's own dim order (planned by the compiler) is the layout written.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/complex_elementwise.h"
#include "kernels/portable/util/copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error to_copy_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_to_copy.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  if (self.dim() > kMaxTensorDim) {
    return fail(Error::NotSupported, "%s: rank %d above %d", kOp, self.dim(), kMaxTensorDim);
  }
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (is_complex(out.dtype()) && !is_complex(self.dtype())) {
    return complex_from_real(kOp, self, out);
  }
  if (!copy_convert(self, out)) {
    return fail(Error::NotSupported, "%s: dtype %s -> %s not supported", kOp,
                scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_to_copy.out", to_copy_out, "TBiT");

}  // namespace pteron
