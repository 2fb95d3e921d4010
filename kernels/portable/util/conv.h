// Shape of a 1-D or 2-D NCHW convolution (1-D runs as 2-D with height 1), parsed and checked
// from aten::convolution.out's arguments with torch's rules.
#pragma once

#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"

namespace pteron {

struct ConvShape {
  int64_t batch = 0, in_channels = 0, in_h = 1, in_w = 0;
  int64_t out_channels = 0, kernel_h = 1, kernel_w = 0;
  int64_t out_h = 1, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  bool transposed = false;

  int64_t in_per_group() const { return in_channels / groups; }
  int64_t out_per_group() const { return out_channels / groups; }
};

// Parses args (input, weight, bias, stride, padding, dilation, transposed, output_padding,
// groups) into `s`, checking ranks, channel counts and that the output is not empty-by-error.
// Fails with torch-like messages naming `op`.
Error parse_conv_shape(const char* op, Span<EValue*> args, ConvShape* s);

}  // namespace pteron
