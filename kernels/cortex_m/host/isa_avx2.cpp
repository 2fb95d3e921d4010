// vector_loops.h over AVX2. Compiled with -mavx2 and used only where host_isa.h says the CPU
// has it.
#include "kernels/cortex_m/host/vec_avx2.h"
#include "kernels/cortex_m/host/vector_loops.h"

namespace pteron::cortex_m::host {

const VectorKernels kAvx2Kernels = vector_kernels<Avx2>();

}  // namespace pteron::cortex_m::host
