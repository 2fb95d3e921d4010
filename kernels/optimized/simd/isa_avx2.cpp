// IsaKernels for AVX2 + FMA (x86-64 only; this file is compiled with -mavx2 -mfma).
#if defined(__x86_64__)
#define PTERON_ISA avx2
#define PTERON_ISA_NAME "avx2"
#include "kernels/optimized/simd/isa_impl.h"
#endif
