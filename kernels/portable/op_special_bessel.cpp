// torch.special's Bessel functions, one kernel each (the family in one file: they differ only in
// the function and its limits, util/bessel.h):
//   aten::special_bessel_j0 / j1 / y0 / y1.out(Tensor self, *, Tensor(a!) out)
//   aten::special_modified_bessel_i0 / i1 / k0 / k1.out(Tensor self, *, Tensor(a!) out)
//   aten::special_scaled_modified_bessel_k0 / k1.out(Tensor x, *, Tensor(a!) out)
//   aten::special_i0e / i1 / i1e.out(Tensor self, *, Tensor(a!) out)
// Computed in double and rounded once (ATen evaluates its Cephes polynomials in the tensor's
// dtype); integer and bool inputs give a floating out. Not decomposed by run_decompositions().
#include "kernels/portable/util/bessel.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

#define PTERON_BESSEL_KERNEL(name, expr)                                                       \
  Error name##_out(KernelContext&, Span<EValue*> args) {                                       \
    return unary_float_op_in_double("aten::" #name ".out", *args[0]->tensor, *args[1]->tensor, \
                                    [](double x) { return expr; });                            \
  }

PTERON_BESSEL_KERNEL(special_bessel_j0, special::bessel_j(0, x))
PTERON_BESSEL_KERNEL(special_bessel_j1, special::bessel_j(1, x))
PTERON_BESSEL_KERNEL(special_bessel_y0, special::bessel_y(0, x))
PTERON_BESSEL_KERNEL(special_bessel_y1, special::bessel_y(1, x))
PTERON_BESSEL_KERNEL(special_modified_bessel_i0, special::bessel_i(0, x, false))
PTERON_BESSEL_KERNEL(special_modified_bessel_i1, special::bessel_i(1, x, false))
PTERON_BESSEL_KERNEL(special_modified_bessel_k0, special::bessel_k(0, x, false))
PTERON_BESSEL_KERNEL(special_modified_bessel_k1, special::bessel_k(1, x, false))
PTERON_BESSEL_KERNEL(special_scaled_modified_bessel_k0, special::bessel_k(0, x, true))
PTERON_BESSEL_KERNEL(special_scaled_modified_bessel_k1, special::bessel_k(1, x, true))
PTERON_BESSEL_KERNEL(special_i0e, special::bessel_i(0, x, true))
PTERON_BESSEL_KERNEL(special_i1, special::bessel_i(1, x, false))
PTERON_BESSEL_KERNEL(special_i1e, special::bessel_i(1, x, true))

#undef PTERON_BESSEL_KERNEL

}  // namespace

PTERON_KERNEL("aten::special_bessel_j0.out", special_bessel_j0_out, "TT");
PTERON_KERNEL("aten::special_bessel_j1.out", special_bessel_j1_out, "TT");
PTERON_KERNEL("aten::special_bessel_y0.out", special_bessel_y0_out, "TT");
PTERON_KERNEL("aten::special_bessel_y1.out", special_bessel_y1_out, "TT");
PTERON_KERNEL("aten::special_modified_bessel_i0.out", special_modified_bessel_i0_out, "TT");
PTERON_KERNEL("aten::special_modified_bessel_i1.out", special_modified_bessel_i1_out, "TT");
PTERON_KERNEL("aten::special_modified_bessel_k0.out", special_modified_bessel_k0_out, "TT");
PTERON_KERNEL("aten::special_modified_bessel_k1.out", special_modified_bessel_k1_out, "TT");
PTERON_KERNEL("aten::special_scaled_modified_bessel_k0.out", special_scaled_modified_bessel_k0_out,
              "TT");
PTERON_KERNEL("aten::special_scaled_modified_bessel_k1.out", special_scaled_modified_bessel_k1_out,
              "TT");
PTERON_KERNEL("aten::special_i0e.out", special_i0e_out, "TT");
PTERON_KERNEL("aten::special_i1.out", special_i1_out, "TT");
PTERON_KERNEL("aten::special_i1e.out", special_i1e_out, "TT");

}  // namespace pteron
