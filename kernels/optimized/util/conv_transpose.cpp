#include "kernels/optimized/util/conv_transpose.h"

#include <algorithm>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/sgemm.h"

namespace pteron::optimized {
namespace {

// Floats of col per SGEMM (16 MiB of the host's 64 MiB per-instruction scratch, which the
// SGEMM's own packing shares).
constexpr int64_t kColFloats = int64_t{1} << 22;

// Below this many input pixels per image, the images of a batch go through one SGEMM: an
// SGEMM of a few columns runs far below its rate (a DCGAN generator, batch 4, 2 threads: its
// 4x4 -> 8x8 layer, 16 pixels an image, 34 -> 90 GMAC/s; its 16x16 -> 32x32 layer 87 -> 121).
constexpr int64_t kBatchedPixels = 1024;

// Adds col's rows (output channels [c0, c1) of the group, every tap; row stride col_rs) for
// input rows [ih0, ih0 + rows) onto the output planes `y` (the group's first channel).
void col2im(const ConvShape& s, const float* col, int64_t col_rs, int64_t ih0, int64_t rows,
            int64_t c0, int64_t c1, float* y) {
  const int64_t khw = s.kernel_h * s.kernel_w;
  const int64_t out_plane = s.out_h * s.out_w;
  for (int64_t c = c0; c < c1; ++c) {
    float* plane = y + c * out_plane;
    for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
      for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
        const float* src = col + (c * khw + kh * s.kernel_w + kw) * col_rs;
        const int64_t shift = kw * s.dilation_w - s.pad_w;  // ow = iw * stride + shift
        // The input columns whose output column lies in [0, out_w).
        const int64_t iw0 = shift >= 0 ? 0 : (-shift + s.stride_w - 1) / s.stride_w;
        const int64_t last = s.out_w - 1 - shift;
        const int64_t iw1 = last < 0 ? 0 : std::min(s.in_w, last / s.stride_w + 1);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t oh = (ih0 + r) * s.stride_h - s.pad_h + kh * s.dilation_h;
          if (oh < 0 || oh >= s.out_h) continue;
          float* dst = plane + oh * s.out_w;
          const float* x = src + r * s.in_w;
          if (s.stride_w == 1) {
            for (int64_t iw = iw0; iw < iw1; ++iw) dst[iw + shift] += x[iw];
          } else {
            for (int64_t iw = iw0; iw < iw1; ++iw) dst[iw * s.stride_w + shift] += x[iw];
          }
        }
      }
    }
  }
}

// One group's SGEMM: col[m][j] = sum over k of weight[g * cin_g + k][m] * b[k * b_rs + j].
bool group_sgemm(KernelContext& ctx, const ConvShape& s, const float* weight,
                 ConstantCache* weight_cache, int64_t g, const float* b, int64_t b_rs, int64_t N,
                 float* col) {
  const int64_t cin_g = s.in_per_group(), M = s.out_per_group() * s.kernel_h * s.kernel_w;
  SgemmProblem p;
  p.M = M, p.N = N, p.K = cin_g;
  // A[m][k] = weight[g * cin_g + k][m]: the group's weight read transposed.
  p.a = weight + g * cin_g * M, p.a_rs = 1, p.a_cs = M;
  p.a_cache = s.groups == 1 ? weight_cache : nullptr;
  p.b = b, p.b_rs = b_rs, p.b_cs = 1;
  p.c = col, p.c_rs = N;
  const size_t mark = ctx.scratch_mark();
  const bool ok = sgemm(ctx, p);
  ctx.release_scratch(mark);
  return ok;
}

