// aten::grid_sampler_2d.out(Tensor input, Tensor grid, int interpolation_mode, int padding_mode,
//     bool align_corners, *, Tensor(a!) out) -> Tensor(a!)
//
// out[n, c, h, w] samples input[n, c] at grid[n, h, w] = (x, y) in [-1, 1]. Modes: 0 bilinear,
// 1 nearest (round half to even), 2 bicubic (A = -0.75); padding: 0 zeros, 1 border, 2
// reflection. Coordinates, reflection and weights as ATen's vectorised CPU kernel
// (GridSamplerKernel.cpp), in float (double for float64). Floating dtypes, any dim order.
#include <cmath>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/grid_sample.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::grid_sampler_2d.out";

template <typename S>
void cubic_coefficients(S t, S* c) {
  const S a = S(-0.75);
  auto conv1 = [a](S x) { return ((a + S(2)) * x - (a + S(3))) * x * x + S(1); };
  auto conv2 = [a](S x) { return ((a * x - S(5) * a) * x + S(8) * a) * x - S(4) * a; };
  c[0] = conv2(t + S(1));
  c[1] = conv1(t);
  const S t2 = S(1) - t;
  c[2] = conv1(t2);
  c[3] = conv2(t2 + S(1));
}

template <typename T>
void grid_sample(const Tensor& input, const Tensor& grid, Tensor& out, int mode, int padding,
                 bool align_corners) {
  using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const T* x = input.data<const T>();
  const T* g = grid.data<const T>();
  T* y = out.data<T>();
  const GridAxis<S> ax{input.size(3), padding, align_corners};
  const GridAxis<S> ay{input.size(2), padding, align_corners};
  const int64_t channels = input.size(1), oh = out.size(2), ow = out.size(3);
  const int64_t xc = input.stride(1), xh = input.stride(2), xw = input.stride(3);
  for (int64_t n = 0; n < input.size(0); ++n) {
    const T* plane0 = x + n * input.stride(0);
    for (int64_t h = 0; h < oh; ++h) {
      for (int64_t w = 0; w < ow; ++w) {
        const int64_t go = n * grid.stride(0) + h * grid.stride(1) + w * grid.stride(2);
        const S gx = static_cast<S>(load_value(g[go]));
        const S gy = static_cast<S>(load_value(g[go + grid.stride(3)]));
        T* dst = y + n * out.stride(0) + h * out.stride(2) + w * out.stride(3);
        // Value at integer input position (ix, iy) of channel plane p, zero outside.
        auto at = [&](const T* p, int64_t ix, int64_t iy) -> S {
          return ax.inside(ix) && ay.inside(iy) ? static_cast<S>(load_value(p[iy * xh + ix * xw]))
                                                : S(0);
        };
        if (mode == kGridBilinear) {
          const S fx = ax.pad(ax.unnormalize(gx)), fy = ay.pad(ay.unnormalize(gy));
          const S xw0 = std::floor(fx), yn = std::floor(fy);
          const S we = fx - xw0, ee = xw0 + S(1) - fx, nn = fy - yn, ss = yn + S(1) - fy;
          const S nw = ss * ee, ne = ss * we, sw = nn * ee, se = nn * we;
          const int64_t ix = ax.index(xw0), iy = ay.index(yn);
          const bool finite = std::isfinite(fx) && std::isfinite(fy);
          for (int64_t c = 0; c < channels; ++c) {
            const T* p = plane0 + c * xc;
            S v = S(0);
            if (finite) {
              v = at(p, ix, iy) * nw + at(p, ix + 1, iy) * ne + at(p, ix, iy + 1) * sw +
                  at(p, ix + 1, iy + 1) * se;
            } else if (padding == kGridZeros) {
              v = S(0);
            } else {
              v = std::nan("");
            }
            dst[c * out.stride(1)] = store_value<T>(v);
          }
        } else if (mode == kGridNearest) {
          const S fx = std::nearbyint(ax.pad(ax.unnormalize(gx)));
          const S fy = std::nearbyint(ay.pad(ay.unnormalize(gy)));
          const bool ok = fx >= S(0) && fx < static_cast<S>(ax.size) && fy >= S(0) &&
                          fy < static_cast<S>(ay.size);
          const int64_t ix = ok ? static_cast<int64_t>(fx) : 0,
                        iy = ok ? static_cast<int64_t>(fy) : 0;
          for (int64_t c = 0; c < channels; ++c) {
            const T* p = plane0 + c * xc;
            dst[c * out.stride(1)] = store_value<T>(ok ? at(p, ix, iy) : S(0));
          }
        } else {
          const S fx = ax.unnormalize(gx), fy = ay.unnormalize(gy);
          const S x0 = std::floor(fx), y0 = std::floor(fy);
          S cx[4], cy[4];
          cubic_coefficients(fx - x0, cx);
          cubic_coefficients(fy - y0, cy);
          const bool finite = std::isfinite(fx) && std::isfinite(fy);
          // Tap coordinates through the padding map (get_value_bounded).
          int64_t tx[4], ty[4];
          bool okx[4], oky[4];
          for (int j = 0; j < 4; ++j) {
            const S px = ax.pad(x0 - S(1) + S(j)), py = ay.pad(y0 - S(1) + S(j));
            okx[j] = finite && px > S(-1) && px < static_cast<S>(ax.size);
            oky[j] = finite && py > S(-1) && py < static_cast<S>(ay.size);
            tx[j] = okx[j] ? static_cast<int64_t>(px) : 0;
            ty[j] = oky[j] ? static_cast<int64_t>(py) : 0;
          }
          for (int64_t c = 0; c < channels; ++c) {
            const T* p = plane0 + c * xc;
            S rows[4];
            for (int i = 0; i < 4; ++i) {
              S r[4];
              for (int j = 0; j < 4; ++j) r[j] = okx[j] && oky[i] ? at(p, tx[j], ty[i]) : S(0);
              rows[i] = r[0] * cx[0] + r[1] * cx[1] + r[2] * cx[2] + r[3] * cx[3];
            }
            const S v = rows[0] * cy[0] + rows[1] * cy[1] + rows[2] * cy[2] + rows[3] * cy[3];
            dst[c * out.stride(1)] = store_value<T>(v);
          }
        }
      }
    }
  }
}

