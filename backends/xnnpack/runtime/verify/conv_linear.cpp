// Convolutions (plain, depthwise, transposed) and fully connected: filters, biases, their
// dtypes and the output's window size.
#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

// Filter/bias dtypes for convolutions and fully connected.
Error Verifier::check_weight_dtypes(bool allow_per_channel, uint32_t per_channel_dim) {
  const DataType x = in(0).dtype;
  const DataType w = in(1).dtype;
  const DataType y = out().dtype;
  const bool has_bias = num_inputs_ == 3;
  const DataType b = has_bias ? in(2).dtype : DataType::Invalid;
  if (x == DataType::Float32 && w == DataType::Float32 && y == DataType::Float32 &&
      (!has_bias || b == DataType::Float32)) {
    return Error::Ok;
  }
  if (x == DataType::QInt8 && y == DataType::QInt8 && w == DataType::QInt8 &&
      (!has_bias || b == DataType::QInt32)) {
    if (in(1).t->zero_point() != 0) {
      return node_unsupported("qint8 filter zero point must be 0 (symmetric), is %d",
                              in(1).t->zero_point());
    }
    return Error::Ok;
  }
  if (x == DataType::QInt8 && y == DataType::QInt8 && w == DataType::QCInt8 &&
      (!has_bias || b == DataType::QCInt32)) {
    if (!allow_per_channel) {
      return node_unsupported(
          "per-channel (qcint8) weights are not supported by this XNNPACK "
          "for this operator; lower it as a 1x1 conv2d");
    }
    if (in(1).t->channel_dim() != per_channel_dim) {
      return node_fail("qcint8 filter channel_dim must be %u", per_channel_dim);
    }
    if (has_bias && in(2).t->channel_dim() != 0) {
      return node_fail("qcint32 bias channel_dim must be 0");
    }
    return Error::Ok;
  }
  return node_unsupported("dtypes input %s, filter %s, bias %s, output %s are unsupported",
                          dtype_name(x), dtype_name(w), has_bias ? dtype_name(b) : "none",
                          dtype_name(y));
}

Error Verifier::check_bias(uint32_t channels) {
  if (num_inputs_ < 3) return Error::Ok;
  PTERON_TRY(expect_constant("bias", in(2)));
  const uint32_t dims[1] = {channels};
  return expect_dims("bias", in(2), dims, 1);
}

// Convolution and depthwise convolution: a constant filter of the given dims, an optional bias
// of oc elements, and an NHWC output of the window's size (attrs share their accessor names).
template <typename ConvAttrs>
Error Verifier::check_filter_bias_output(const ConvAttrs& a, const uint32_t (&wdims)[4],
                                         uint32_t oc) {
  PTERON_TRY(expect_constant("filter", in(1)));
  PTERON_TRY(expect_dims("filter", in(1), wdims, 4));
  PTERON_TRY(check_bias(oc));
  const TensorInfo& x = in(0);
  uint64_t oh, ow;
  if (!window_output(x.dims[1], a.padding_top(), a.padding_bottom(), a.kernel_height(),
                     a.stride_height(), a.dilation_height(), a.same_padding(), &oh) ||
      !window_output(x.dims[2], a.padding_left(), a.padding_right(), a.kernel_width(),
                     a.stride_width(), a.dilation_width(), a.same_padding(), &ow)) {
    return node_fail("the dilated kernel is larger than the padded input");
  }
  const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(oh), static_cast<uint32_t>(ow), oc};
  return expect_dims("output", out(), odims, 4);
}

Error Verifier::check_conv2d(const fb::Conv2d& a) {
  PTERON_TRY(arity(2, 3));
  if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
      a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
      a.groups() == 0 || a.group_input_channels() == 0 || a.group_output_channels() == 0) {
    return node_fail("kernel, stride, dilation, groups and channel counts must be >= 1");
  }
  PTERON_TRY(pads_zero_if_same(a.same_padding(), a.padding_top(), a.padding_right(),
                               a.padding_bottom(), a.padding_left()));
  const uint64_t ic = uint64_t{a.groups()} * a.group_input_channels();
  const uint64_t oc = uint64_t{a.groups()} * a.group_output_channels();
  if (ic > kMaxDimSize || oc > kMaxDimSize) return node_fail("channel count overflows");
  PTERON_TRY(check_weight_dtypes(true, 0));
  PTERON_TRY(expect_rank("input", in(0), 4));
  const TensorInfo& x = in(0);
  if (x.dims[3] != ic) {
    return node_fail("input has %u channels; groups * group_input_channels is %llu", x.dims[3],
                     static_cast<unsigned long long>(ic));
  }
  const uint32_t wdims[4] = {static_cast<uint32_t>(oc), a.kernel_height(), a.kernel_width(),
                             a.group_input_channels()};
  return check_filter_bias_output(a, wdims, static_cast<uint32_t>(oc));
}

