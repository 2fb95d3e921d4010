// Which code path the Cortex-M kernels take. Builds for a core with MVE (Cortex-M55) have the
// scalar reference and the MVE path; builds for a core with only the DSP extension (Cortex-M4,
// Cortex-M7) have the scalar reference and the DSP path. A test firmware switches between the
// two to check that they give the same bits. Hosted builds pick their host paths (host/host_isa.h)
// by the CPU instead.
#pragma once

#include "kernels/cortex_m/util/requantize.h"

namespace pteron::cortex_m {

#if PTERON_CORTEX_M_MVE || PTERON_CORTEX_M_DSP
// Defined in path.cpp; constant-initialised, so no start-up code.
extern bool g_use_simd;
inline void set_use_simd(bool on) { g_use_simd = on; }
#else
inline void set_use_simd(bool) {}
#endif

#if PTERON_CORTEX_M_MVE
inline bool use_mve() { return g_use_simd; }
#else
constexpr bool use_mve() { return false; }
#endif

#if PTERON_CORTEX_M_DSP
inline bool use_dsp() { return g_use_simd; }
#else
constexpr bool use_dsp() { return false; }
#endif

}  // namespace pteron::cortex_m