// Every image of the batch in one SGEMM per group: the group's input channels gathered as
// [cin_g][batch * in_plane], then each image's columns added onto its planes.
bool batched_images(KernelContext& ctx, const ConvShape& s, const float* input, const float* weight,
                    ConstantCache* weight_cache, float* out) {
  const int64_t cin_g = s.in_per_group(), cout_g = s.out_per_group();
  const int64_t khw = s.kernel_h * s.kernel_w, M = cout_g * khw;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t N = s.batch * in_plane;
  auto* xb =
      static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(cin_g * N) * sizeof(float), 64));
  auto* col =
      static_cast<float*>(ctx.allocate_scratch(static_cast<size_t>(M * N) * sizeof(float), 64));
  if (xb == nullptr || col == nullptr) return false;
  for (int64_t g = 0; g < s.groups; ++g) {
    for (int64_t k = 0; k < cin_g; ++k) {
      for (int64_t n = 0; n < s.batch; ++n) {
        const float* src = input + (n * s.in_channels + g * cin_g + k) * in_plane;
        std::copy(src, src + in_plane, xb + k * N + n * in_plane);
      }
    }
    if (!group_sgemm(ctx, s, weight, weight_cache, g, xb, N, N, col)) return false;
    opt::parallel_for(s.batch * cout_g, khw * in_plane, [&](int64_t u0, int64_t u1) {
      for (int64_t u = u0; u < u1; ++u) {
        const int64_t n = u / cout_g, c = u % cout_g;
        float* y = out + (n * s.out_channels + g * cout_g) * out_plane;
        col2im(s, col + n * in_plane, N, 0, s.in_h, c, c + 1, y);
      }
    });
  }
  return true;
}

}  // namespace

bool conv_transpose2d_f32(KernelContext& ctx, const ConvShape& s, const float* input,
                          const float* weight, ConstantCache* weight_cache, const float* bias,
                          float* out, const OutputActivation& activation) {
  const int64_t cin_g = s.in_per_group(), cout_g = s.out_per_group();
  const int64_t khw = s.kernel_h * s.kernel_w, M = cout_g * khw;
  const int64_t in_plane = s.in_h * s.in_w, out_plane = s.out_h * s.out_w;
  const int64_t rows = std::max<int64_t>(1, std::min(s.in_h, kColFloats / (M * s.in_w)));
  const size_t mark = ctx.scratch_mark();
  auto* col = static_cast<float*>(
      ctx.allocate_scratch(static_cast<size_t>(M * rows * s.in_w) * sizeof(float), 64));
  if (col == nullptr) return false;
  // Every output element is written (the bias) before col2im adds onto it.
  opt::parallel_for(s.batch * s.out_channels, out_plane, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      std::fill(out + p * out_plane, out + (p + 1) * out_plane,
                bias != nullptr ? bias[p % s.out_channels] : 0.0f);
    }
  });
  const bool batched = s.batch > 1 && in_plane < kBatchedPixels &&
                       M * s.batch * in_plane + cin_g * s.batch * in_plane <= kColFloats;
  if (batched) {
    if (!batched_images(ctx, s, input, weight, weight_cache, out)) {
      ctx.release_scratch(mark);
      return false;
    }
  }
  for (int64_t n = 0; n < s.batch && !batched; ++n) {
    for (int64_t g = 0; g < s.groups; ++g) {
      const float* x = input + (n * s.in_channels + g * cin_g) * in_plane;
      float* y = out + (n * s.out_channels + g * cout_g) * out_plane;
      for (int64_t ih0 = 0; ih0 < s.in_h; ih0 += rows) {
        const int64_t r = std::min(rows, s.in_h - ih0), pixels = r * s.in_w;
        if (!group_sgemm(ctx, s, weight, weight_cache, g, x + ih0 * s.in_w, in_plane, pixels,
                         col)) {
          ctx.release_scratch(mark);
          return false;
        }
        opt::parallel_for(cout_g, khw * pixels, [&](int64_t c0, int64_t c1) {
          col2im(s, col, pixels, ih0, r, c0, c1, y);
        });
      }
    }
  }
  if (activation.active()) {
    opt::parallel_for(s.batch * s.out_channels, out_plane, [&](int64_t p0, int64_t p1) {
      activation.apply_rows(out + p0 * out_plane, 0, 1, (p1 - p0) * out_plane);
    });
  }
  ctx.release_scratch(mark);
  return true;
}

}  // namespace pteron::optimized
