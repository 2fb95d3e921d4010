#include "kernels/portable/util/gemm.h"

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/gemm_tile.h"

namespace pteron {
namespace {

// Cache blocking: a KC x NR panel of B stays in L1 while a MC x KC block of A streams from L2;
// the KC x NC panel of B is reused by every block of A.
constexpr int64_t kKC = 256;
constexpr int64_t kMC = 128;
constexpr int64_t kNC = 2048;
// Depth and rows (in tiles) of the stack-packed slices used when there is no scratch memory.
constexpr int64_t kStackKC = 64;
constexpr int64_t kStackTiles = 4;
// Output columns accumulated at once on the stack by the matrix-vector path.
constexpr int64_t kGemvChunk = 1024;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Packs rows [i0, i0 + mc) x columns [k0, k0 + kc) of A as ceil(mc / MR) panels of kc x MR.
template <typename T, typename Acc>
void pack_a(MatrixRef<const T> a, int64_t i0, int64_t mc, int64_t k0, int64_t kc, int MR,
            Acc* dst) {
  for (int64_t p = 0; p < mc; p += MR, dst += kc * MR) {
    const int64_t mr = min64(MR, mc - p);
    const T* base = a.data + (i0 + p) * a.rs + k0 * a.cs;
    if (a.rs == 1 && mr == MR) {  // column-major A: each step reads MR contiguous values
      for (int64_t k = 0; k < kc; ++k)
        for (int i = 0; i < MR; ++i) dst[k * MR + i] = load_value(base[k * a.cs + i]);
      continue;
    }
    for (int64_t i = 0; i < mr; ++i) {
      const T* row = base + i * a.rs;
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = load_value(row[k * a.cs]);
    }
    for (int64_t i = mr; i < MR; ++i)
      for (int64_t k = 0; k < kc; ++k) dst[k * MR + i] = Acc(0);
  }
}

// GemmBSource over a strided matrix.
template <typename T, typename Acc>
void pack_b_matrix(const void* self, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int NR,
                   Acc* dst) {
  const MatrixRef<const T>& b = *static_cast<const MatrixRef<const T>*>(self);
  for (int64_t p = 0; p < nc; p += NR, dst += kc * NR) {
    const int64_t nr = min64(NR, nc - p);
    const T* base = b.data + k0 * b.rs + (j0 + p) * b.cs;
    if (b.rs == 1 && b.cs != 1) {  // transposed B (linear weights): read along k
      for (int64_t j = 0; j < nr; ++j) {
        const T* col = base + j * b.cs;
        for (int64_t k = 0; k < kc; ++k) dst[k * NR + j] = load_value(col[k]);
      }
      for (int64_t j = nr; j < NR; ++j)
        for (int64_t k = 0; k < kc; ++k) dst[k * NR + j] = Acc(0);
      continue;
    }
    for (int64_t k = 0; k < kc; ++k) {
      const T* row = base + k * b.rs;
      Acc* d = dst + k * NR;
      if (b.cs == 1) {
        for (int64_t j = 0; j < nr; ++j) d[j] = load_value(row[j]);
      } else {
        for (int64_t j = 0; j < nr; ++j) d[j] = load_value(row[j * b.cs]);
      }
      for (int64_t j = nr; j < NR; ++j) d[j] = Acc(0);
    }
  }
}

// C tile (mr x nr at c) = alpha * acc + beta * C, acc rows `ld` apart.
template <typename T, typename Acc>
void store_tile(const Acc* acc, int64_t ld, int64_t mr, int64_t nr, T* c, int64_t rs, int64_t cs,
                Acc alpha, Acc beta) {
  for (int64_t i = 0; i < mr; ++i) {
    const Acc* src = acc + i * ld;
    T* row = c + i * rs;
    if (cs == 1) {
      if (beta == Acc(0)) {
        for (int64_t j = 0; j < nr; ++j) row[j] = store_value<T>(alpha * src[j]);
      } else {
        for (int64_t j = 0; j < nr; ++j)
          row[j] = store_value<T>(alpha * src[j] + beta * load_value(row[j]));
      }
    } else {
      for (int64_t j = 0; j < nr; ++j) {
        const Acc old = beta == Acc(0) ? Acc(0) : beta * load_value(row[j * cs]);
        row[j * cs] = store_value<T>(alpha * src[j] + old);
      }
    }
  }
}

template <typename T, typename Acc>
void scale_c(int64_t M, int64_t N, MatrixRef<T> c, Acc beta) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T& v = c.data[i * c.rs + j * c.cs];
      v = store_value<T>(beta == Acc(0) ? Acc(0) : beta * load_value(v));
    }
}

