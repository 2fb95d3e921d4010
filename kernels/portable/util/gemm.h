// Matrix multiply shared by every matmul-like portable kernel (mm, bmm, addmm, linear,
// convolution): C = alpha * A * B + beta * C on strided matrices.
//
// Cache-blocked and register-tiled in plain C++: A and B are packed into panels (scratch from
// the kernel context when it has some, small stack buffers when not) and an MR x NR
// micro-kernel that GCC/Clang -O3 auto-vectorise accumulates each C tile in registers.
// Half and BFloat16 are converted to float while packing, so every type shares the float kernel.
// On x86-64 the same micro-kernel source is also compiled for AVX2 and AVX-512 and picked at
// run time (gemm.cpp), so a baseline build still uses the machine's vector width.
#pragma once

#include <cstdint>

#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// Strided 2-D view: element (r, c) is data[r * rs + c * cs].
template <typename T>
struct MatrixRef {
  T* data;
  int64_t rs;
  int64_t cs;
};

// Produces packed panels of B for the GEMM: `pack(self, k0, kc, j0, nc, nr, dst)` writes rows
// [k0, k0 + kc) of columns [j0, j0 + nc) as ceil(nc / nr) panels one after the other; panel p
// holds kc rows of nr values for columns j0 + p * nr + [0, nr), zero past nc. The panel width
// nr is the GEMM's register tile, chosen at run time. Convolution implements a source to feed
// im2col values without materialising the im2col matrix.
template <typename Acc>
struct GemmBSource {
  void (*pack)(const void* self, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr, Acc* dst);
  const void* self;
};

// Packing memory for a series of products no larger than M x N x K, taken from the kernel
// context's scratch once so that the products of a batch, or of a convolution's groups and
// images, reuse it (the scratch allocator frees nothing until the kernel returns). Without
// scratch `buf` is null and products take a slower path that packs small tiles on the stack.
template <typename T>
struct GemmWorkspace {
  typename ComputeType<T>::type* buf = nullptr;
  int64_t kc = 0, nc = 0, mc = 0;  // block sizes the buffer holds
  int tile = 0;                    // register tile (micro-kernel) the blocks are sized for
};

// `tile` picks a register tile by index (tests cover every one); -1 takes this machine's best.
template <typename T>
GemmWorkspace<T> make_gemm_workspace(KernelContext& ctx, int64_t M, int64_t N, int64_t K,
                                     int tile = -1);

// Number of register tiles this build has (indices 0 .. count-1) and whether this CPU can run
// tile `index`.
int gemm_tile_count();
bool gemm_tile_supported(int index);

// C (M x N) = alpha * A (M x K) * B (K x N) + beta * C, for T in float, double, Half, BFloat16
// (Half/BFloat16 accumulate in float and round once). beta == 0 means C is not read (NaNs in it
// do not propagate). Any strides, including transposed operands. Never fails.
template <typename T>
void gemm(const GemmWorkspace<T>& ws, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
          MatrixRef<const T> b, MatrixRef<T> c, typename ComputeType<T>::type alpha,
          typename ComputeType<T>::type beta);

// As gemm(), with B supplied by a packer instead of a matrix.
template <typename T>
void gemm_packed_b(const GemmWorkspace<T>& ws, int64_t M, int64_t N, int64_t K,
                   MatrixRef<const T> a, const GemmBSource<typename ComputeType<T>::type>& b,
                   MatrixRef<T> c, typename ComputeType<T>::type alpha,
                   typename ComputeType<T>::type beta);

// One product with its own workspace.
template <typename T>
void gemm(KernelContext& ctx, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
          MatrixRef<const T> b, MatrixRef<T> c, typename ComputeType<T>::type alpha,
          typename ComputeType<T>::type beta) {
  gemm<T>(make_gemm_workspace<T>(ctx, M, N, K), M, N, K, a, b, c, alpha, beta);
}

}  // namespace pteron
