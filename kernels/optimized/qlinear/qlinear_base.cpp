// Portable C++ bodies of QLinearKernels: the reference the SIMD tables are tested against, and
// the table for CPUs without one.
#include "kernels/optimized/qlinear/qlinear_impl_scalar.h"

namespace pteron::opt::qscalar {

extern const QLinearKernels kTable = {"scalar",    q8w_rows,        q4w_rows,  q8w_dequant,
                                      q4w_dequant, a8_quantize_row, a8w4_tile, 1,
                                      1,           int8_tile};

}  // namespace pteron::opt::qscalar