// Goto-style blocked GEMM over packed panels in scratch memory `buf`, which holds a B panel of
// kc_max x nc_max and an A block of mc_max x kc_max.
template <typename T, typename Acc>
void gemm_blocked(const GemmTile<Acc>& tile, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
                  const GemmBSource<Acc>& b, MatrixRef<T> c, Acc alpha, Acc beta, Acc* buf,
                  int64_t kc_max, int64_t nc_max, int64_t mc_max) {
  const int MR = tile.mr, NR = tile.nr;
  Acc* bpack = buf;
  Acc* apack = buf + kc_max * nc_max;
  alignas(64) Acc acc[kGemmMaxTileElems];
  for (int64_t jc = 0; jc < N; jc += nc_max) {
    const int64_t nc = min64(nc_max, N - jc);
    for (int64_t pc = 0; pc < K; pc += kc_max) {
      const int64_t kc = min64(kc_max, K - pc);
      const Acc beta_k = pc == 0 ? beta : Acc(1);  // later K blocks add to the partial sums
      b.pack(b.self, pc, kc, jc, nc, NR, bpack);
      for (int64_t ic = 0; ic < M; ic += mc_max) {
        const int64_t mc = min64(mc_max, M - ic);
        pack_a<T, Acc>(a, ic, mc, pc, kc, MR, apack);
        for (int64_t jr = 0; jr < nc; jr += NR) {
          const Acc* bp = bpack + (jr / NR) * kc * NR;
          for (int64_t ir = 0; ir < mc; ir += MR) {
            for (int j = 0; j < MR * NR; ++j) acc[j] = Acc(0);
            tile.kernel(kc, apack + (ir / MR) * kc * MR, bp, acc);
            T* ct = c.data + (ic + ir) * c.rs + (jc + jr) * c.cs;
            store_tile<T, Acc>(acc, NR, min64(MR, mc - ir), min64(NR, nc - jr), ct, c.rs, c.cs,
                               alpha, beta_k);
          }
        }
      }
    }
  }
}

// No scratch: a strip of kStackTiles x 1 register tiles of C accumulates over all of K on the
// stack while kStackKC-deep slices of A and B are packed on the stack. B slices are repacked
// for every strip, so this is slower than gemm_blocked, but it needs no memory and rounds C
// once.
template <typename T, typename Acc>
void gemm_stack(const GemmTile<Acc>& tile, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
                const GemmBSource<Acc>& b, MatrixRef<T> c, Acc alpha, Acc beta) {
  const int MR = tile.mr, NR = tile.nr;
  const int64_t strip = kStackTiles * MR;
  alignas(64) Acc apack[kStackKC * kGemmMaxMR];
  alignas(64) Acc bpack[kStackKC * kGemmMaxNR];
  alignas(64) Acc acc[kStackTiles * kGemmMaxTileElems];
  for (int64_t jr = 0; jr < N; jr += NR) {
    const int64_t nr = min64(NR, N - jr);
    for (int64_t i0 = 0; i0 < M; i0 += strip) {
      const int64_t mb = min64(strip, M - i0);
      for (int64_t j = 0; j < strip * NR; ++j) acc[j] = Acc(0);
      for (int64_t pc = 0; pc < K; pc += kStackKC) {
        const int64_t kc = min64(kStackKC, K - pc);
        b.pack(b.self, pc, kc, jr, nr, NR, bpack);
        for (int64_t ir = 0; ir < mb; ir += MR) {
          pack_a<T, Acc>(a, i0 + ir, min64(MR, mb - ir), pc, kc, MR, apack);
          tile.kernel(kc, apack, bpack, acc + ir * NR);
        }
      }
      store_tile<T, Acc>(acc, NR, mb, nr, c.data + i0 * c.rs + jr * c.cs, c.rs, c.cs, alpha, beta);
    }
  }
}

