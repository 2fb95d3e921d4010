// aten::_conj_physical.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// The complex conjugate, (re, im) -> (re, -im), materialised (torch.conj_physical); a copy for
// real dtypes, as torch's. The imaginary parts are negated, so their sign flips for -0.0 and
// NaN too, as std::conj does.
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

template <typename T>
void negate_imaginary(T* parts, int64_t n) {
  for (int64_t i = 0; i < n; ++i) parts[2 * i + 1] = -parts[2 * i + 1];
}

Error conj_physical_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_conj_physical.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(copy_same_dtype(kOp, self, out));  // any dim orders; out is dense
  const int64_t n = out.numel();
  switch (out.dtype()) {
    case ScalarType::ComplexHalf: {  // no half arithmetic needed: flip the sign bit
      auto* parts = static_cast<uint16_t*>(out.mutable_data());
      for (int64_t i = 0; i < n; ++i) parts[2 * i + 1] ^= 0x8000u;
      break;
    }
    case ScalarType::ComplexFloat:
      negate_imaginary(static_cast<float*>(out.mutable_data()), n);
      break;
    case ScalarType::ComplexDouble:
      negate_imaginary(static_cast<double*>(out.mutable_data()), n);
      break;
    default:
      break;  // real: the conjugate is the value itself
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_conj_physical.out", conj_physical_out, "TT");

}  // namespace pteron
