#include "kernels/optimized/util/winograd.h"

#include <atomic>
#include <cstring>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/sgemm.h"
#include "runtime/threads/threadpool.h"

namespace pteron::optimized {
namespace {

// Floats of V per block of tile rows (1 MiB: V, and the SGEMM's packed copy of it, stay in a
// 2 MiB L2 while the 36 products run).
constexpr int64_t kVFloats = int64_t{1} << 18;
// Tiles per thread below which the phased path runs (winograd_conv_phased): each chunk packs
// all of U, which too few tiles do not repay.
constexpr int64_t kMinTilesPerThread = 48;

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// The convolution runs as one pool call per image: its tiles are cut into chunks, and a worker
// takes a chunk through the whole pipeline on its own thread (input rows into a channel-minor
// band, input transform into V, the 36 products V x U into M, output transform, store into
// NCHW), so V and M stay in that core's L2 and the only synchronisation is the call's end. Run
// as five pool calls per block of tile rows (band, input transform, SGEMM, output transform,
// store), each with a wake-up and a barrier, 2 threads ran resnet-18's Winograd layers at far
// less than twice the single-thread speed on a 2-vCPU VM whose sleeping workers take tens of
// microseconds to wake.

// One worker's scratch.
struct WorkerScratch {
  float* band;  // input rows of the chunk's tile rows, channel-minor, zero-padded
  float* v;     // [36][tiles][Cin]
  float* m;     // [36][tiles][Cout]
  float* o;     // output rows of the chunk's tile rows, channel-minor
  void* gemm;   // sgemm_serial's packing buffers
};

// F(4x4, 3x3) tiling of one convolution's output: 4x4 output tiles over 6x6 input patches.
struct TileGeometry {
  int64_t tiles_h, tiles_w;
  int64_t band_w;  // padded input columns: tiles_w * 4 + 2
  int64_t out_w;   // tiles_w * 4

