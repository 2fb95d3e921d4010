// aten::polar.out(Tensor abs, Tensor angle, *, Tensor(a!) out)
// out = abs * (cos(angle) + i sin(angle)) with broadcasting: float32 parts give complex64, float64
// complex128, as torch. Llama's reference RoPE builds its rotations with it.
#include <cmath>

#include "kernels/portable/util/complex_elementwise.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::polar.out";

Error polar_out(KernelContext&, Span<EValue*> args) {
  const Tensor& abs = *args[0]->tensor;
  const Tensor& angle = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_parts_to_complex(kOp, abs, angle, out));
  return complex_binary(kOp, abs, angle, out, [](auto r, auto theta) {
    return decltype(r){r.re * std::cos(theta.re), r.re * std::sin(theta.re)};
  });
}

}  // namespace

PTERON_KERNEL("aten::polar.out", polar_out, "TTT");

}  // namespace pteron
