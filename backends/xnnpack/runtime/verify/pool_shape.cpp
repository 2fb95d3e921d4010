// Pools and shape operators: max/average pooling, constant pad, reshape, bilinear resize and
// depth to space.
#include <cmath>

#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

Error Verifier::check_pool(uint32_t pt, uint32_t pr, uint32_t pb, uint32_t pl, uint32_t kh,
                           uint32_t kw, uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw,
                           bool same) {
  if (kh == 0 || kw == 0 || sh == 0 || sw == 0 || dh == 0 || dw == 0) {
    return node_fail("pooling size, stride and dilation must be >= 1");
  }
  if (uint64_t{kh} * kw < 2) return node_unsupported("a 1x1 pool is not supported");
  PTERON_TRY(pads_zero_if_same(same, pt, pr, pb, pl));
  PTERON_TRY(expect_rank("input", in(0), 4));
  const TensorInfo& x = in(0);
  uint64_t oh, ow;
  if (!window_output(x.dims[1], pt, pb, kh, sh, dh, same, &oh) ||
      !window_output(x.dims[2], pl, pr, kw, sw, dw, same, &ow)) {
    return node_fail("the pooling window is larger than the padded input");
  }
  const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(oh), static_cast<uint32_t>(ow),
                             x.dims[3]};
  return expect_dims("output", out(), odims, 4);
}

Error Verifier::check_max_pool(const fb::MaxPool2d& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, true));
  PTERON_TRY(expect_same_quant(in(0), out()));
  return check_pool(a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
                    a.pooling_height(), a.pooling_width(), a.stride_height(), a.stride_width(),
                    a.dilation_height(), a.dilation_width(), a.same_padding());
}

Error Verifier::check_avg_pool(const fb::AvgPool2d& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, false));
  return check_pool(a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
                    a.pooling_height(), a.pooling_width(), a.stride_height(), a.stride_width(), 1,
                    1, a.same_padding());
}

Error Verifier::check_pad(const fb::ConstantPad& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, true));
  PTERON_TRY(expect_same_quant(in(0), out()));
  const TensorInfo& x = in(0);
  const auto* pre = a.pre_paddings();
  const auto* post = a.post_paddings();
  if ((pre ? pre->size() : 0) != x.rank || (post ? post->size() : 0) != x.rank) {
    return node_fail("needs %u pre and post paddings", x.rank);
  }
  if (!std::isfinite(a.padding_value())) return node_fail("padding value must be finite");
  uint32_t dims[kMaxDims];
  for (uint32_t d = 0; d < x.rank; ++d) {
    const uint64_t v = uint64_t{x.dims[d]} + pre->Get(d) + post->Get(d);
    if (v > kMaxDimSize) return node_fail("padded dim %u overflows", d);
    dims[d] = static_cast<uint32_t>(v);
  }
  return expect_dims("output", out(), dims, x.rank);
}

Error Verifier::check_reshape(const fb::StaticReshape& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, true));
  PTERON_TRY(expect_same_quant(in(0), out()));
  const auto* shape = a.new_shape();
  const uint32_t rank = shape ? shape->size() : 0;
  if (rank > kMaxDims) return node_fail("new_shape has %u dims", rank);
  uint32_t dims[kMaxDims];
  for (uint32_t d = 0; d < rank; ++d) dims[d] = shape->Get(d);
  PTERON_TRY(expect_dims("output", out(), dims, rank));
  if (out().numel != in(0).numel) {
    return node_fail("input has %llu elements, output %llu",
                     static_cast<unsigned long long>(in(0).numel),
                     static_cast<unsigned long long>(out().numel));
  }
  return Error::Ok;
}

Error Verifier::check_resize(const fb::ResizeBilinear2d& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, true));
  PTERON_TRY(expect_same_quant(in(0), out()));
  if (a.align_corners() && a.tensorflow_legacy()) {
    return node_fail("align_corners and tensorflow_legacy are exclusive");
  }
  if (a.new_height() == 0 || a.new_width() == 0 || a.new_height() > kMaxDimSize ||
      a.new_width() > kMaxDimSize) {
    return node_fail("new size must be >= 1");
  }
  PTERON_TRY(expect_rank("input", in(0), 4));
  const uint32_t dims[4] = {in(0).dims[0], a.new_height(), a.new_width(), in(0).dims[3]};
  return expect_dims("output", out(), dims, 4);
}

Error Verifier::check_depth_to_space(const fb::DepthToSpace& a) {
  PTERON_TRY(arity(1, 1));
  PTERON_TRY(expect_uniform_dtype(1, false));
  PTERON_TRY(expect_rank("input", in(0), 4));
  const uint32_t b = a.block_size();
  if (b < 2 || b > 65535) return node_fail("block size must be >= 2");
  const TensorInfo& x = in(0);
  const uint64_t bb = uint64_t{b} * b;
  if (x.dims[3] % bb != 0) {
    return node_fail("input channels %u are not a multiple of block_size^2", x.dims[3]);
  }
  const uint64_t h = uint64_t{x.dims[1]} * b;
  const uint64_t w = uint64_t{x.dims[2]} * b;
  if (h > kMaxDimSize || w > kMaxDimSize) return node_fail("output size overflows");
  const uint32_t dims[4] = {x.dims[0], static_cast<uint32_t>(h), static_cast<uint32_t>(w),
                            static_cast<uint32_t>(x.dims[3] / bb)};
  return expect_dims("output", out(), dims, 4);
}

}  // namespace pteron::xnnpack::detail
