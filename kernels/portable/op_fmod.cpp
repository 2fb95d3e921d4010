// aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// C fmod: the result takes the dividend's sign. Integer fmod by zero is an error.
#include "kernels/portable/util/divide.h"
#include "kernels/portable/util/modulo.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr auto kFmodValue = [](auto x, auto y, bool* zero) { return fmod_value(x, y, zero); };

Error fmod_tensor_out(KernelContext&, Span<EValue*> args) {
  return modulo_tensor_out("aten::fmod.Tensor_out", "fmod", args, kFmodValue);
}

Error fmod_scalar_out(KernelContext&, Span<EValue*> args) {
  return modulo_scalar_out("aten::fmod.Scalar_out", "fmod", args, kFmodValue);
}

}  // namespace

PTERON_KERNEL("aten::fmod.Tensor_out", fmod_tensor_out, "TTT");
PTERON_KERNEL("aten::fmod.Scalar_out", fmod_scalar_out, "TST");

}  // namespace pteron
