// aten::_adaptive_avg_pool3d.out(Tensor self, SymInt[3] output_size, *, Tensor(a!) out)
// Output cell i of an n -> m dim averages input [floor(i * n / m), ceil((i + 1) * n / m)), as
// torch's adaptive pooling does.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/pool.h"
#include "kernels/portable/util/pool3d.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::_adaptive_avg_pool3d.out";

Error adaptive_avg_pool3d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  Tensor& out = *args[2]->tensor;
  PTERON_TRY(check_pool3d_input(kOp, input));
  const Span<const int64_t> size = args[1]->int_list;
  PTERON_CHECK(size.size() == 3, Error::InvalidArgument,
               "%s: output_size must have 3 values, got %zu", kOp, size.size());
  int64_t osz[3], isz[3];
  const int32_t first = input.dim() - 3;
  for (int i = 0; i < 3; ++i) {
    PTERON_CHECK(size[i] >= 1 && size[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: output_size %lld is invalid", kOp, static_cast<long long>(size[i]));
    osz[i] = size[i];
    isz[i] = input.size(first + i);
  }
  PTERON_CHECK(is_floating(input.dtype()) && out.dtype() == input.dtype(), Error::NotSupported,
               "%s: dtypes %s -> %s not supported (floating point, same dtype)", kOp,
               scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  int32_t sizes[5];
  pool3d_out_sizes(input, osz, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  PTERON_CHECK(is_row_major(out), Error::NotSupported,
               "%s: only the default (NCDHW) dim order is supported", kOp);
  int64_t planes = 1;
  for (int32_t d = 0; d < first; ++d) planes *= input.size(d);
  dispatch_float_dtype(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    const T* x = input.data<const T>();
    T* y = out.data<T>();
    for (int64_t p = 0; p < planes; ++p) {
      const T* plane = x + p * isz[0] * isz[1] * isz[2];
      for (int64_t od = 0; od < osz[0]; ++od) {
        const AdaptiveWindow wd = adaptive_window(od, osz[0], isz[0]);
        for (int64_t oh = 0; oh < osz[1]; ++oh) {
          const AdaptiveWindow wh = adaptive_window(oh, osz[1], isz[1]);
          for (int64_t ow = 0; ow < osz[2]; ++ow) {
            const AdaptiveWindow ww = adaptive_window(ow, osz[2], isz[2]);
            Acc sum = 0;
            for (int64_t d = wd.begin; d < wd.end; ++d)
              for (int64_t h = wh.begin; h < wh.end; ++h)
                for (int64_t w = ww.begin; w < ww.end; ++w)
                  sum += load_value(plane[(d * isz[1] + h) * isz[2] + w]);
            *y++ = store_value<T>(sum / static_cast<Acc>((wd.end - wd.begin) * (wh.end - wh.begin) *
                                                         (ww.end - ww.begin)));
          }
        }
      }
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_adaptive_avg_pool3d.out", adaptive_avg_pool3d_out, "TLT");

}  // namespace pteron
