// aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out)
//     -> Tensor(a!)
// Output cell o of n averages input [floor(o * in / n), ceil((o + 1) * in / n)) per dim
// (util/pool.h's adaptive_window).
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/pool.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_adaptive_avg_pool2d.out";

template <typename T>
void adaptive_avg_pool(int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w,
                       const T* x, T* y) {
  using Acc = typename ComputeType<T>::type;
  for (int64_t p = 0; p < planes; ++p) {
    const T* plane = x + p * in_h * in_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const AdaptiveWindow wh = adaptive_window(oh, out_h, in_h);
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const AdaptiveWindow ww = adaptive_window(ow, out_w, in_w);
        Acc sum = 0;
        for (int64_t ih = wh.begin; ih < wh.end; ++ih) {
          const T* row = plane + ih * in_w;
          for (int64_t iw = ww.begin; iw < ww.end; ++iw) sum += load_value(row[iw]);
        }
        y[(p * out_h + oh) * out_w + ow] =
            store_value<T>(sum / static_cast<Acc>((wh.end - wh.begin) * (ww.end - ww.begin)));
      }
    }
  }
}

Error adaptive_avg_pool2d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Span<const int64_t> size = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_pool_input(kOp, input));
  if (size.size() != 2) {
    return fail(Error::InvalidArgument, "%s: output_size must have 2 values", kOp);
  }
  const int64_t out_h = size[0], out_w = size[1];
  const int32_t h = input.dim() - 2;
  const int64_t in_h = input.size(h), in_w = input.size(h + 1);
  if (out_h < 0 || out_w < 0 || in_h < 1 || in_w < 1) {
    return fail(Error::InvalidArgument, "%s: cannot pool %lld x %lld to %lld x %lld", kOp,
                static_cast<long long>(in_h), static_cast<long long>(in_w),
                static_cast<long long>(out_h), static_cast<long long>(out_w));
  }
  if (!is_floating(input.dtype()) || out.dtype() != input.dtype()) {
    return fail(Error::NotSupported,
                "%s: dtypes %s -> %s not supported (floating point, same "
                "dtype)",
                kOp, scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  }
  int32_t sizes[4];
  pool_out_sizes(input, out_h, out_w, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  if (!is_row_major(out)) {
    return fail(Error::NotSupported, "%s: only the default (NCHW) dim order is supported", kOp);
  }
  const int64_t planes = input.numel() / (in_h * in_w);
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    adaptive_avg_pool<T>(planes, in_h, in_w, out_h, out_w, input.data<const T>(), out.data<T>());
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_adaptive_avg_pool2d.out", adaptive_avg_pool2d_out, "TLT");

}  // namespace pteron
