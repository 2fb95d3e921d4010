// The per-CPU pieces of the optimized SGEMM (internal to sgemm.cpp and its tests): a register-
// blocked micro-kernel, an optional fast packer for B stored as [N, K], and a matrix-vector
// kernel for the same layout. Each instruction set provides a table entry; sgemm.cpp takes the
// best one the CPU supports.
#pragma once

#include <cstdint>

namespace pteron::optimized {

// C tile (mr x nr at c, rows ldc apart) = alpha * (A panel x B panel) + (load_c ? C : 0)
//                                         + (bias ? bias[0, nr) on every row : 0)
//                                         + (row_bias ? row_bias[i] on row i : 0),
// then, when clamp is not null, clamped to [clamp[0], clamp[1]] (NaN stays NaN) while the tile
// is still in registers: a fused ReLU / ReLU6 / hardtanh on the last K block.
// A panel: kc steps of MR values (a[k * MR + i], row i of the tile); B panel: kc steps of NR
// values (b[k * NR + j]). mr <= MR and nr <= NR; rows and columns past them are not written.
using SgemmUkernel = void (*)(int mr, int nr, int64_t kc, const float* a, const float* b, float* c,
                              int64_t ldc, float alpha, bool load_c, const float* bias,
                              const float* row_bias, const float* clamp);

// Packs one B panel from B stored with columns contiguous along K (linear weights [N, K]):
// dst[k * NR + j] = src[j * ld + k] for k < kc, j < nr; zero for nr <= j < NR.
using SgemmPackTransposed = void (*)(const float* src, int64_t ld, int64_t kc, int nr, int NR,
                                     float* dst);

// y[j] = alpha * dot(x, w + j * ldw) + beta * y[j] + (bias ? bias[j] : 0) for j < n, dots of
// length k over contiguous x and rows of w. beta == 0 does not read y.
using SgemvRows = void (*)(int64_t n, int64_t k, const float* x, const float* w, int64_t ldw,
                           float* y, float alpha, float beta, const float* bias);

struct SgemmKernel {
  const char* name;
  int mr, nr;
  SgemmUkernel ukernel;
  SgemmPackTransposed pack_transposed;
  SgemvRows gemv_rows;
  bool (*supported)();
};

// Table entries by instruction set; null when this build has no such kernel (wrong CPU family).
const SgemmKernel* sgemm_scalar_kernel();  // plain C++, any target
const SgemmKernel* sgemm_vec128_kernel();  // GCC/Clang generic 128-bit vectors: NEON's tile
const SgemmKernel* sgemm_neon_kernel();    // aarch64
const SgemmKernel* sgemm_avx2_kernel();    // x86-64 AVX2 + FMA
const SgemmKernel* sgemm_avx512_kernel();  // x86-64 AVX-512F

// Portable building blocks shared by the kernels.
void sgemm_pack_transposed_generic(const float* src, int64_t ld, int64_t kc, int nr, int NR,
                                   float* dst);
void sgemv_rows_generic(int64_t n, int64_t k, const float* x, const float* w, int64_t ldw, float* y,
                        float alpha, float beta, const float* bias);

// Partial-tile epilogue: C (mr x nr) from an accumulator tile `acc` with rows `ld` apart, as
// SgemmUkernel describes.
inline void sgemm_store_tile(const float* acc, int ld, int mr, int nr, float* c, int64_t ldc,
                             float alpha, bool load_c, const float* bias, const float* row_bias,
                             const float* clamp) {
  for (int i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    const float* src = acc + i * ld;
    for (int j = 0; j < nr; ++j) {
      float v = alpha * src[j];
      if (load_c) v += row[j];
      if (bias != nullptr) v += bias[j];
      if (row_bias != nullptr) v += row_bias[i];
      if (clamp != nullptr) {  // one-sided selects: NaN stays
        v = v < clamp[0] ? clamp[0] : v;
        v = v > clamp[1] ? clamp[1] : v;
      }
      row[j] = v;
    }
  }
}

}  // namespace pteron::optimized
