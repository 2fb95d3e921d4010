// Which host paths of the int8 kernels this CPU runs (hosted builds): decided once, capped by
// PTERON_ISA like every run-time ISA choice (runtime/platform/cpu_isa.h), so PTERON_ISA=avx2
// runs the scalar reference.
#pragma once

namespace pteron::cortex_m::host {

// AVX2 (every kernel with a host path: the slower tables).
bool has_avx2();
// AVX-512 F, BW and VL (the elementwise kernels).
bool has_avx512();
// ... and VNNI's 8-bit dot products (the convolution's tile).
bool has_avx512_vnni();
// aarch64's dot-product extension (`sdot`: the convolution's tile; NEON itself is always there).
bool has_neon_dot();

// Whether the host paths run at all (default: yes). Tests turn them off to run the scalar
// reference on the same inputs in the same process (as set_use_simd does on Cortex-M builds).
bool host_paths_enabled();
void set_host_paths_enabled(bool on);

}  // namespace pteron::cortex_m::host
