// vector_loops.h over NEON (aarch64's baseline).
#include "kernels/cortex_m/host/vec_neon.h"
#include "kernels/cortex_m/host/vector_loops.h"

namespace pteron::cortex_m::host {

const VectorKernels kNeonKernels = vector_kernels<Neon>();

}  // namespace pteron::cortex_m::host
