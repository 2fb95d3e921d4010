// Transposed (fractionally strided) NCHW convolution, computed output by output as a gather so
// it needs no scratch and rounds once for every dtype. Rare in the models we run, so it is a
// direct loop rather than a GEMM plus col2im.
#pragma once

#include "kernels/portable/util/conv.h"
#include "kernels/portable/util/dtype.h"

namespace pteron {

// weight: in_channels x out_per_group x kH x kW. bias may be null.
template <typename T>
void conv_transpose2d(const ConvShape& s, const T* input, const T* weight, const T* bias, T* out);

}  // namespace pteron
