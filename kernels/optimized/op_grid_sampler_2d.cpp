// aten::grid_sampler_2d.out, float32, row-major input [N, C, H, W], grid [N, OH, OW, 2] and out,
// bilinear and nearest, every padding mode, both align_corners. The portable kernel walks
// pixels and, for each, every channel (out written with a stride of OH * OW); here the output
// pixels are cut into tiles of kTile, each tile's taps (input offsets and weights, the same
// coordinate arithmetic: util/grid_sample.h) are computed once, then every channel plane is
// sampled for the whole tile, writing out contiguously, four planes at a time so that each
// pixel's taps are loaded once for four channels; pixels whose taps all lie inside skip the
// outside checks. (AVX2 gathers, 8 pixels a step, were measured slower than this on an AMD EPYC:
// 4.3 against 3.3 ms CPU for [1, 64, 128, 128].) Tiles are split over threads, each with its own
// tap table. The arithmetic is the portable kernel's, bilinear summed as ((a nw + b ne) + c sw) +
// d se, and this file is compiled without FMA contraction (kernels/optimized/CMakeLists.txt),
// as the portable kernels are, so results are bit-identical to it; nearest is a copy. Bicubic,
// other dtypes and layouts, and malformed arguments run the portable kernel.
#include <cmath>
#include <cstdint>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/grid_sample.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::grid_sampler_2d.out";
constexpr int64_t kTile = 256;

// One tile's taps: offsets into an input plane (-1: outside, reads as 0), bilinear weights, and
// per pixel whether any tap is outside (or the point is not finite).
struct Taps {
  int32_t* off[4];
  float* w[4];
  uint8_t* edge;
};

// dst[j] = sum_k p[off[k][j]] * w[k][j], summed k = 0..3 left to right (an offset of -1 reads
// 0), for kPlanes channel planes (in_stride / out_stride apart) at once, so each pixel's taps are
// loaded once for all of them; pixels with no tap outside skip the checks.
template <int kPlanes>
void blend_planes(const float* p, int64_t in_stride, const Taps& t, int64_t j, int64_t n,
                  float* dst, int64_t out_stride) {
  for (; j < n; ++j) {
    const int32_t o0 = t.off[0][j], o1 = t.off[1][j], o2 = t.off[2][j], o3 = t.off[3][j];
    const float w0 = t.w[0][j], w1 = t.w[1][j], w2 = t.w[2][j], w3 = t.w[3][j];
    if (!t.edge[j]) {
      for (int q = 0; q < kPlanes; ++q) {
        const float* pq = p + q * in_stride;
        dst[q * out_stride + j] = pq[o0] * w0 + pq[o1] * w1 + pq[o2] * w2 + pq[o3] * w3;
      }
      continue;
    }
    for (int q = 0; q < kPlanes; ++q) {
      const float* pq = p + q * in_stride;
      auto at = [pq](int32_t o) { return o >= 0 ? pq[o] : 0.0f; };
      dst[q * out_stride + j] = at(o0) * w0 + at(o1) * w1 + at(o2) * w2 + at(o3) * w3;
    }
  }
}

// Nearest: dst[j] = p[off[j]], 0 where off is -1.
void pick_plane(const float* p, const int32_t* off, int64_t n, float* dst) {
  for (int64_t j = 0; j < n; ++j) dst[j] = off[j] >= 0 ? p[off[j]] : 0.0f;
}

struct Sampler {
  const float* x;
  const float* grid;
  float* y;
  int64_t channels, in_h, in_w, out_pixels;  // out_pixels: OH * OW
  GridAxis<float> ax, ay;
  int mode, padding;

  // Taps of pixels [q0, q0 + n) of image `img`.
  void bilinear_taps(int64_t img, int64_t q0, int64_t n, const Taps& t) const {
    const float* g = grid + (img * out_pixels + q0) * 2;
    for (int64_t j = 0; j < n; ++j) {
      const float fx = ax.pad(ax.unnormalize(g[2 * j])), fy = ay.pad(ay.unnormalize(g[2 * j + 1]));
      const float x0 = std::floor(fx), y0 = std::floor(fy);
      const float we = fx - x0, ee = x0 + 1.0f - fx, nn = fy - y0, ss = y0 + 1.0f - fy;
      const int64_t ix = ax.index(x0), iy = ay.index(y0);
      if (!(std::isfinite(fx) && std::isfinite(fy))) {
        // The portable kernel's non-finite case: 0 for zeros padding, else NaN.
        const float v = padding == kGridZeros ? 0.0f : std::nanf("");
        for (int k = 0; k < 4; ++k) t.off[k][j] = -1, t.w[k][j] = v;
        t.edge[j] = 1;
        continue;
      }
      const float w[4] = {ss * ee, ss * we, nn * ee, nn * we};
      bool edge = false;
      for (int k = 0; k < 4; ++k) {
        const int64_t tx = ix + (k & 1), ty = iy + (k >> 1);
        const bool inside = ax.inside(tx) && ay.inside(ty);
        t.off[k][j] = inside ? static_cast<int32_t>(ty * in_w + tx) : -1;
        t.w[k][j] = w[k];
        edge = edge || !inside;
      }
      t.edge[j] = edge;
    }
  }

