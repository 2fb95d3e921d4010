#include "kernels/cortex_m/util/path.h"

namespace pteron::cortex_m {
#if PTERON_CORTEX_M_MVE
bool g_use_mve = true;
#endif
}  // namespace pteron::cortex_m