  explicit TileGeometry(const ConvShape& s)
      : tiles_h((s.out_h + 3) / 4),
        tiles_w((s.out_w + 3) / 4),
        band_w(tiles_w * 4 + 2),
        out_w(tiles_w * 4) {}
};

struct Plan : TileGeometry {
  explicit Plan(const ConvShape& shape) : TileGeometry(shape), s(&shape) {}
  const ConvShape* s;
  int64_t chunk_tiles;  // tiles per chunk (the last may have fewer)
  int64_t chunks;
  int64_t span_rows;  // most tile rows one chunk touches
  const float* u;
  const float* bias;
  bool relu;
  // The image being run.
  const float* x;
  const float* residual;
  float* y;
  WorkerScratch* workers;
  std::atomic<int64_t> next_chunk{0};
};

// Row i of the input band that starts at tile row th0 (input row th0 * 4 - pad + i of image x),
// channel-minor with zero padding: dst[j][c] holds input column j - pad_w, channel c.
void fill_band_row(const ConvShape& s, int64_t band_w, const float* x, int64_t th0, int64_t i,
                   float* dst) {
  const int64_t cin = s.in_channels, row_floats = band_w * cin;
  const int64_t ih = th0 * 4 - s.pad_h + i;
  if (ih < 0 || ih >= s.in_h) {
    std::memset(dst, 0, static_cast<size_t>(row_floats) * sizeof(float));
    return;
  }
  const int64_t j0 = min64(s.pad_w, band_w), j1 = min64(s.pad_w + s.in_w, band_w);
  std::memset(dst, 0, static_cast<size_t>(j0 * cin) * sizeof(float));
  std::memset(dst + j1 * cin, 0, static_cast<size_t>((band_w - j1) * cin) * sizeof(float));
  opt::isa_kernels().transpose(x + ih * s.in_w + (j0 - s.pad_w), s.in_h * s.in_w, dst + j0 * cin,
                               cin, cin, j1 - j0);
}

// Input rows [th0 * 4 - pad, ...) of image x, channel-minor with zero padding: band[i][j][c].
void fill_band(const Plan& p, int64_t th0, int64_t band_rows, float* band) {
  const int64_t row_floats = p.band_w * p.s->in_channels;
  for (int64_t i = 0; i < band_rows; ++i) {
    fill_band_row(*p.s, p.band_w, p.x, th0, i, band + i * row_floats);
  }
}

// The sgemm_serial problem of a chunk of `nt` tiles (operands set per chunk).
SgemmProblem chunk_gemm(const ConvShape& s, int64_t nt) {
  const int64_t cout = s.out_channels;
  SgemmProblem g;
  g.M = nt;
  g.N = cout;
  g.K = s.in_channels;
  g.batch = 36;
  g.a_bs = nt * s.in_channels;
  g.a_rs = s.in_channels;
  g.a_cs = 1;
  g.b_bs = s.in_channels * s.out_channels;
  g.b_rs = s.out_channels;
  g.b_cs = 1;
  g.c_bs = nt * cout;
  g.c_rs = cout;
  return g;
}

// Tiles [t0, t1) of the image (row-major over tile rows and columns), end to end.
void run_chunk(const Plan& p, const WorkerScratch& w, int64_t t0, int64_t t1) {
  const ConvShape& s = *p.s;
  const int64_t cin = s.in_channels, cout = s.out_channels, nt = t1 - t0;
  const opt::IsaKernels& isa = opt::isa_kernels();
  const int64_t tr0 = t0 / p.tiles_w, tr1 = (t1 - 1) / p.tiles_w + 1;
  fill_band(p, tr0, (tr1 - tr0) * 4 + 2, w.band);
  const int64_t band_row = p.band_w * cin;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t tr = t / p.tiles_w - tr0, tc = t % p.tiles_w;
    isa.winograd_input(w.band + tr * 4 * band_row + tc * 4 * cin, band_row, cin,
                       w.v + (t - t0) * cin, nt * cin, cin);
  }
  SgemmProblem g = chunk_gemm(s, nt);
  g.a = w.v;
  g.b = p.u;
  g.c = w.m;
  sgemm_serial(g, w.gemm);
  const int64_t out_row = p.out_w * cout;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t tr = t / p.tiles_w - tr0, tc = t % p.tiles_w;
    isa.winograd_output(w.m + (t - t0) * cout, nt * cout, p.bias, p.relu && p.residual == nullptr,
                        w.o + tr * 4 * out_row + tc * 4 * cout, out_row, cout, cout);
  }
  // Into NCHW: per output row, the columns of this chunk's tiles; then + residual and ReLU
  // when there is a residual (convolution_add_relu: the ReLU comes after the add).
  const int64_t plane = s.out_h * s.out_w;
  for (int64_t tr = tr0; tr < tr1; ++tr) {
    const int64_t c0 = tr == tr0 ? t0 % p.tiles_w * 4 : 0;
    const int64_t c1 = min64(s.out_w, tr == tr1 - 1 ? ((t1 - 1) % p.tiles_w + 1) * 4 : s.out_w);
    for (int64_t i = 0; i < 4 && c0 < c1; ++i) {
      const int64_t oh = tr * 4 + i;
      if (oh >= s.out_h) break;
      const int64_t at = oh * s.out_w + c0;
      isa.transpose(w.o + ((tr - tr0) * 4 + i) * out_row + c0 * cout, cout, p.y + at, plane,
                    c1 - c0, cout);
      if (p.residual == nullptr) continue;
      for (int64_t co = 0; co < cout; ++co) {
        float* d = p.y + co * plane + at;
        const float* e = p.residual + co * plane + at;
        for (int64_t j = 0; j < c1 - c0; ++j) {
          const float v = d[j] + e[j];
          d[j] = p.relu && v < 0.0f ? 0.0f : v;  // NaN stays NaN, as torch.relu
        }
      }
    }
  }
}

// A worker takes chunks until none are left, in its own scratch.
void winograd_worker(void* context, size_t worker) {
  Plan& p = *static_cast<Plan*>(context);
  const WorkerScratch& w = p.workers[worker];
  const int64_t tiles = p.tiles_h * p.tiles_w;
  for (;;) {
    const int64_t c = p.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (c >= p.chunks) return;
    const int64_t t0 = c * p.chunk_tiles;
    run_chunk(p, w, t0, min64(t0 + p.chunk_tiles, tiles));
  }
}

