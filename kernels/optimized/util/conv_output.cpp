#include "kernels/optimized/util/conv_output.h"

#include "kernels/portable/util/broadcast.h"

namespace pteron::optimized {

Error check_conv_output(const char* op, const ConvShape& s, const Tensor* bias, Tensor& out,
                        const Tensor* residual) {
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != s.out_channels)) {
    return fail(Error::InvalidArgument, "%s: bias must have %lld elements", op,
                static_cast<long long>(s.out_channels));
  }
  const int32_t sizes[4] = {static_cast<int32_t>(s.batch), static_cast<int32_t>(s.out_channels),
                            static_cast<int32_t>(s.out_h), static_cast<int32_t>(s.out_w)};
  PTERON_TRY(expect_out_shape(op, out, sizes, 4));
  if (residual != nullptr) {
    bool same = residual->dim() == 4;
    for (int32_t d = 0; same && d < 4; ++d) same = residual->size(d) == sizes[d];
    if (!same) {
      return fail(Error::InvalidArgument,
                  "%s: residual must have the output's shape [%d, %d, %d, %d]", op, sizes[0],
                  sizes[1], sizes[2], sizes[3]);
    }
  }
  return Error::Ok;
}

}  // namespace pteron::optimized
