// The GEMM's register tile: an MR x NR micro-kernel and its shape, chosen once per process for
// the machine (internal to gemm.cpp; kernels use gemm.h).
#pragma once

#include <cstdint>

namespace pteron {

// Largest tile rows and columns in this build, for arrays on the stack (small on
// microcontrollers, whose only tile is the baseline one).
#if (defined(__x86_64__) || defined(_M_X64)) && defined(__GNUC__)
constexpr int kGemmMaxMR = 8, kGemmMaxNR = 32;
#elif defined(__aarch64__)
constexpr int kGemmMaxMR = 8, kGemmMaxNR = 8;
#else
constexpr int kGemmMaxMR = 4, kGemmMaxNR = 8;
#endif
constexpr int kGemmMaxTileElems = kGemmMaxMR * kGemmMaxNR;

template <typename Acc>
struct GemmTile {
  int mr, nr;
  // acc (mr x nr, row-major) += A panel (kc x mr) * B panel (kc x nr).
  void (*kernel)(int64_t kc, const Acc* a, const Acc* b, Acc* acc);
};

// Number of tiles in this build, and the index of the best one for this machine (tiles are
// ordered by vector width; 0 is the build's baseline and runs everywhere).
int gemm_tiles();
int gemm_best_tile();
template <typename Acc>
const GemmTile<Acc>& gemm_tile(int index);

}  // namespace pteron
