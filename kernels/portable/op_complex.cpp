// aten::complex.out(Tensor real, Tensor imag, *, Tensor(a!) out)
// out = real + i imag with broadcasting: float32 parts give complex64, float64 complex128, as
// torch.complex. Spectral layers (Fourier neural operators) build their complex weights with it.
#include "kernels/portable/util/complex_elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::complex.out";

Error complex_out(KernelContext&, Span<EValue*> args) {
  const Tensor& real = *args[0]->tensor;
  const Tensor& imag = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_parts_to_complex(kOp, real, imag, out));
  return complex_binary(kOp, real, imag, out,
                        [](auto re, auto im) { return decltype(re){re.re, im.re}; });
}

}  // namespace

PTERON_KERNEL("aten::complex.out", complex_out, "TTT");

}  // namespace pteron