struct PhasedPlan : TileGeometry {
  explicit PhasedPlan(const ConvShape& shape) : TileGeometry(shape), s(&shape) {}
  const ConvShape* s;
  int64_t rows;  // tile rows per block
  const float* u;
  float *band, *v, *m, *o;
};

// Input rows [th0 * 4 - pad, ...) of image x, channel-minor with zero padding: band[i][j][c].
void fill_band_phased(const PhasedPlan& p, const float* x, int64_t th0, int64_t band_rows) {
  const int64_t row_floats = p.band_w * p.s->in_channels;
  opt::parallel_for(band_rows, row_floats * 2, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      fill_band_row(*p.s, p.band_w, x, th0, i, p.band + i * row_floats);
  });
}

// Output rows [oh0, oh1) from the channel-minor o[r][ow][co] into NCHW y, then + residual and
// ReLU when there is a residual (convolution_add_relu: the ReLU comes after the add).
void store_band(const PhasedPlan& p, float* y, const float* residual, bool relu, int64_t oh0,
                int64_t oh1) {
  const ConvShape& s = *p.s;
  const int64_t cout = s.out_channels, plane = s.out_h * s.out_w;
  opt::parallel_for(oh1 - oh0, s.out_w * cout * 2, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t row = (oh0 + r) * s.out_w;
      opt::isa_kernels().transpose(p.o + r * p.out_w * cout, cout, y + row, plane, s.out_w, cout);
      if (residual == nullptr) continue;
      for (int64_t co = 0; co < cout; ++co) {
        float* d = y + co * plane + row;
        const float* e = residual + co * plane + row;
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          const float v = d[ow] + e[ow];
          d[ow] = relu && v < 0.0f ? 0.0f : v;  // NaN stays NaN, as torch.relu
        }
      }
    }
  });
}

bool run_block(KernelContext& ctx, const PhasedPlan& p, const float* x, const float* bias,
               const float* residual, float* y, int64_t th0, int64_t th1, bool relu) {
  const ConvShape& s = *p.s;
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t nt = (th1 - th0) * p.tiles_w;
  const opt::IsaKernels& isa = opt::isa_kernels();
  fill_band_phased(p, x, th0, (th1 - th0) * 4 + 2);
  const int64_t band_row = p.band_w * cin;
  opt::parallel_for(nt, 36 * cin * 8, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t tr = t / p.tiles_w, tc = t % p.tiles_w;
      isa.winograd_input(p.band + tr * 4 * band_row + tc * 4 * cin, band_row, cin, p.v + t * cin,
                         nt * cin, cin);
    }
  });
  SgemmProblem g;
  g.M = nt;
  g.N = cout;
  g.K = cin;
  g.batch = 36;
  g.a = p.v;
  g.a_bs = nt * cin;
  g.a_rs = cin;
  g.a_cs = 1;
  g.b = p.u;
  g.b_bs = cin * cout;
  g.b_rs = cout;
  g.b_cs = 1;
  g.c = p.m;
  g.c_bs = nt * cout;
  g.c_rs = cout;
  if (!sgemm(ctx, g)) return false;
  const int64_t out_row = p.out_w * cout;
  opt::parallel_for(nt, 36 * cout * 6, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t tr = t / p.tiles_w, tc = t % p.tiles_w;
      isa.winograd_output(p.m + t * cout, nt * cout, bias, relu && residual == nullptr,
                          p.o + tr * 4 * out_row + tc * 4 * cout, out_row, cout, cout);
    }
  });
  store_band(p, y, residual, relu, th0 * 4, min64(th1 * 4, s.out_h));
  return true;
}

