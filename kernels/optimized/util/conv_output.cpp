#include "kernels/optimized/util/conv_output.h"

#include "kernels/portable/util/broadcast.h"

namespace pteron::optimized {

Error check_conv_output(const char* op, const ConvShape& s, const Tensor* bias, Tensor& out,
                        const Tensor* residual, int32_t dim) {
  if (bias != nullptr && (bias->dim() != 1 || bias->size(0) != s.out_channels)) {
    return fail(Error::InvalidArgument, "%s: bias must have %lld elements", op,
                static_cast<long long>(s.out_channels));
  }
  // A 1-D convolution's output is [N, Cout, W]: the 2-D one's with its height of 1 left out.
  const int32_t sizes4[4] = {static_cast<int32_t>(s.batch), static_cast<int32_t>(s.out_channels),
                             static_cast<int32_t>(s.out_h), static_cast<int32_t>(s.out_w)};
  const int32_t sizes3[3] = {sizes4[0], sizes4[1], sizes4[3]};
  const int32_t* sizes = dim == 3 ? sizes3 : sizes4;
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  if (residual != nullptr) {
    bool same = residual->dim() == dim;
    for (int32_t d = 0; same && d < dim; ++d) same = residual->size(d) == sizes[d];
    if (!same) {
      return dim == 3 ? fail(Error::InvalidArgument,
                             "%s: residual must have the output's shape [%d, %d, %d]", op, sizes[0],
                             sizes[1], sizes[2])
                      : fail(Error::InvalidArgument,
                             "%s: residual must have the output's shape [%d, %d, %d, %d]", op,
                             sizes[0], sizes[1], sizes[2], sizes[3]);
    }
  }
  return Error::Ok;
}

}  // namespace pteron::optimized
