// aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
// float32 NCHW: planes split over threads, and per output row the window's taps are visited
// outermost with the output columns innermost, so the compare-and-select runs over a whole row
// (vectorised) instead of one window at a time (resnet-18's stem pool: 7 ms portable). Taps are
// visited in the portable kernel's order (rows, then columns, ascending), so ties keep the first
// maximum and NaN wins as in torch. Anything else runs the portable kernel.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/pool.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::max_pool2d_with_indices.out";

int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// Output columns per pass: values and 32-bit indices of a pass live in stack rows, so the
// compare-and-select runs on same-width lanes (int64 selects did not vectorise).
constexpr int64_t kCols = 256;

// y[ow] = max(y[ow], src[ow * stride]) for ow in [lo, hi), NaN winning; idx follows the pick.
// kStride != 0 fixes the stride at compile time (the loads then vectorise), 0 reads `stride`.
template <int64_t kStride>
void take_max(const float* src, int64_t stride, int32_t base, int64_t lo, int64_t hi, float* y,
              int32_t* idx) {
  const int64_t st = kStride != 0 ? kStride : stride;
  // Masks instead of branches: on random data the pick is unpredictable, and mispredicted
  // branches made this loop ~5x slower than its loads.
  for (int64_t ow = lo; ow < hi; ++ow) {
    const float v = src[ow * st];
    const int32_t take = -static_cast<int32_t>((v > y[ow]) | (v != v));
    uint32_t vb, yb;
    std::memcpy(&vb, &v, 4);
    std::memcpy(&yb, &y[ow], 4);
    yb ^= (yb ^ vb) & static_cast<uint32_t>(take);
    std::memcpy(&y[ow], &yb, 4);
    idx[ow] ^= (idx[ow] ^ (base + static_cast<int32_t>(ow * st))) & take;
  }
}

// Columns [c0, c1) (c1 - c0 <= kCols) of output row `oh` of one plane into y (values) and idx
// (offsets ih * W + iw; the plane has fewer than 2^31 elements).
void max_pool_cols(const PoolShape& s, const float* plane, int64_t oh, int64_t c0, int64_t c1,
                   float* y, int64_t* idx) {
  float best[kCols];
  int32_t at[kCols];
  float* b = best - c0;  // b[ow], a[ow] for ow in [c0, c1)
  int32_t* a = at - c0;
  int64_t ih0 = oh * s.stride_h - s.pad_h;
  const int64_t ih1 = min64(ih0 + (s.kernel_h - 1) * s.dilation_h + 1, s.in_h);
  while (ih0 < 0) ih0 += s.dilation_h;
  for (int64_t ow = c0; ow < c1; ++ow) {
    int64_t iw0 = ow * s.stride_w - s.pad_w;
    while (iw0 < 0) iw0 += s.dilation_w;
    b[ow] = -INFINITY;
    a[ow] = static_cast<int32_t>(ih0 * s.in_w + iw0);
  }
  for (int64_t ih = ih0; ih < ih1; ih += s.dilation_h) {
    const float* row = plane + ih * s.in_w;
    for (int64_t kj = 0; kj < s.kernel_w; ++kj) {
      // Output columns whose tap kj lands inside the row: lo <= ow < hi.
      const int64_t off = kj * s.dilation_w - s.pad_w;
      int64_t lo = off >= 0 ? 0 : (-off + s.stride_w - 1) / s.stride_w;
      int64_t hi = s.in_w - off <= 0 ? 0 : min64(s.out_w, (s.in_w - off - 1) / s.stride_w + 1);
      lo = lo < c0 ? c0 : lo;
      hi = min64(hi, c1);
      const int32_t base = static_cast<int32_t>(ih * s.in_w + off);
      if (s.stride_w == 2) {  // resnet's and most CNNs' pools
        take_max<2>(row + off, 2, base, lo, hi, b, a);
      } else if (s.stride_w == 1) {
        take_max<1>(row + off, 1, base, lo, hi, b, a);
      } else {
        take_max<0>(row + off, s.stride_w, base, lo, hi, b, a);
      }
    }
  }
  for (int64_t ow = c0; ow < c1; ++ow) {
    y[ow] = b[ow];
    idx[ow] = a[ow];
  }
}

Error max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  Tensor& indices = *args[7]->tensor;
  if (input.dtype() != ScalarType::Float || out.dtype() != ScalarType::Float ||
      indices.dtype() != ScalarType::Long || (input.dim() != 3 && input.dim() != 4) ||
      !is_row_major(input) ||
      static_cast<int64_t>(input.size(input.dim() - 2)) * input.size(input.dim() - 1) >=
          (int64_t{1} << 31)) {
    return call_portable(kOp, ctx, args);
  }
  PoolShape s;
  PTERON_TRY(parse_pool_shape(kOp, input, *args[1], *args[2], *args[3], args[4], args[5]->b, &s));
  int32_t sizes[4];
  pool_out_sizes(input, s.out_h, s.out_w, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, sizes, input.dim()));
  if (!is_row_major(out) || !is_row_major(indices)) return call_portable(kOp, ctx, args);
  const float* x = input.data<const float>();
  float* y = out.data<float>();
  int64_t* idx = indices.data<int64_t>();
  const int64_t rows = s.planes * s.out_h;
  opt::parallel_for(rows, s.out_w * s.kernel_h * s.kernel_w, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t p = r / s.out_h, oh = r % s.out_h;
      for (int64_t c0 = 0; c0 < s.out_w; c0 += kCols) {
        max_pool_cols(s, x + p * s.in_h * s.in_w, oh, c0, min64(c0 + kCols, s.out_w),
                      y + r * s.out_w, idx + r * s.out_w);
      }
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::max_pool2d_with_indices.out", max_pool2d_with_indices_out, "TLLLLBTT");

}  // namespace pteron::optimized