template <typename T, typename Acc>
void gemm_any_b(const GemmWorkspace<T>& ws, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
                const GemmBSource<Acc>& b, MatrixRef<T> c, Acc alpha, Acc beta) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    scale_c<T, Acc>(M, N, c, beta);
    return;
  }
  const GemmTile<Acc>& tile = gemm_tile<Acc>(ws.tile);
  // Block sizes hold for any M and N; a C narrower than Acc needs all of K in one block.
  if (ws.buf != nullptr && (std::is_same_v<T, Acc> || K <= ws.kc)) {
    gemm_blocked<T, Acc>(tile, M, N, K, a, b, c, alpha, beta, ws.buf, min64(K, ws.kc), ws.nc,
                         ws.mc);
    return;
  }
  gemm_stack<T, Acc>(tile, M, N, K, a, b, c, alpha, beta);
}

// Row vector times matrix (M == 1): packing B would cost as much as the product itself.
// Returns false for B layouts it has no fast loop for.
template <typename T, typename Acc>
bool gemv(int64_t N, int64_t K, MatrixRef<const T> a, MatrixRef<const T> b, MatrixRef<T> c,
          Acc alpha, Acc beta) {
  if (b.cs == 1 && c.cs == 1 && std::is_same_v<T, Acc>) {
    // C is the accumulator: stream B row by row, out[:] += alpha * a[k] * b[k, :].
    Acc* out = reinterpret_cast<Acc*>(c.data);
    for (int64_t j = 0; j < N; ++j) out[j] = beta == Acc(0) ? Acc(0) : beta * out[j];
    for (int64_t k = 0; k < K; ++k) {
      const Acc av = alpha * load_value(a.data[k * a.cs]);
      const T* row = b.data + k * b.rs;
      for (int64_t j = 0; j < N; ++j) out[j] += av * load_value(row[j]);
    }
    return true;
  }
  if (b.cs == 1) {  // out[j] += a[k] * b[k, j] over contiguous rows of B, a chunk of j at once
    alignas(64) Acc acc[kGemvChunk];
    for (int64_t j0 = 0; j0 < N; j0 += kGemvChunk) {
      const int64_t n = min64(kGemvChunk, N - j0);
      for (int64_t j = 0; j < n; ++j) acc[j] = Acc(0);
      for (int64_t k = 0; k < K; ++k) {
        const Acc av = load_value(a.data[k * a.cs]);
        const T* row = b.data + k * b.rs + j0;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * load_value(row[j]);
      }
      store_tile<T, Acc>(acc, 0, 1, n, c.data + j0 * c.cs, 0, c.cs, alpha, beta);
    }
    return true;
  }
  if (b.rs == 1 && a.cs == 1) {  // out[j] = dot(a, column j of B), both contiguous along K
    constexpr int kLanes = 8;    // independent partial sums the compiler can vectorise
    for (int64_t j = 0; j < N; ++j) {
      const T* col = b.data + j * b.cs;
      Acc lanes[kLanes] = {};
      int64_t k = 0;
      for (; k + kLanes <= K; k += kLanes)
        for (int l = 0; l < kLanes; ++l)
          lanes[l] += load_value(a.data[k + l]) * load_value(col[k + l]);
      Acc sum = Acc(0);
      for (; k < K; ++k) sum += load_value(a.data[k]) * load_value(col[k]);
      for (int l = 0; l < kLanes; ++l) sum += lanes[l];
      store_tile<T, Acc>(&sum, 0, 1, 1, c.data + j * c.cs, 0, 1, alpha, beta);
    }
    return true;
  }
  return false;
}

}  // namespace

int gemm_tile_count() { return gemm_tiles(); }
bool gemm_tile_supported(int index) {
  return index >= 0 && index < gemm_tiles() && index <= gemm_best_tile();
}

