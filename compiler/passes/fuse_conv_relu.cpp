#include "compiler/passes/fuse_conv_relu.h"

#include "compiler/ir/op_names.h"
#include "compiler/passes/custom_op_schema.h"
#include "compiler/passes/relu_fusion.h"

namespace pteron::compiler {

namespace {

// pteron::<name>(<aten::convolution's nine arguments>, <extra>) -> Tensor (each caller keeps it
// in a static, so it is registered once).
const ir::OpSchema& convolution_variant(const char* name,
                                        std::vector<std::pair<const char*, const char*>> extra) {
  std::vector<std::pair<const char*, const char*>> args = {
      {"input", "Tensor"},    {"weight", "Tensor"},        {"bias", "Tensor?"},
      {"stride", "int[]"},    {"padding", "int[]"},        {"dilation", "int[]"},
      {"transposed", "bool"}, {"output_padding", "int[]"}, {"groups", "int"}};
  args.insert(args.end(), extra.begin(), extra.end());
  return register_single_output_op(name, args);
}

}  // namespace

const ir::OpSchema& convolution_relu_schema() {
  static const ir::OpSchema& functional = convolution_variant("pteron::convolution_relu", {});
  return functional;
}

const ir::OpSchema& convolution_clamp_schema() {
  static const ir::OpSchema& functional =
      convolution_variant("pteron::convolution_clamp", {{"min", "Scalar"}, {"max", "Scalar"}});
  return functional;
}

const ir::OpSchema& convolution_silu_schema() {
  static const ir::OpSchema& functional = convolution_variant("pteron::convolution_silu", {});
  return functional;
}

const ir::OpSchema& convolution_hardswish_schema() {
  static const ir::OpSchema& functional = convolution_variant("pteron::convolution_hardswish", {});
  return functional;
}

const ir::OpSchema& convolution_scaled_schema() {
  static const ir::OpSchema& functional =
      convolution_variant("pteron::convolution_scaled", {{"scale", "Tensor"}});
  return functional;
}

const ir::OpSchema& convolution_add_relu_schema() {
  static const ir::OpSchema& functional =
      convolution_variant("pteron::convolution_add_relu", {{"other", "Tensor"}});
  return functional;
}

namespace {

// The convolutions the optimized kernel's SGEMM path takes and, where `grouped`, the grouped
// ones it takes too: depthwise (its SIMD rows, groups == in channels == out channels) and groups
// of several input channels (an SGEMM per group); others would run the portable convolution and
// a separate clamp pass inside the fused kernel: no gain. 2-D ones and 1-D ones (a 3-D input:
// the kernel runs them as 2-D ones of height 1).
bool fusable_convolution(const ir::Graph& graph, const ir::Node& conv, bool grouped) {
  if (!conv.is(ops::aten::convolution) || conv.args.size() != 9) return false;
  const ir::Argument& transposed = conv.arg("transposed");
  const ir::Argument& groups = conv.arg("groups");
  if (!transposed.is<bool>() || transposed.get<bool>() || !groups.is<int64_t>()) return false;
  const ir::Value& input = graph.value(conv.arg("input").tensor());
  const size_t rank = input.spec.rank();
  if ((rank != 4 && rank != 3) || input.spec.dtype != ScalarType::Float) return false;
  const int64_t g = groups.get<int64_t>();
  if (g == 1) return true;
  const ir::Value& out = graph.value(conv.outputs[0]);
  if (!grouped || out.spec.rank() != rank || input.spec.is_dynamic() || out.spec.is_dynamic())
    return false;
  const int64_t cin = input.spec.sizes[1], cout = out.spec.sizes[1];
  const bool depthwise = cin == g && cout == g;
  return depthwise || (cin % g == 0 && cout % g == 0 && cin / g > 1);
}

// relu(add(conv(...), other)) (either operand order, alpha 1, `other` of the result's shape) ->
// convolution_add_relu(..., other) in place of the add, which runs after both the convolution
// and `other`'s producer (resnet's downsample branch comes after the block's second conv).
bool fuse_residual(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                   const ir::Node& relu, const ir::Value& sum) {
  const ir::Node& add = graph.node(sum.producer);
  if (!add.is(ops::aten::add_Tensor) || add.args.size() < 2 || !add.arg("self").is_tensor() ||
      !add.arg("other").is_tensor() ||
      (add.args.size() > 2 && !add.arg("alpha").is_none() && add.arg("alpha").to_double() != 1.0)) {
    return false;
  }
  for (int side = 0; side < 2; ++side) {
    const ir::Value& c = graph.value(add.args[side].tensor());
    const ir::Value& other = graph.value(add.args[1 - side].tensor());
    if (c.id == other.id || !single_use_intermediate(graph, c) || delegated.count(c.producer) ||
        !fusable_convolution(graph, graph.node(c.producer), /*grouped=*/false) ||
        c.spec.dtype != ScalarType::Float || other.spec.dtype != ScalarType::Float ||
        other.spec.sizes != sum.spec.sizes || c.spec.sizes != sum.spec.sizes) {
      continue;
    }
    const ir::NodeId conv_id = c.producer;
    std::vector<ir::Argument> args = graph.node(conv_id).args;
    args.push_back(add.args[1 - side]);
    absorb_relu(graph, relu.id, add.id, convolution_add_relu_schema(), std::move(args));
    graph.remove_node(conv_id);
    return true;
  }
  return false;
}

// silu_mul(conv(...), None) (fuse_silu_mul's SiLU) -> convolution_silu(...) and
// hardswish(conv(...)) -> convolution_hardswish(...), in the activation's place.
bool fuse_function(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                   ir::NodeId id) {
  if (!graph.has_node(id) || delegated.count(id)) return false;
  const ir::Node& act = graph.node(id);
  const ir::OpSchema* fused = nullptr;
  if (act.op.str() == "pteron::silu_mul.default" && act.args.size() == 2 && act.args[1].is_none()) {
    fused = &convolution_silu_schema();
  } else if (act.is(ops::aten::hardswish) && act.args.size() == 1) {
    fused = &convolution_hardswish_schema();
  }
  if (fused == nullptr || !act.args[0].is_tensor()) return false;
  const ir::Value& x = graph.value(act.args[0].tensor());
  if (x.spec.dtype != ScalarType::Float || !single_use_intermediate(graph, x) ||
      delegated.count(x.producer) ||
      !fusable_convolution(graph, graph.node(x.producer), /*grouped=*/true)) {
    return false;
  }
  const ir::NodeId conv = x.producer;
  absorb_relu(graph, id, conv, *fused, graph.node(conv).args);
  return true;
}

// conv(mul(x, s)) for an ungrouped convolution, s [1 or N, C, 1, 1] gating x [N, C, H, W] (a
// squeeze-excite block's scale before the projection) -> convolution_scaled(x, ..., s) in the
// convolution's place, the product removed.
bool fuse_input_scale(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated,
                      ir::NodeId id) {
  if (!graph.has_node(id) || delegated.count(id)) return false;
  const ir::Node& conv = graph.node(id);
  if (!fusable_convolution(graph, conv, /*grouped=*/false)) return false;
  const ir::Value& gated = graph.value(conv.arg("input").tensor());
  if (!single_use_intermediate(graph, gated) || delegated.count(gated.producer)) return false;
  const ir::Node& mul = graph.node(gated.producer);
  if (!is_tensor_mul(mul) || !gated.spec.is_contiguous() || gated.spec.is_dynamic()) return false;
  for (int side = 0; side < 2; ++side) {
    const ir::Value& x = graph.value(mul.args[side].tensor());
    const ir::Value& s = graph.value(mul.args[1 - side].tensor());
    const std::vector<int64_t>& n = gated.spec.sizes;
    if (x.spec.sizes != n || x.spec.dtype != ScalarType::Float || !x.spec.is_contiguous() ||
        s.spec.dtype != ScalarType::Float || s.spec.is_dynamic() || !s.spec.is_contiguous() ||
        s.spec.rank() != 4 || (s.spec.sizes[0] != 1 && s.spec.sizes[0] != n[0]) ||
        s.spec.sizes[1] != n[1] || s.spec.sizes[2] != 1 || s.spec.sizes[3] != 1) {
      continue;
    }
    std::vector<ir::Argument> args = conv.args;
    args[0] = ir::Argument(ir::TensorRef{x.id});
    args.push_back(ir::Argument(ir::TensorRef{s.id}));
    const ir::NodeId product = mul.id;
    graph.set_op(id, convolution_scaled_schema(), std::move(args));
    graph.remove_node(product);
    return true;
  }
  return false;
}

}  // namespace

int fuse_conv_relu(ir::Graph& graph, const std::unordered_set<ir::NodeId>& delegated) {
  int fused = 0;
  const std::vector<ir::NodeId> order = graph.nodes();
  for (ir::NodeId id : order) {
    if (fuse_function(graph, delegated, id) || fuse_input_scale(graph, delegated, id)) {
      ++fused;
      continue;
    }
    const ClampFusion clamp = clamp_fusion_input(graph, delegated, id);
    if (clamp.input == nullptr || clamp.input->spec.dtype != ScalarType::Float) continue;
    const ir::Node& producer = graph.node(clamp.input->producer);
    const bool relu = graph.node(id).is(ops::aten::relu);
    if (relu && producer.is(ops::aten::add_Tensor)) {
      if (fuse_residual(graph, delegated, graph.node(id), *clamp.input)) ++fused;
      continue;
    }
    if (!fusable_convolution(graph, producer, /*grouped=*/true)) continue;
    if (relu) {
      absorb_relu(graph, id, producer.id, convolution_relu_schema(), producer.args);
    } else {
      std::vector<ir::Argument> args = producer.args;
      args.push_back(ir::Scalar{clamp.lo});
      args.push_back(ir::Scalar{clamp.hi});
      absorb_relu(graph, id, producer.id, convolution_clamp_schema(), std::move(args));
    }
    ++fused;
  }
  return fused;
}

}  // namespace pteron::compiler
