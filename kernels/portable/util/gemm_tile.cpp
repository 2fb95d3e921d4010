#include "kernels/portable/util/gemm_tile.h"

#include "runtime/platform/cpu_isa.h"

namespace pteron {
namespace {

// acc += A * B over kc steps of one broadcast a[i] times NR contiguous b values per row. The
// accumulators live in a local array and every loop but k is fully unrolled, which is what lets
// GCC and Clang keep the tile in vector registers.
template <typename Acc, int MR, int NR>
[[gnu::always_inline]] inline void micro_kernel_body(int64_t kc, const Acc* __restrict a,
                                                     const Acc* __restrict b,
                                                     Acc* __restrict acc_io) {
  static_assert(MR <= kGemmMaxMR && NR <= kGemmMaxNR, "tile larger than kGemmMax*");
  Acc acc[MR * NR];
#pragma GCC unroll 256
  for (int j = 0; j < MR * NR; ++j) acc[j] = acc_io[j];
  for (int64_t k = 0; k < kc; ++k) {
    Acc bv[NR];
#pragma GCC unroll 64
    for (int j = 0; j < NR; ++j) bv[j] = b[j];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      const Acc ai = a[i];
#pragma GCC unroll 64
      for (int j = 0; j < NR; ++j) acc[i * NR + j] = acc[i * NR + j] + ai * bv[j];
    }
    a += MR;
    b += NR;
  }
#pragma GCC unroll 256
  for (int j = 0; j < MR * NR; ++j) acc_io[j] = acc[j];
}

template <typename Acc, int MR, int NR>
[[gnu::noinline]] void micro_kernel(int64_t kc, const Acc* a, const Acc* b, Acc* acc) {
  micro_kernel_body<Acc, MR, NR>(kc, a, b, acc);
}

// Baseline tile for the build's target: sized so the accumulators fit its vector registers.
#if defined(__AVX512F__)
constexpr int kMR = 8, kNR = 32;
#elif defined(__AVX2__)
constexpr int kMR = 4, kNR = 16;
#elif defined(__aarch64__)
constexpr int kMR = 8, kNR = 8;  // 32 NEON registers
#elif defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
constexpr int kMR = 4, kNR = 4;  // Cortex-M: scalar FPU or 8 MVE registers
#else
constexpr int kMR = 4, kNR = 8;  // SSE2 / 128-bit SIMD with 16 registers
#endif

// On x86-64 the same body is compiled again for AVX2 and AVX-512 (function attributes, no
// intrinsics) and chosen at run time, so a baseline build uses the machine's vector width.
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__) && !defined(__AVX512F__)
#define PTERON_GEMM_X86_DISPATCH 1
template <typename Acc, int MR, int NR>
[[gnu::noinline, gnu::target("avx2,fma")]] void micro_kernel_avx2(int64_t kc, const Acc* a,
                                                                  const Acc* b, Acc* acc) {
  micro_kernel_body<Acc, MR, NR>(kc, a, b, acc);
}
template <typename Acc, int MR, int NR>
[[gnu::noinline, gnu::target("avx512f,avx512vl,avx2,fma")]] void micro_kernel_avx512(int64_t kc,
                                                                                     const Acc* a,
                                                                                     const Acc* b,
                                                                                     Acc* acc) {
  micro_kernel_body<Acc, MR, NR>(kc, a, b, acc);
}
#endif

// Doubles take half as many columns per register.
template <typename Acc>
constexpr int lanes_scale() {
  return sizeof(Acc) == 8 ? 2 : 1;
}

template <typename Acc>
const GemmTile<Acc> kTiles[] = {
    {kMR, kNR / lanes_scale<Acc>(), &micro_kernel<Acc, kMR, kNR / lanes_scale<Acc>()>},
#if defined(PTERON_GEMM_X86_DISPATCH)
    {4, 16 / lanes_scale<Acc>(), &micro_kernel_avx2<Acc, 4, 16 / lanes_scale<Acc>()>},
    {8, 32 / lanes_scale<Acc>(), &micro_kernel_avx512<Acc, 8, 32 / lanes_scale<Acc>()>},
#endif
};

}  // namespace

int gemm_tiles() {
#if defined(PTERON_GEMM_X86_DISPATCH)
  return 3;
#else
  return 1;
#endif
}

int gemm_best_tile() {
#if defined(PTERON_GEMM_X86_DISPATCH)
  const X86Level level = x86_level_allowed();  // the CPU's, or lower with PTERON_ISA
  if (level >= X86Level::Avx512) return 2;
  if (level >= X86Level::Avx2) return 1;
#endif
  return 0;
}

template <typename Acc>
const GemmTile<Acc>& gemm_tile(int index) {
  return kTiles<Acc>[index];
}

template const GemmTile<float>& gemm_tile<float>(int);
template const GemmTile<double>& gemm_tile<double>(int);

}  // namespace pteron