Error grid_sampler_2d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& grid = *args[1]->tensor;
  const int64_t mode = args[2]->i, padding = args[3]->i;
  Tensor& out = *args[5]->tensor;
  PTERON_CHECK(input.dim() == 4 && grid.dim() == 4, Error::InvalidArgument,
               "%s: expects a 4D input and a 4D grid, got %dD and %dD", kOp, input.dim(),
               grid.dim());
  PTERON_CHECK(grid.dtype() == input.dtype(), Error::InvalidArgument,
               "%s: grid dtype %s differs from input dtype %s", kOp, scalar_type_name(grid.dtype()),
               scalar_type_name(input.dtype()));
  PTERON_TRY(expect_dtype(kOp, out, input.dtype(), "out"));
  PTERON_CHECK(grid.size(0) == input.size(0) && grid.size(3) == 2, Error::InvalidArgument,
               "%s: grid must be [N=%d, H, W, 2], got [%d, %d, %d, %d]", kOp, input.size(0),
               grid.size(0), grid.size(1), grid.size(2), grid.size(3));
  PTERON_CHECK(input.size(2) > 0 && input.size(3) > 0, Error::InvalidArgument,
               "%s: input has an empty spatial dim", kOp);
  PTERON_CHECK(mode >= 0 && mode <= 2, Error::InvalidArgument,
               "%s: interpolation_mode %lld not in 0 (bilinear), 1 (nearest), 2 (bicubic)", kOp,
               static_cast<long long>(mode));
  PTERON_CHECK(padding >= 0 && padding <= 2, Error::InvalidArgument,
               "%s: padding_mode %lld not in 0 (zeros), 1 (border), 2 (reflection)", kOp,
               static_cast<long long>(padding));
  const int32_t sizes[4] = {input.size(0), input.size(1), grid.size(1), grid.size(2)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 4));
  if (!is_floating(input.dtype())) {
    return fail(Error::NotSupported, "%s: dtype %s not supported (floating point)", kOp,
                scalar_type_name(input.dtype()));
  }
  if (out.numel() == 0) return Error::Ok;
  dispatch_dtype_in<kFloatTypes>(input.dtype(), [&](auto tag) {
    grid_sample<typename decltype(tag)::type>(input, grid, out, static_cast<int>(mode),
                                              static_cast<int>(padding), args[4]->b);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::grid_sampler_2d.out", grid_sampler_2d_out, "TTIIBT");

}  // namespace pteron
