// The GEMM's register tile: an MR x NR micro-kernel and its shape, chosen once per process for
// the machine (internal to gemm.cpp; kernels use gemm.h).
#pragma once

#include <cstdint>

namespace pteron {

// Largest MR * NR of any tile, for accumulator arrays on the stack.
constexpr int kGemmMaxTileElems = 256;

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
