// Payload nodes to dispatches: each op to its family's planner (dispatch_<family>.cpp), the
// trace event names, and the bindings every dispatch shares.
#include <cstring>

#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {
namespace {

// Shader parameters and grid of one single-dispatch node (the payload is verified).
Error plan_dispatch(const Delegate& d, uint32_t n, const fb::Node& node, Dispatch& dp,
                    const char** shader) {
  const fb::Tensor& out = tensor(d, node.outputs()->Get(0));
  const fb::Tensor& x = tensor(d, node.inputs()->Get(0));
  const NodeToPlan plan{d, n, node, out, x, tensor_numel(out), d.ctx->properties.limits};
  switch (node.op()) {
    case fb::OpType::Linear:
    case fb::OpType::MatMul:
    case fb::OpType::BatchMatMul:
      return plan_linear(plan, dp, shader);
    case fb::OpType::Add:
    case fb::OpType::Sub:
    case fb::OpType::Mul:
    case fb::OpType::Div:
      return plan_binary(plan, dp, shader);
    case fb::OpType::Clamp:
      return plan_clamp(plan, dp, shader);
    case fb::OpType::Softmax:
      return plan_softmax(plan, dp, shader);
    case fb::OpType::Conv2d:
      return plan_conv2d(plan, dp, shader);
    case fb::OpType::LayerNorm:
      return plan_layer_norm(plan, dp, shader);
    case fb::OpType::Permute:
      return plan_permute(plan, dp, shader);
    case fb::OpType::Mean:
      return plan_mean(plan, dp, shader);
    case fb::OpType::Slice:
      return plan_slice(plan, dp, shader);
    case fb::OpType::Unary:
      return plan_unary(plan, dp, shader);
    case fb::OpType::Convert:
      return plan_convert(plan, dp, shader);
    case fb::OpType::Embedding:
      return plan_embedding(plan, dp, shader);
    case fb::OpType::Pool2d:
      return plan_pool2d(plan, dp, shader);
    case fb::OpType::Upsample:
      return plan_upsample(plan, dp, shader);
    case fb::OpType::Pad:
      return plan_pad(plan, dp, shader);
    default:
      return fail(Error::InvalidProgram, "Vulkan delegate: node %u has an unknown op", n);
  }
}

// Trace event name of a dispatch (a static string, as the tracer keeps the pointer).
const char* event_name(const fb::Node& node, const char* shader) {
  switch (node.op()) {
    case fb::OpType::Linear:
    case fb::OpType::MatMul:
      return strcmp(shader, "linear") == 0 ? "vulkan: linear (shared tiles)" : "vulkan: linear";
    case fb::OpType::BatchMatMul:
      return "vulkan: bmm";
    case fb::OpType::Add:
      return "vulkan: add";
    case fb::OpType::Sub:
      return "vulkan: sub";
    case fb::OpType::Mul:
      return "vulkan: mul";
    case fb::OpType::Div:
      return "vulkan: div";
    case fb::OpType::Clamp:
      return "vulkan: clamp";
    case fb::OpType::Softmax:
      return "vulkan: softmax";
    case fb::OpType::Conv2d:
      return strcmp(shader, "conv2d_pw") == 0       ? "vulkan: conv2d 1x1"
             : strncmp(shader, "conv2d_dw", 9) == 0 ? "vulkan: conv2d depthwise"
             : strcmp(shader, "conv2d_tiled") == 0  ? "vulkan: conv2d"
                                                    : "vulkan: conv2d (direct)";
    case fb::OpType::LayerNorm:
      return "vulkan: layer_norm";
    case fb::OpType::Mean:
      return "vulkan: mean";
    case fb::OpType::Permute:
      return "vulkan: permute";
    case fb::OpType::Unary:
      return "vulkan: unary";
    case fb::OpType::Pool2d:
      return "vulkan: pool2d";
    case fb::OpType::Cat:
      return "vulkan: cat";
    case fb::OpType::Slice:
      return "vulkan: slice";
    case fb::OpType::Embedding:
      return "vulkan: embedding";
    case fb::OpType::Convert:
      return "vulkan: convert";
    case fb::OpType::Upsample:
      return node.resize() == fb::ResizeMode::Nearest    ? "vulkan: upsample nearest"
             : node.resize() == fb::ResizeMode::Bilinear ? "vulkan: upsample bilinear"
                                                         : "vulkan: upsample bilinear antialias";
    case fb::OpType::Pad:
      return "vulkan: pad";
    default:
      return "vulkan: dispatch";
  }
}

}  // namespace

void add_dispatch(Delegate& d, Dispatch dp, const fb::Node& node, const char* event, bool f16,
                  Span<const uint32_t> inputs) {
  dp.event = event;
  dp.f16 = f16;
  dp.debug_id = node.debug_id();
  dp.bind[0] = node.outputs()->Get(0);
  for (uint32_t b = 1; b < kNumBindings && b - 1 < inputs.size(); ++b) dp.bind[b] = inputs[b - 1];
  d.dispatches.push_back(dp);
}

Error plan_node(Delegate& d, uint32_t n, const fb::Node& node) {
  const fb::Tensor& out = tensor(d, node.outputs()->Get(0));
  const bool f16 = out.dtype() == fb::DataType::Float16;
  if (node.op() == fb::OpType::Reshape) return Error::Ok;
  if (node.op() == fb::OpType::Cat) {
    plan_cat(d, node, f16);
    return Error::Ok;
  }
  Dispatch dp;
  PTERON_TRY(plan_dispatch(d, n, node, dp, &dp.shader));
  add_dispatch(d, dp, node, event_name(node, dp.shader), f16 && node.op() != fb::OpType::Convert,
               Span<const uint32_t>(node.inputs()->data(), node.inputs()->size()));
  return Error::Ok;
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
