// Convolutions (direct, register-tiled, 1x1, depthwise and depthwise 3x3 shaders) and pools.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

// A convolution's or pool's stride, padding and dilation (verified 2-element lists) into its
// shader parameters.
template <typename P>
void read_window(const fb::Node& node, P& p) {
  p.stride_h = node.stride()->Get(0);
  p.stride_w = node.stride()->Get(1);
  p.pad_h = node.padding()->Get(0);
  p.pad_w = node.padding()->Get(1);
  p.dil_h = node.dilation()->Get(0);
  p.dil_w = node.dilation()->Get(1);
}

}  // namespace

Error plan_conv2d(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  Conv2dParams p;
  const fb::Tensor& w = tensor(d, node.inputs()->Get(1));
  p.numel = static_cast<uint32_t>(numel);
  p.C = x.dims()->Get(1);
  p.H = x.dims()->Get(2);
  p.W = x.dims()->Get(3);
  p.OC = out.dims()->Get(1);
  p.OH = out.dims()->Get(2);
  p.OW = out.dims()->Get(3);
  p.KH = w.dims()->Get(2);
  p.KW = w.dims()->Get(3);
  read_window(node, p);
  p.groups = node.groups();
  p.has_bias = node.inputs()->size() == 3;
  p.lo = node.output_min();
  p.hi = node.output_max();
  put(dp, p);
  const uint32_t batch = x.dims()->Get(0);
  const uint32_t plane = p.OH * p.OW;
  const bool pointwise = p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                         p.pad_h == 0 && p.pad_w == 0 && p.groups == 1;
  const bool depthwise = p.groups == p.C && p.groups > 1;
  if (g_conv_shader.load() == ConvShader::Direct) {
    dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
    *shader = "conv2d";
  } else if (depthwise && p.KH == 3 && p.KW == 3 && p.dil_h == 1 && p.dil_w == 1 &&
             p.stride_h == p.stride_w && (p.stride_h == 1 || p.stride_h == 2)) {
    const uint32_t tiles = p.OH * ((p.OW + kDepthwisePixels - 1) / kDepthwisePixels);
    dp.groups_x = (tiles + kConvLocalSize - 1) / kConvLocalSize;
    dp.groups_y = p.OC;
    dp.groups_z = batch;
    *shader = p.stride_h == 1 ? "conv2d_dw3x3s1" : "conv2d_dw3x3s2";
  } else if (depthwise) {
    dp.groups_x =
        (plane + kConvLocalSize * kDepthwisePixels - 1) / (kConvLocalSize * kDepthwisePixels);
    dp.groups_y = p.OC;
    dp.groups_z = batch;
    *shader = "conv2d_dw";
  } else {
    const uint32_t cout = p.OC / p.groups;
    const uint32_t tile = kConvLocalSize * kConvPixels;
    dp.groups_x = (plane + tile - 1) / tile;
    dp.groups_y = p.groups * ((cout + kConvChannels - 1) / kConvChannels);
    dp.groups_z = batch;
    *shader = pointwise ? "conv2d_pw" : "conv2d_tiled";
  }
  if (!fits_device(dp, lim)) {
    return fail(Error::NotSupported,
                "Vulkan delegate: node %u (conv2d) [%u x %u x %u] exceeds the device's "
                "dispatch size",
                n, batch, p.OC, plane);
  }
  return Error::Ok;
}

Error plan_pool2d(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  Pool2dParams p{};
  p.numel = static_cast<uint32_t>(numel);
  p.H = x.dims()->Get(2);
  p.W = x.dims()->Get(3);
  p.OH = out.dims()->Get(2);
  p.OW = out.dims()->Get(3);
  p.mode = static_cast<uint32_t>(node.pool());
  if (node.pool() != fb::PoolType::AdaptiveAverage) {
    p.KH = node.kernel()->Get(0);
    p.KW = node.kernel()->Get(1);
    read_window(node, p);
  }
  p.count_include_pad = node.count_include_pad();
  p.divisor = node.divisor();
  put(dp, p);
  return plan_per_element(plan, dp, shader, "pool2d");
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
