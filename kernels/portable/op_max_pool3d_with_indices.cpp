// aten::max_pool3d_with_indices.out(Tensor self, int[3] kernel_size, int[3] stride=[],
//     int[3] padding=0, int[3] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices)
// out = the max of each (dilated) window, indices = its flat position in the D x H x W plane
// (first occurrence; NaN wins, as in torch).
#include <limits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/pool.h"
#include "kernels/portable/util/pool3d.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::max_pool3d_with_indices.out";

template <typename T>
void max_pool3d(const Pool3dShape& s, const T* x, T* y, int64_t* idx) {
  using Acc = typename ComputeType<T>::type;
  const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* plane = x + p * in_plane;
    for (int64_t od = 0; od < s.out[0]; ++od)
      for (int64_t oh = 0; oh < s.out[1]; ++oh)
        for (int64_t ow = 0; ow < s.out[2]; ++ow) {
          const int64_t o[3] = {od, oh, ow};
          int64_t start[3];
          for (int i = 0; i < 3; ++i) start[i] = o[i] * s.stride[i] - s.pad[i];
          // A window all in padding (possible with dilation) gives -inf, as torch's.
          bool found = false;
          Acc best = pool_max_start<Acc>();
          int64_t at = -1;
          for (int64_t kd = 0; kd < s.kernel[0]; ++kd) {
            const int64_t d = start[0] + kd * s.dilation[0];
            if (d < 0 || d >= s.in[0]) continue;
            for (int64_t kh = 0; kh < s.kernel[1]; ++kh) {
              const int64_t h = start[1] + kh * s.dilation[1];
              if (h < 0 || h >= s.in[1]) continue;
              for (int64_t kw = 0; kw < s.kernel[2]; ++kw) {
                const int64_t w = start[2] + kw * s.dilation[2];
                if (w < 0 || w >= s.in[2]) continue;
                const int64_t pos = (d * s.in[1] + h) * s.in[2] + w;
                const Acc v = load_value(plane[pos]);
                if (!found || v > best || (v != v && best == best)) {
                  best = v;
                  at = pos;
                  found = true;
                }
              }
            }
          }
          *y++ = store_value<T>(best);
          *idx++ = at;
        }
  }
}

Error max_pool3d_with_indices_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  Tensor& out = *args[6]->tensor;
  Tensor& indices = *args[7]->tensor;
  Pool3dShape s;
  PTERON_TRY(parse_pool3d_shape(kOp, input, *args[1], *args[2], *args[3], args[4], args[5]->b, &s));
  PTERON_CHECK(max_pool_dtypes_ok(input, out), Error::NotSupported,
               "%s: dtypes %s -> %s not supported (real types, same dtype)", kOp,
               scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  PTERON_CHECK(indices.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: indices must be int64, got %s", kOp, scalar_type_name(indices.dtype()));
  int32_t sizes[5];
  pool3d_out_sizes(input, s.out, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, sizes, input.dim()));
  PTERON_CHECK(is_row_major(out) && is_row_major(indices), Error::NotSupported,
               "%s: only the default (NCDHW) dim order is supported", kOp);
  dispatch_dtype_in<kRealTypes>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    max_pool3d<T>(s, input.data<const T>(), out.data<T>(), indices.data<int64_t>());
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::max_pool3d_with_indices.out", max_pool3d_with_indices_out, "TLLLLBTT");

}  // namespace pteron