template <typename T>
GemmWorkspace<T> make_gemm_workspace(KernelContext& ctx, int64_t M, int64_t N, int64_t K,
                                     int tile_index) {
  using Acc = typename ComputeType<T>::type;
  GemmWorkspace<T> ws;
  ws.tile = gemm_tile_supported(tile_index) ? tile_index : gemm_best_tile();
  if (M <= 1 || N <= 1 || K <= 0) return ws;  // vector products need no packing
  const GemmTile<Acc>& tile = gemm_tile<Acc>(ws.tile);
  // Partial sums over K blocks are stored in C, so a narrower C (Half, BFloat16) takes all of K
  // in one block to round only once.
  const int64_t kc = std::is_same_v<T, Acc> ? min64(K, kKC) : K;
  const int64_t mc = min64(round_up(M, tile.mr), kMC / tile.mr * tile.mr);
  const int64_t nc_full = min64(round_up(N, tile.nr), kNC / tile.nr * tile.nr);
  for (int64_t nc : {nc_full, int64_t{tile.nr}}) {
    const uint64_t count = static_cast<uint64_t>(kc) * static_cast<uint64_t>(nc + mc);
    if (count > SIZE_MAX / sizeof(Acc)) continue;  // a 32-bit target cannot even ask
    void* buf = ctx.allocate_scratch(static_cast<size_t>(count) * sizeof(Acc), 64);
    if (buf != nullptr) {
      ws.buf = static_cast<Acc*>(buf);
      ws.kc = kc;
      ws.nc = nc;
      ws.mc = mc;
      return ws;
    }
  }
  return ws;
}

template <typename T>
void gemm_packed_b(const GemmWorkspace<T>& ws, int64_t M, int64_t N, int64_t K,
                   MatrixRef<const T> a, const GemmBSource<typename ComputeType<T>::type>& b,
                   MatrixRef<T> c, typename ComputeType<T>::type alpha,
                   typename ComputeType<T>::type beta) {
  gemm_any_b<T, typename ComputeType<T>::type>(ws, M, N, K, a, b, c, alpha, beta);
}

template <typename T>
void gemm(const GemmWorkspace<T>& ws, int64_t M, int64_t N, int64_t K, MatrixRef<const T> a,
          MatrixRef<const T> b, MatrixRef<T> c, typename ComputeType<T>::type alpha,
          typename ComputeType<T>::type beta) {
  using Acc = typename ComputeType<T>::type;
  if (N == 1 && M > 1) {  // C^T = B^T A^T turns a matrix-vector product into a row-vector one
    MatrixRef<const T> at{b.data, b.cs, b.rs};
    MatrixRef<const T> bt{a.data, a.cs, a.rs};
    MatrixRef<T> ct{c.data, c.cs, c.rs};
    a = at;
    b = bt;
    c = ct;
    N = M;
    M = 1;
  }
  if (M == 1 && K > 0 && gemv<T, Acc>(N, K, a, b, c, alpha, beta)) return;
  const GemmBSource<Acc> source{&pack_b_matrix<T, Acc>, &b};
  gemm_any_b<T, Acc>(ws, M, N, K, a, source, c, alpha, beta);
}

#define PTERON_INSTANTIATE_GEMM(T)                                                              \
  template GemmWorkspace<T> make_gemm_workspace<T>(KernelContext&, int64_t, int64_t, int64_t,   \
                                                   int);                                        \
  template void gemm<T>(const GemmWorkspace<T>&, int64_t, int64_t, int64_t, MatrixRef<const T>, \
                        MatrixRef<const T>, MatrixRef<T>, ComputeType<T>::type,                 \
                        ComputeType<T>::type);                                                  \
  template void gemm_packed_b<T>(const GemmWorkspace<T>&, int64_t, int64_t, int64_t,            \
                                 MatrixRef<const T>, const GemmBSource<ComputeType<T>::type>&,  \
                                 MatrixRef<T>, ComputeType<T>::type, ComputeType<T>::type);
PTERON_INSTANTIATE_GEMM(float)
PTERON_INSTANTIATE_GEMM(double)
PTERON_INSTANTIATE_GEMM(Half)
PTERON_INSTANTIATE_GEMM(BFloat16)
#undef PTERON_INSTANTIATE_GEMM

}  // namespace pteron