Error Verifier::check_depthwise(const fb::DepthwiseConv2d& a) {
  PTERON_TRY(arity(2, 3));
  if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
      a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
      a.depth_multiplier() == 0 || a.input_channels() == 0) {
    return node_fail("kernel, stride, dilation, depth multiplier and channels must be >= 1");
  }
  PTERON_TRY(pads_zero_if_same(a.same_padding(), a.padding_top(), a.padding_right(),
                               a.padding_bottom(), a.padding_left()));
  const uint64_t oc = uint64_t{a.input_channels()} * a.depth_multiplier();
  if (oc > kMaxDimSize) return node_fail("channel count overflows");
  PTERON_TRY(check_weight_dtypes(true, 3));
  PTERON_TRY(expect_rank("input", in(0), 4));
  const TensorInfo& x = in(0);
  if (x.dims[3] != a.input_channels()) {
    return node_fail("input has %u channels; input_channels is %u", x.dims[3], a.input_channels());
  }
  const uint32_t wdims[4] = {1, a.kernel_height(), a.kernel_width(), static_cast<uint32_t>(oc)};
  return check_filter_bias_output(a, wdims, static_cast<uint32_t>(oc));
}

Error Verifier::check_deconv2d(const fb::Deconv2d& a) {
  PTERON_TRY(arity(2, 3));
  if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
      a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
      a.groups() == 0 || a.group_input_channels() == 0 || a.group_output_channels() == 0) {
    return node_fail("kernel, stride, dilation, groups and channel counts must be >= 1");
  }
  if (a.adjustment_height() >= a.stride_height() || a.adjustment_width() >= a.stride_width()) {
    return node_fail("adjustment must be smaller than the stride");
  }
  const uint64_t ic = uint64_t{a.groups()} * a.group_input_channels();
  const uint64_t oc = uint64_t{a.groups()} * a.group_output_channels();
  if (ic > kMaxDimSize || oc > kMaxDimSize) return node_fail("channel count overflows");
  PTERON_TRY(check_weight_dtypes(false, 0));
  PTERON_TRY(expect_rank("input", in(0), 4));
  const TensorInfo& x = in(0);
  if (x.dims[3] != ic) {
    return node_fail("input has %u channels; groups * group_input_channels is %llu", x.dims[3],
                     static_cast<unsigned long long>(ic));
  }
  PTERON_TRY(expect_constant("filter", in(1)));
  const uint32_t wdims[4] = {static_cast<uint32_t>(oc), a.kernel_height(), a.kernel_width(),
                             a.group_input_channels()};
  PTERON_TRY(expect_dims("filter", in(1), wdims, 4));
  PTERON_TRY(check_bias(static_cast<uint32_t>(oc)));
  int64_t ext[2];
  const uint32_t in_hw[2] = {x.dims[1], x.dims[2]};
  const uint32_t stride[2] = {a.stride_height(), a.stride_width()};
  const uint32_t adj[2] = {a.adjustment_height(), a.adjustment_width()};
  const uint32_t kernel[2] = {a.kernel_height(), a.kernel_width()};
  const uint32_t dil[2] = {a.dilation_height(), a.dilation_width()};
  const uint32_t pad[2] = {a.padding_top(), a.padding_left()};
  const uint32_t pad2[2] = {a.padding_bottom(), a.padding_right()};
  for (int d = 0; d < 2; ++d) {
    ext[d] = int64_t{stride[d]} * (in_hw[d] - 1) + adj[d] + (int64_t{kernel[d]} - 1) * dil[d] + 1 -
             int64_t{pad[d]} - int64_t{pad2[d]};
    if (ext[d] < 1 || ext[d] > static_cast<int64_t>(kMaxDimSize)) {
      return node_fail("padding leaves an empty or oversized output");
    }
  }
  const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(ext[0]),
                             static_cast<uint32_t>(ext[1]), static_cast<uint32_t>(oc)};
  return expect_dims("output", out(), odims, 4);
}

Error Verifier::check_fully_connected(const fb::FullyConnected& a) {
  PTERON_TRY(arity(2, 3));
  PTERON_TRY(check_weight_dtypes(false, 0));
  PTERON_TRY(expect_constant("filter", in(1)));
  PTERON_TRY(expect_rank("filter", in(1), 2));
  const uint32_t in_ch = a.transpose_weights() ? in(1).dims[0] : in(1).dims[1];
  const uint32_t out_ch = a.transpose_weights() ? in(1).dims[1] : in(1).dims[0];
  PTERON_TRY(check_bias(out_ch));
  const TensorInfo& x = in(0);
  if (a.reshape_2d()) {
    if (x.numel % in_ch != 0) {
      return node_fail("input has %llu elements, not a multiple of %u input channels",
                       static_cast<unsigned long long>(x.numel), in_ch);
    }
    const uint32_t odims[2] = {static_cast<uint32_t>(x.numel / in_ch), out_ch};
    return expect_dims("output", out(), odims, 2);
  }
  if (x.rank == 0 || x.dims[x.rank - 1] != in_ch) {
    return node_fail("input's last dim must be the %u input channels", in_ch);
  }
  uint32_t odims[kMaxDims];
  for (uint32_t d = 0; d < x.rank; ++d) odims[d] = x.dims[d];
  odims[x.rank - 1] = out_ch;
  return expect_dims("output", out(), odims, x.rank);
}

}  // namespace pteron::xnnpack::detail
