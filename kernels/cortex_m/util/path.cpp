#include "kernels/cortex_m/util/path.h"

namespace pteron::cortex_m {
#if PTERON_CORTEX_M_MVE || PTERON_CORTEX_M_DSP
bool g_use_simd = true;
#endif
}  // namespace pteron::cortex_m
