// Which host paths of the int8 kernels this CPU runs (hosted builds): decided once, capped by
// PTERON_ISA like every run-time ISA choice (runtime/platform/cpu_isa.h), so PTERON_ISA=avx2
// runs the AVX2 paths and PTERON_ISA=baseline the scalar reference.
#pragma once

namespace pteron::cortex_m::host {

// AVX2 (every kernel with a host path: the slower tables).
bool has_avx2();
// AVX-512 F, BW and VL (the vector loops; the convolution's VNNI tile also needs the 8-bit dot
// products of int8_dot_product_allowed(), runtime/platform/cpu_isa.h).
bool has_avx512();
// Whether the host paths run at all (default: yes). Tests turn them off to run the scalar
// reference on the same inputs in the same process (as set_use_simd does on Cortex-M builds).
bool host_paths_enabled();
void set_host_paths_enabled(bool on);

}  // namespace pteron::cortex_m::host
