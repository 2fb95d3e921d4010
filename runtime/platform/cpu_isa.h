// Which x86 vector instruction set kernels may dispatch to: the best the CPU has, or a lower
// one forced with the environment variable PTERON_ISA (avx512, avx2 or baseline), so figures
// for an AVX2-only machine can be measured on an AVX-512 one. Every run-time ISA choice in the
// kernel libraries (the optimized tables, the SGEMM, the portable GEMM tile) asks this one
// function, so a forced level applies to all of them at once.
#pragma once

#include <cstdint>

namespace pteron {

enum class X86Level : uint8_t { Baseline = 0, Avx2 = 1, Avx512 = 2 };

// The highest level kernels may use (Baseline on other architectures). Decided once.
X86Level x86_level_allowed();

// Whether kernels may use the CPU's 8-bit integer dot products: on x86-64 AVX-512 BW with VNNI
// (`vpdpbusd`), within x86_level_allowed(); on aarch64 Linux the dot-product extension (`sdot`);
// false elsewhere. Decided once.
bool int8_dot_product_allowed();

// The name of the vector ISA kernels run with: "avx512", "avx2", "baseline" on x86-64,
// "neon" on aarch64, "scalar" elsewhere.
const char* cpu_isa_name();

}  // namespace pteron
