// aten::grid_sampler_3d.out(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
//     bool align_corners, *, Tensor(a!) out) -> Tensor(a!)
//
// out[n, c, d, h, w] samples input[n, c] at grid[n, d, h, w] = (x, y, z) in [-1, 1]: what
// F.grid_sample does with 5-D input (volumetric registration, 3-D warps). Modes: 0 trilinear,
// 1 nearest (round half to even); torch has no bicubic in 3-D. Padding: 0 zeros, 1 border,
// 2 reflection. Coordinates as the 2-D kernel's (util/grid_sample.h), corner weights and their
// order as ATen's grid_sampler_3d CPU kernel, in float (double for float64). Floating dtypes,
// any dim order.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/grid_sample.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::grid_sampler_3d.out";

template <typename T>
void grid_sample_3d(const Tensor& input, const Tensor& grid, Tensor& out, int mode, int padding,
                    bool align_corners) {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* x = input.data<const T>();
  const T* g = grid.data<const T>();
  T* y = out.data<T>();
  const GridAxis<S> ax{input.size(4), padding, align_corners};
  const GridAxis<S> ay{input.size(3), padding, align_corners};
  const GridAxis<S> az{input.size(2), padding, align_corners};
  const int64_t channels = input.size(1);
  const int64_t xc = input.stride(1), xd = input.stride(2), xh = input.stride(3),
                xw = input.stride(4);
  for (int64_t n = 0; n < input.size(0); ++n) {
    const T* volume0 = x + n * input.stride(0);
    for (int64_t d = 0; d < out.size(2); ++d)
      for (int64_t h = 0; h < out.size(3); ++h)
        for (int64_t w = 0; w < out.size(4); ++w) {
          const int64_t go =
              n * grid.stride(0) + d * grid.stride(1) + h * grid.stride(2) + w * grid.stride(3);
          const S fx = ax.pad(ax.unnormalize(static_cast<S>(load_value(g[go]))));
          const S fy = ay.pad(ay.unnormalize(static_cast<S>(load_value(g[go + grid.stride(4)]))));
          const S fz =
              az.pad(az.unnormalize(static_cast<S>(load_value(g[go + 2 * grid.stride(4)]))));
          T* dst =
              y + n * out.stride(0) + d * out.stride(2) + h * out.stride(3) + w * out.stride(4);
          if (mode == kGridNearest) {
            const S rx = std::nearbyint(fx), ry = std::nearbyint(fy), rz = std::nearbyint(fz);
            const int64_t ix = ax.index(rx), iy = ay.index(ry), iz = az.index(rz);
            const bool ok = ax.inside(ix) && ay.inside(iy) && az.inside(iz);
            for (int64_t c = 0; c < channels; ++c) {
              const T* v = volume0 + c * xc;
              dst[c * out.stride(1)] = ok ? v[iz * xd + iy * xh + ix * xw] : store_value<T>(S(0));
            }
            continue;
          }
          // Trilinear: the eight corners around (fx, fy, fz), top (z0) then bottom (z0 + 1),
          // north-west first, each weighted by the volume of the opposite sub-box.
          const S x0 = std::floor(fx), y0 = std::floor(fy), z0 = std::floor(fz);
          const int64_t ix = ax.index(x0), iy = ay.index(y0), iz = az.index(z0);
          const S wx[2] = {x0 + S(1) - fx, fx - x0};
          const S wy[2] = {y0 + S(1) - fy, fy - y0};
          const S wz[2] = {z0 + S(1) - fz, fz - z0};
          for (int64_t c = 0; c < channels; ++c) {
            const T* v = volume0 + c * xc;
            S acc = S(0);
            for (int k = 0; k < 2; ++k)
              for (int j = 0; j < 2; ++j)
                for (int i = 0; i < 2; ++i) {
                  const int64_t cx = ix + i, cy = iy + j, cz = iz + k;
                  if (ax.inside(cx) && ay.inside(cy) && az.inside(cz)) {
                    acc += static_cast<S>(load_value(v[cz * xd + cy * xh + cx * xw])) *
                           (wx[i] * wy[j] * wz[k]);
                  }
                }
            dst[c * out.stride(1)] = store_value<T>(acc);
          }
        }
  }
}

Error grid_sampler_3d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& grid = *args[1]->tensor;
  const int64_t mode = args[2]->i, padding = args[3]->i;
  Tensor& out = *args[5]->tensor;
  PTERON_CHECK(input.dim() == 5 && grid.dim() == 5, Error::InvalidArgument,
               "%s: expects a 5D input and a 5D grid, got %dD and %dD", kOp, input.dim(),
               grid.dim());
  PTERON_CHECK(grid.dtype() == input.dtype(), Error::InvalidArgument,
               "%s: grid dtype %s differs from input dtype %s", kOp, scalar_type_name(grid.dtype()),
               scalar_type_name(input.dtype()));
  PTERON_TRY(expect_dtype(kOp, out, input.dtype(), "out"));
  PTERON_CHECK(grid.size(0) == input.size(0) && grid.size(4) == 3, Error::InvalidArgument,
               "%s: grid must be [N=%d, D, H, W, 3], got [%d, %d, %d, %d, %d]", kOp, input.size(0),
               grid.size(0), grid.size(1), grid.size(2), grid.size(3), grid.size(4));
  PTERON_CHECK(input.size(2) > 0 && input.size(3) > 0 && input.size(4) > 0, Error::InvalidArgument,
               "%s: input has an empty spatial dim", kOp);
  PTERON_CHECK(mode == kGridBilinear || mode == kGridNearest, Error::InvalidArgument,
               "%s: interpolation_mode %lld not in 0 (trilinear), 1 (nearest)", kOp,
               static_cast<long long>(mode));
  PTERON_CHECK(padding >= 0 && padding <= 2, Error::InvalidArgument,
               "%s: padding_mode %lld not in 0 (zeros), 1 (border), 2 (reflection)", kOp,
               static_cast<long long>(padding));
  const int32_t sizes[5] = {input.size(0), input.size(1), grid.size(1), grid.size(2), grid.size(3)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 5));
  if (!is_floating(input.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point)", kOp,
                scalar_type_name(input.dtype()));
  }
  if (out.numel() == 0) return Error::Ok;
  dispatch_dtype_in<kFloatTypes>(input.dtype(), [&](auto tag) {
    grid_sample_3d<typename decltype(tag)::type>(input, grid, out, static_cast<int>(mode),
                                                 static_cast<int>(padding), args[4]->b);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::grid_sampler_3d.out", grid_sampler_3d_out, "TTIIBT");

}  // namespace pteron