// Few tiles per thread (resnet-18's 28x28 and 14x14 layers, 49 and 16 tiles): each chunk would
// pack all of U (2.4M floats at 256 channels) for a handful of tiles. Instead, blocks of tile
// rows run in phases (band, input transform, the 36 products as one threaded SGEMM that packs
// U once, output transform, store), each phase over the pool. One pool call with a slice of
// the output channels per thread (each transforming all the input) measured no better at 2
// threads on those layers (equal on a quiet machine, ~1 ms slower for the three 14x14 ones in
// another round).
bool winograd_conv_phased(KernelContext& ctx, const ConvShape& s, const float* input,
                          const float* u, const float* bias, const float* residual, float* out,
                          bool relu) {
  PhasedPlan p(s);
  const int64_t cin = s.in_channels, cout = s.out_channels;
  // Tile rows per block: as many as keep V within kVFloats, then evened out over the blocks.
  int64_t rows = max64(1, kVFloats / (36 * cin * p.tiles_w));
  rows = min64(rows, p.tiles_h);
  const int64_t blocks = (p.tiles_h + rows - 1) / rows;
  rows = (p.tiles_h + blocks - 1) / blocks;
  p.rows = rows;
  const int64_t nt = rows * p.tiles_w;
  auto alloc = [&](int64_t floats) {
    return static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(floats) * sizeof(float), 64));
  };
  p.u = u;
  p.band = alloc((rows * 4 + 2) * p.band_w * cin);
  p.v = alloc(36 * nt * cin);
  p.m = alloc(36 * nt * cout);
  p.o = alloc(rows * 4 * p.out_w * cout);
  if (p.band == nullptr || p.v == nullptr || p.m == nullptr || p.o == nullptr) return false;
  const int64_t in_image = cin * s.in_h * s.in_w, out_image = cout * s.out_h * s.out_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    for (int64_t th0 = 0; th0 < p.tiles_h; th0 += rows) {
      if (!run_block(ctx, p, input + n * in_image, bias,
                     residual != nullptr ? residual + n * out_image : nullptr, out + n * out_image,
                     th0, min64(th0 + rows, p.tiles_h), relu)) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

void winograd_transform_weights(const float* weight, int64_t cin, int64_t cout, float* u) {
  // G = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6; 1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1].
  static const float G[6][3] = {{0.25f, 0.0f, 0.0f},
                                {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                                {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                                {1.0f / 24, 1.0f / 12, 1.0f / 6},
                                {1.0f / 24, -1.0f / 12, 1.0f / 6},
                                {0.0f, 0.0f, 1.0f}};
  // Per block of output channels and input channel: the 36 values of each weight into a local
  // tile, then 36 contiguous row pieces of U (writing U element by element, 36 streams
  // Cin * Cout floats apart, missed the TLB on every store: 10 ms for 256 x 256).
  constexpr int64_t kCo = 64;
  opt::parallel_for(cin, cout * 36 * 12, [&](int64_t c0, int64_t c1) {
    float tile[36][kCo];
    for (int64_t co0 = 0; co0 < cout; co0 += kCo) {
      const int64_t nco = cout - co0 < kCo ? cout - co0 : kCo;
      for (int64_t ci = c0; ci < c1; ++ci) {
        for (int64_t k = 0; k < nco; ++k) {
          const float* g = weight + ((co0 + k) * cin + ci) * 9;
          float t[6][3];  // G g
          for (int i = 0; i < 6; ++i) {
            for (int j = 0; j < 3; ++j) {
              t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
            }
          }
          for (int i = 0; i < 6; ++i) {
            for (int j = 0; j < 6; ++j) {
              tile[i * 6 + j][k] = t[i][0] * G[j][0] + t[i][1] * G[j][1] + t[i][2] * G[j][2];
            }
          }
        }
        for (int e = 0; e < 36; ++e) {
          std::memcpy(u + (e * cin + ci) * cout + co0, tile[e],
                      static_cast<size_t>(nco) * sizeof(float));
        }
      }
    }
  });
}

bool winograd_supported(const ConvShape& s) {
  return !s.transposed && s.groups == 1 && s.kernel_h == 3 && s.kernel_w == 3 && s.stride_h == 1 &&
         s.stride_w == 1 && s.dilation_h == 1 && s.dilation_w == 1 && s.out_h > 0 && s.out_w > 0;
}

// Measured at 1 thread on resnet-18's 3x3 stride-1 layers (batch 1, weights transformed per
// call; AVX-512 Xeon, load ~3): 56x56 64->64 1.96 ms vs 3.61 on the im2col SGEMM, 28x28
// 128->128 1.62 vs 2.55, but 14x14 256->256 3.53 vs 2.59: 16 tiles per image do not repay
// transforming and packing 36 x 256 x 256 weights every call. So: outputs of at least 8x8 and
// at least 32 tiles per weight transform (batch x tiles).
bool winograd_pays_off(const ConvShape& s) {
  const int64_t tiles = s.batch * ((s.out_h + 3) / 4) * ((s.out_w + 3) / 4);
  return winograd_supported(s) && s.out_h >= 8 && s.out_w >= 8 && tiles >= 32;
}

bool winograd_conv(KernelContext& ctx, const ConvShape& s, const float* input, const float* weight,
                   const float* u, const float* bias, const float* residual, float* out,
                   bool relu) {
  Plan p(s);
  p.bias = bias;
  p.relu = relu;
  const int64_t cin = s.in_channels, cout = s.out_channels;
  const int64_t tiles = p.tiles_h * p.tiles_w;
  pthreadpool_t pool = shared_threadpool();
  const int64_t threads =
      pool != nullptr ? static_cast<int64_t>(pthreadpool_get_threads_count(pool)) : 1;
  const bool phased = threads > 1 && tiles < kMinTilesPerThread * threads;
  // Chunks of tiles: as few as keep V and M within kVFloats each, and with threads a multiple
  // of the thread count (no thread is left with one more chunk at the end). More chunks per
  // thread (4, of at least 16 tiles), so that a worker woken late would take fewer, ran
  // resnet-18's layer1 slower at 2 threads (5.4-5.6 ms against 4.6-5.2 for its 4 convolutions):
  // each chunk packs all of U again.
  const int64_t max_tiles = max64(1, kVFloats / (36 * max64(cin, cout)));
  int64_t chunks = (tiles + max_tiles - 1) / max_tiles;
  if (threads > 1) chunks = min64((chunks + threads - 1) / threads * threads, tiles);
  p.chunk_tiles = (tiles + chunks - 1) / chunks;
  p.chunks = (tiles + p.chunk_tiles - 1) / p.chunk_tiles;
  p.span_rows = min64(p.tiles_h, p.chunk_tiles / p.tiles_w + 2);
  const int64_t workers = min64(threads, p.chunks);
  auto alloc = [&](int64_t floats) {
    return static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(floats) * sizeof(float), 64));
  };
  if (u == nullptr) {
    float* tu = alloc(winograd_weight_floats(cin, cout));
    if (tu == nullptr) return false;
    winograd_transform_weights(weight, cin, cout, tu);
    u = tu;
  }
  if (phased) return winograd_conv_phased(ctx, s, input, u, bias, residual, out, relu);
  p.u = u;
  constexpr int64_t kMaxWorkers = 64;
  WorkerScratch scratch[kMaxWorkers];
  if (workers > kMaxWorkers) return false;
  const size_t gemm_bytes = sgemm_serial_scratch_bytes(chunk_gemm(s, p.chunk_tiles));
  for (int64_t i = 0; i < workers; ++i) {
    WorkerScratch& w = scratch[i];
    w.band = alloc((p.span_rows * 4 + 2) * p.band_w * cin);
    w.v = alloc(36 * p.chunk_tiles * cin);
    w.m = alloc(36 * p.chunk_tiles * cout);
    w.o = alloc(p.span_rows * 4 * p.out_w * cout);
    w.gemm = gemm_bytes > 0 ? ctx.allocate_scratch(gemm_bytes, 64) : nullptr;
    if (w.band == nullptr || w.v == nullptr || w.m == nullptr || w.o == nullptr ||
        (gemm_bytes > 0 && w.gemm == nullptr)) {
      return false;
    }
  }
  p.workers = scratch;
  const int64_t in_image = cin * s.in_h * s.in_w, out_image = cout * s.out_h * s.out_w;
  for (int64_t n = 0; n < s.batch; ++n) {
    p.x = input + n * in_image;
    p.residual = residual != nullptr ? residual + n * out_image : nullptr;
    p.y = out + n * out_image;
    p.next_chunk.store(0, std::memory_order_relaxed);
    if (workers > 1) {
      // One call per image: the workers run the whole pipeline (transform, products, output).
      pthreadpool_parallelize_1d(pool, &winograd_worker, &p, static_cast<size_t>(workers),
                                 pool_call_flags());
    } else {
      winograd_worker(&p, 0);
    }
  }
  return true;
}

}  // namespace pteron::optimized
