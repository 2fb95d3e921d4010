// IsaKernels for AVX-512F (x86-64 only; this file is compiled with -mavx512f -mfma).
#if defined(__x86_64__)
#define PTERON_ISA avx512
#define PTERON_ISA_NAME "avx512"
#include "kernels/optimized/simd/isa_impl.h"
#endif
