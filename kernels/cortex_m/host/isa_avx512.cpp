// vector_loops.h over AVX-512 (F, BW, VL). Compiled with those flags and used only where
// host_isa.h says the CPU has them.
#include "kernels/cortex_m/host/vec_avx512.h"
#include "kernels/cortex_m/host/vector_loops.h"

namespace pteron::cortex_m::host {

const VectorKernels kAvx512Kernels = vector_kernels<Avx512>();

}  // namespace pteron::cortex_m::host
