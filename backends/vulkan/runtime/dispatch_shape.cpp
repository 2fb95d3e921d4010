// Data movement: permute and slice (binary.comp's strided copy), cat (one copy_block per
// input), embedding lookups, upsampling and padding.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

// ATen's area_pixel_compute_scale in fp32 (UpSample.h): align_corners maps the corner pixels
// onto each other, (in - 1) / (out - 1); otherwise a scale factor the caller gave (> 0) sets
// 1 / scale (computed in double, then rounded, as ATen does), else input / output.
float upsample_ratio(uint32_t in, uint32_t out, double given, bool align_corners) {
  if (align_corners) {
    return out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1) : 0.0f;
  }
  if (given > 0) return static_cast<float>(1.0 / given);
  return static_cast<float>(in) / static_cast<float>(out);
}

}  // namespace

Error plan_permute(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  BinaryParams p{};  // the binary shader's strided copy (op 3)
  p.numel = static_cast<uint32_t>(numel);
  p.op = 3;
  p.rank = out.dims()->size();
  uint32_t in_strides[kMaxDims];
  uint32_t s = 1;
  for (uint32_t i = p.rank; i-- > 0;) {
    in_strides[i] = s;
    s *= x.dims()->Get(i);
  }
  for (uint32_t i = 0; i < p.rank; ++i) {
    p.dims[i] = out.dims()->Get(i);
    p.stride0[i] = in_strides[node.perm()->Get(i)];
  }
  coalesce(p);
  put(dp, p);
  dp.groups_y = 1;
  return plan_per_element(plan, dp, shader, "binary");
}

Error plan_slice(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  BinaryParams p{};  // the binary shader's strided copy from element base0
  p.numel = static_cast<uint32_t>(numel);
  p.op = 3;
  p.rank = out.dims()->size();
  uint32_t s = 1;
  for (uint32_t i = p.rank; i-- > 0;) {
    p.dims[i] = out.dims()->Get(i);
    p.stride0[i] = i == node.axis() ? s * node.step() : s;
    if (i == node.axis()) p.base0 = s * node.start();
    s *= x.dims()->Get(i);
  }
  coalesce(p);
  put(dp, p);
  return plan_per_element(plan, dp, shader, "binary");
}

void plan_cat(Delegate& d, const fb::Node& node, bool f16) {
  const VkPhysicalDeviceLimits& lim = d.ctx->properties.limits;
  const fb::Tensor& out = tensor(d, node.outputs()->Get(0));
  uint64_t inner = 1;
  for (uint32_t i = node.axis() + 1; i < out.dims()->size(); ++i) inner *= out.dims()->Get(i);
  const uint64_t block_out = inner * out.dims()->Get(node.axis());
  uint64_t offset = 0;
  for (uint32_t in_id : *node.inputs()) {
    const fb::Tensor& x = tensor(d, in_id);
    const uint64_t numel = tensor_numel(x);
    const uint64_t block_in = inner * x.dims()->Get(node.axis());
    Dispatch dp;
    CopyBlockParams p{static_cast<uint32_t>(numel), static_cast<uint32_t>(block_in),
                      static_cast<uint32_t>(block_out), static_cast<uint32_t>(offset)};
    put(dp, p);
    dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
    dp.shader = "copy_block";
    add_dispatch(d, dp, node, "vulkan: cat", f16, Span<const uint32_t>(&in_id, 1));
    offset += block_in;
  }
}

Error plan_embedding(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  EmbeddingParams p{static_cast<uint32_t>(numel), x.dims()->Get(0), x.dims()->Get(1)};
  put(dp, p);
  return plan_per_element(plan, dp, shader, "embedding");
}

Error plan_upsample(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  UpsampleParams p{};
  p.numel = static_cast<uint32_t>(numel);
  p.H = x.dims()->Get(2);
  p.W = x.dims()->Get(3);
  p.OH = out.dims()->Get(2);
  p.OW = out.dims()->Get(3);
  const bool align = node.resize() != fb::ResizeMode::Nearest && node.align_corners();
  // A plain local: lambdas capture no structured binding before C++20.
  const auto* scales = node.scales();
  const auto given = [scales](uint32_t axis) {
    return scales != nullptr ? scales->Get(axis) : 0.0;
  };
  p.scale_h = upsample_ratio(p.H, p.OH, given(0), align);
  p.scale_w = upsample_ratio(p.W, p.OW, given(1), align);
  p.mode = static_cast<uint32_t>(node.resize());
  p.align_corners = align;
  put(dp, p);
  return plan_per_element(plan, dp, shader, "upsample");
}

Error plan_pad(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  PadParams p{};
  const uint32_t r = out.dims()->size();
  p.numel = static_cast<uint32_t>(numel);
  p.W = x.dims()->Get(r - 1);
  p.OW = out.dims()->Get(r - 1);
  p.H = r >= 2 ? x.dims()->Get(r - 2) : 1;
  p.OH = r >= 2 ? out.dims()->Get(r - 2) : 1;
  p.left = node.pads()->Get(0);
  p.top = node.pads()->Get(2);
  p.mode = static_cast<uint32_t>(node.pad_mode());
  p.value = node.pad_value();
  put(dp, p);
  return plan_per_element(plan, dp, shader, "pad");
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