  void bilinear_tile(int64_t img, int64_t q0, int64_t n, const Taps& t) const {
    bilinear_taps(img, q0, n, t);
    const int64_t plane = in_h * in_w;
    const float* p = x + img * channels * plane;
    float* dst = y + img * channels * out_pixels + q0;
    int64_t c = 0;
    for (; c + 4 <= channels; c += 4) {
      blend_planes<4>(p + c * plane, plane, t, 0, n, dst + c * out_pixels, out_pixels);
    }
    for (; c < channels; ++c) blend_planes<1>(p + c * plane, 0, t, 0, n, dst + c * out_pixels, 0);
  }

  void nearest_tile(int64_t img, int64_t q0, int64_t n, int32_t* off) const {
    const float* g = grid + (img * out_pixels + q0) * 2;
    for (int64_t j = 0; j < n; ++j) {
      const float fx = std::nearbyint(ax.pad(ax.unnormalize(g[2 * j])));
      const float fy = std::nearbyint(ay.pad(ay.unnormalize(g[2 * j + 1])));
      const bool ok = fx >= 0.0f && fx < static_cast<float>(in_w) && fy >= 0.0f &&
                      fy < static_cast<float>(in_h);
      off[j] = ok ? static_cast<int32_t>(static_cast<int64_t>(fy) * in_w + static_cast<int64_t>(fx))
                  : -1;
    }
    const int64_t plane = in_h * in_w;
    const float* p = x + img * channels * plane;
    float* dst = y + img * channels * out_pixels + q0;
    for (int64_t c = 0; c < channels; ++c) pick_plane(p + c * plane, off, n, dst + c * out_pixels);
  }
};

Error grid_sampler_2d_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& grid = *args[1]->tensor;
  const int64_t mode = args[2]->i, padding = args[3]->i;
  Tensor& out = *args[5]->tensor;
  // Shapes and arguments are checked by the portable kernel's rules: anything it would refuse,
  // or that this path does not cover, goes to it.
  const bool covered = input.dim() == 4 && grid.dim() == 4 && input.dtype() == ScalarType::Float &&
                       grid.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float &&
                       (mode == kGridBilinear || mode == kGridNearest) && padding >= kGridZeros &&
                       padding <= kGridReflection && grid.size(0) == input.size(0) &&
                       grid.size(3) == 2 && input.size(2) > 0 && input.size(3) > 0 &&
                       static_cast<int64_t>(input.size(2)) * input.size(3) <= INT32_MAX;
  if (!covered) return call_portable(kOp, ctx, args);
  const int32_t sizes[4] = {input.size(0), input.size(1), grid.size(1), grid.size(2)};
  if (expect_out_shape(kOp, out, sizes, 4) != Error::Ok || !is_row_major(input) ||
      !is_row_major(grid) || !is_row_major(out)) {
    return call_portable(kOp, ctx, args);
  }
  if (out.numel() == 0) return Error::Ok;
  const int64_t out_pixels = static_cast<int64_t>(grid.size(1)) * grid.size(2);
  const Sampler s{input.data<const float>(),
                  grid.data<const float>(),
                  out.data<float>(),
                  input.size(1),
                  input.size(2),
                  input.size(3),
                  out_pixels,
                  {input.size(3), static_cast<int>(padding), args[4]->b},
                  {input.size(2), static_cast<int>(padding), args[4]->b},
                  static_cast<int>(mode),
                  static_cast<int>(padding)};
  // Tiles never cross an image, so an image's pixels are [img * tiles_per_image, ...).
  const int64_t tiles_per_image = (out_pixels + kTile - 1) / kTile;
  const int64_t tiles = input.size(0) * tiles_per_image;
  const int64_t blocks = opt::block_count(tiles, kTile * (1 + s.channels) * 4);
  const size_t tile_bytes = static_cast<size_t>(kTile) * (8 * sizeof(float) + 1);
  char* scratch = static_cast<char*>(ctx.allocate_scratch(tile_bytes * blocks, 64));
  if (scratch == nullptr) return call_portable(kOp, ctx, args);
  opt::parallel_blocks(tiles, blocks, [&](int64_t b, int64_t t0, int64_t t1) {
    char* mine = scratch + tile_bytes * b;
    Taps taps;
    for (int k = 0; k < 4; ++k) {
      taps.off[k] = reinterpret_cast<int32_t*>(mine) + k * kTile;
      taps.w[k] = reinterpret_cast<float*>(mine) + (4 + k) * kTile;
    }
    taps.edge = reinterpret_cast<uint8_t*>(mine) + 8 * sizeof(float) * kTile;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t img = t / tiles_per_image, q0 = (t % tiles_per_image) * kTile;
      const int64_t n = q0 + kTile < out_pixels ? kTile : out_pixels - q0;
      if (s.mode == kGridBilinear)
        s.bilinear_tile(img, q0, n, taps);
      else
        s.nearest_tile(img, q0, n, taps.off[0]);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::grid_sampler_2d.out", grid_sampler_2d_out, "TTIIBT");

}  // namespace pteron::optimized
