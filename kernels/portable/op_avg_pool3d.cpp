// aten::avg_pool3d.out(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0,
//     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *,
//     Tensor(a!) out)
// As avg_pool2d with a depth dim: the divisor is divisor_override if given, else the window
// clipped to the padded input (count_include_pad) or to the input itself.
#include <algorithm>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "kernels/portable/util/pool.h"
#include "kernels/portable/util/pool3d.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::avg_pool3d.out";

template <typename T>
void avg_pool3d(const Pool3dShape& s, bool count_include_pad, int64_t divisor_override, const T* x,
                T* y) {
  using Acc = typename ComputeType<T>::type;
  const int64_t in_plane = s.in[0] * s.in[1] * s.in[2];
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* plane = x + p * in_plane;
    for (int64_t od = 0; od < s.out[0]; ++od)
      for (int64_t oh = 0; oh < s.out[1]; ++oh)
        for (int64_t ow = 0; ow < s.out[2]; ++ow) {
          int64_t lo[3], hi[3];
          const int64_t o[3] = {od, oh, ow};
          int64_t padded = 1, inside = 1;
          for (int i = 0; i < 3; ++i) {
            lo[i] = o[i] * s.stride[i] - s.pad[i];
            hi[i] = std::min(lo[i] + s.kernel[i], s.in[i] + s.pad[i]);
            padded *= hi[i] - lo[i];
            lo[i] = std::max<int64_t>(lo[i], 0);
            hi[i] = std::min(hi[i], s.in[i]);
            inside *= hi[i] > lo[i] ? hi[i] - lo[i] : 0;
          }
          T& out = *y++;
          if (inside == 0) {
            out = store_value<T>(Acc(0));
            continue;
          }
          Acc sum = 0;
          for (int64_t d = lo[0]; d < hi[0]; ++d)
            for (int64_t h = lo[1]; h < hi[1]; ++h)
              for (int64_t w = lo[2]; w < hi[2]; ++w)
                sum = wrapping_add(sum, load_value(plane[(d * s.in[1] + h) * s.in[2] + w]));
          const int64_t divisor = divisor_override != 0 ? divisor_override
                                  : count_include_pad   ? padded
                                                        : inside;
          out = store_value<T>(pool_average(sum, divisor));
        }
  }
}

Error avg_pool3d_out(KernelContext&, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  Tensor& out = *args[7]->tensor;
  const int64_t divisor_override = args[6]->is_none() ? 0 : args[6]->i;
  PTERON_CHECK(args[6]->is_none() || divisor_override != 0, Error::InvalidArgument,
               "%s: divisor must be not zero", kOp);
  Pool3dShape s;
  PTERON_TRY(parse_pool3d_shape(kOp, input, *args[1], *args[2], *args[3], nullptr, args[4]->b, &s));
  PTERON_CHECK((is_floating(input.dtype()) || input.dtype() == ScalarType::Long) &&
                   out.dtype() == input.dtype(),
               Error::NotSupported,
               "%s: dtypes %s -> %s not supported (floating point or int64, same dtype)", kOp,
               scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  int32_t sizes[5];
  pool3d_out_sizes(input, s.out, sizes);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  PTERON_CHECK(is_row_major(out), Error::NotSupported,
               "%s: only the default (NCDHW) dim order is supported", kOp);
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    avg_pool3d<T>(s, args[5]->b, divisor_override, input.data<const T>(), out.data<T>());
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

PTERON_KERNEL("aten::avg_pool3d.out", avg_pool3d_out, "TLLLBBiT");

}  // namespace pteron
