// IsaKernels for the baseline of the build target: NEON on aarch64 (always present there),
// plain scalar code elsewhere. Every CPU the build runs on can use this table.
#if defined(__aarch64__) && defined(__ARM_NEON)
#define PTERON_ISA neon
#define PTERON_ISA_NAME "neon"
#else
#define PTERON_ISA scalar
#define PTERON_ISA_NAME "scalar"
#endif
#include "kernels/optimized/simd/isa_impl.h"
