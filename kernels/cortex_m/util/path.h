// Which code path the Cortex-M kernels take. MVE (Helium) builds have both the scalar
// reference and the vector path; a test firmware switches between them to check that they give
// the same bits. Host builds only have the scalar path.
#pragma once

#include "kernels/cortex_m/util/requantize.h"

namespace pteron::cortex_m {

#if PTERON_CORTEX_M_MVE
// Defined in path.cpp; constant-initialised, so no start-up code.
extern bool g_use_mve;
inline bool use_mve() { return g_use_mve; }
inline void set_use_mve(bool on) { g_use_mve = on; }
#else
constexpr bool use_mve() { return false; }
inline void set_use_mve(bool) {}
#endif

}  // namespace pteron::cortex_m
