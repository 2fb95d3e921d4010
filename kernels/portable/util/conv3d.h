// 3-D NCDHW convolution and transposed convolution (aten::convolution.out with a 5-D input),
// as direct loops: volumetric convolutions are rare in the models we run, so they get the
// simple form, accumulated in the dtype's compute type and rounded once per output. The same
// loops serve int64 convolutions of every rank (torch computes those on CPU; they are rare
// enough that the direct form is the right one), wrapping on overflow as torch does.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"

namespace pteron {

struct Conv3dShape {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in[3] = {0, 0, 0}, kernel[3] = {0, 0, 0}, out[3] = {0, 0, 0};
  int64_t stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  bool transposed = false;
};

// Parses and checks aten::convolution.out's arguments for a 5-D input with torch's rules.
Error parse_conv3d_shape(const char* op, Span<EValue*> args, Conv3dShape* s);

// Regular weight: out_channels x in_channels/groups x kD x kH x kW; transposed weight:
// in_channels x out_channels/groups x kD x kH x kW. bias may be null. T is float, double, Half,
// BFloat16 or int64_t.
template <typename T>
void conv3d(const Conv3dShape& s, const T* input, const T* weight, const T* bias, T* out);

}  // namespace pteron
