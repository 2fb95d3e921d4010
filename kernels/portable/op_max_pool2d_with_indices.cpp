// aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))
// indices are int64 offsets h * W + w within each input plane. As torch: NaN wins (the last
// NaN in the window), ties keep the first maximum, padding never wins.
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/pool.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::max_pool2d_with_indices.out";

template <typename T>
void max_pool(const PoolShape& s, const T* x, T* y, int64_t* idx) {
  using Acc = typename ComputeType<T>::type;
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* plane = x + p * s.in_h * s.in_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      int64_t ih0 = oh * s.stride_h - s.pad_h;
      const int64_t ih1 = std::min(ih0 + (s.kernel_h - 1) * s.dilation_h + 1, s.in_h);
      while (ih0 < 0) ih0 += s.dilation_h;
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        int64_t iw0 = ow * s.stride_w - s.pad_w;
        const int64_t iw1 = std::min(iw0 + (s.kernel_w - 1) * s.dilation_w + 1, s.in_w);
        while (iw0 < 0) iw0 += s.dilation_w;
        int64_t best = ih0 * s.in_w + iw0;
        Acc max = pool_max_start<Acc>();
        for (int64_t ih = ih0; ih < ih1; ih += s.dilation_h) {
          for (int64_t iw = iw0; iw < iw1; iw += s.dilation_w) {
            const int64_t i = ih * s.in_w + iw;
            const Acc v = load_value(plane[i]);
            if (v > max || v != v) {
              max = v;
              best = i;
            }
          }
        }
        const int64_t o = (p * s.out_h + oh) * s.out_w + ow;
        y[o] = store_value<T>(max);
        idx[o] = best;
      }
    }
  }
}

Error max_pool2d_with_indices_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  Tensor& indices = *args[7]->tensor;
  PoolShape s;
  PTERON_TRY(parse_pool_shape(kOp, input, *args[1], *args[2], *args[3], args[4], args[5]->b, &s));
  if (!max_pool_dtypes_ok(input, out)) {
    return fail(Error::NotSupported, "%s: dtypes %s -> %s not supported (real types, same dtype)",
                kOp, scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  }
  if (indices.dtype() != ScalarType::Long) {
    return fail(Error::InvalidArgument, "%s: indices must be int64, got %s", kOp,
                scalar_type_name(indices.dtype()));
  }
  int32_t sizes[4];
  pool_out_sizes(input, s.out_h, s.out_w, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, sizes, input.dim()));
  if (!is_row_major(out) || !is_row_major(indices)) {
    return fail(Error::NotSupported, "%s: only the default (NCHW) dim order is supported", kOp);
  }
  dispatch_dtype_in<kRealTypes>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool<T>(s, input.data<const T>(), out.data<T>(), indices.data<int64_t>());
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::max_pool2d_with_indices.out", max_pool2d_with_indices_out, "TLLLLBTT");

}  // namespace pteron
