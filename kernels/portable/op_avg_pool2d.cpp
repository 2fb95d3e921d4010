// aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
//     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *,
//     Tensor(a!) out) -> Tensor(a!)
// The divisor follows torch: divisor_override if given, else the window clipped to the padded
// input (count_include_pad) or to the input itself; windows entirely in padding give 0.
#include <algorithm>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/layout.h"
#include "kernels/portable/util/pool.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::avg_pool2d.out";

template <typename T>
void avg_pool(const PoolShape& s, bool count_include_pad, int64_t divisor_override, const T* x,
              T* y) {
  using Acc = typename ComputeType<T>::type;
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* plane = x + p * s.in_h * s.in_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        int64_t ih0 = oh * s.stride_h - s.pad_h, iw0 = ow * s.stride_w - s.pad_w;
        int64_t ih1 = std::min(ih0 + s.kernel_h, s.in_h + s.pad_h);
        int64_t iw1 = std::min(iw0 + s.kernel_w, s.in_w + s.pad_w);
        const int64_t padded_count = (ih1 - ih0) * (iw1 - iw0);
        ih0 = std::max<int64_t>(ih0, 0);
        iw0 = std::max<int64_t>(iw0, 0);
        ih1 = std::min(ih1, s.in_h);
        iw1 = std::min(iw1, s.in_w);
        T& o = y[(p * s.out_h + oh) * s.out_w + ow];
        if (ih0 >= ih1 || iw0 >= iw1) {
          o = store_value<T>(Acc(0));
          continue;
        }
        Acc sum = 0;
        for (int64_t ih = ih0; ih < ih1; ++ih)
          for (int64_t iw = iw0; iw < iw1; ++iw)
            sum = wrapping_add(sum, load_value(plane[ih * s.in_w + iw]));
        const int64_t divisor = divisor_override != 0 ? divisor_override
                                : count_include_pad   ? padded_count
                                                      : (ih1 - ih0) * (iw1 - iw0);
        o = store_value<T>(pool_average(sum, divisor));
      }
    }
  }
}

Error avg_pool2d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const bool ceil_mode = args[4]->b, count_include_pad = args[5]->b;
  const int64_t divisor_override = args[6]->is_none() ? 0 : args[6]->i;
  Tensor& out = *args[7]->tensor;
  if (!args[6]->is_none() && divisor_override == 0) {
    return fail(Error::InvalidArgument, "%s: divisor must be not zero", kOp);
  }
  PoolShape s;
  PTERON_TRY(parse_pool_shape(kOp, input, *args[1], *args[2], *args[3], nullptr, ceil_mode, &s));
  if ((!is_floating(input.dtype()) && input.dtype() != ScalarType::Long) ||
      out.dtype() != input.dtype()) {
    return fail(Error::NotSupported,
                "%s: dtypes %s -> %s not supported (floating point or int64, "
                "same dtype)",
                kOp, scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  }
  int32_t sizes[4];
  pool_out_sizes(input, s.out_h, s.out_w, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  if (!is_row_major(out)) {
    return fail(Error::NotSupported, "%s: only the default (NCHW) dim order is supported", kOp);
  }
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool<T>(s, count_include_pad, divisor_override, input.data<const T>(), out.data<T>());
  };
  // int64 as torch's CPU avg_pool: an int64 sum, truncating division.
  if (input.dtype() == ScalarType::Long) {
    run(TypeTag<int64_t>{});
  } else {
    dispatch_float_dtype(input.dtype(), run);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::avg_pool2d.out", avg_pool2d_out, "TLLLBBiT");

}  // namespace pteron
