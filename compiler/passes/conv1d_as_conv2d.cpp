// conv1d_as_conv2d: 1-D convolutions ([N, C, W], audio front ends, TCNs, Conformer convolution
// modules) become 2-D ones of height 1, as ExecuTorch's XNNPACK flow and TFLite do: XNNPACK, the
// int8 kernels, Vulkan and TOSA take 2-D convolutions only, so a 1-D one ran on the portable
// kernel (float, behind runtime dequantizes, in an int8 program) wherever the model went.
//
// Each becomes unsqueeze(x, 2) -> convolution (weight [O, I, 1, k], the stride, padding,
// dilation and output padding given a height of 1 / 0) -> squeeze(2). The squeezes then sink
// below the elementwise ops reading them (relu, clamp, GELU, ..., and adds or multiplies of two
// such squeezes), and an unsqueeze(2) of a squeeze(2) cancels (export writes max_pool1d as
// unsqueeze -> max_pool2d -> squeeze), so a chain of 1-D layers runs 4-D from its first
// convolution to the op that ends it (a mean over time, a linear) and no view is left between
// the layers for a delegate's region to stop at; a mean over time reads the 4-D value as a
// global average pool. PT2E's per-tensor quantize / dequantize pairs count as elementwise ops,
// and an unsqueeze of one moves above it, so a dequantize feeds each convolution directly. Views
// are aliases: a backend that takes the 1-D convolution as it was (the portable and optimized
// kernels) loses nothing.
//
// A weight must be a constant, or a per-channel dequantize of one read only by this convolution
// (PT2E's form): its bytes stay, its spec takes the height of 1. Dynamic shapes are left alone.
#include <string>

#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/passes.h"
#include "compiler/passes/pattern_match.h"

namespace pteron::compiler {
namespace {

using ir::Argument;
using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::TensorSpec;
using ir::ValueId;

const ir::OpSchema& schema(ir::OpName op) { return *ir::OpSchemaRegistry::global().find(op); }

// `s` [a, b, c] as [a, b, 1, c].
TensorSpec with_unit_height(const TensorSpec& s) {
  return TensorSpec::contiguous(s.dtype, {s.sizes[0], s.sizes[1], 1, s.sizes[2]});
}

bool plain_3d(const TensorSpec& s) { return s.rank() == 3 && !s.is_dynamic() && s.is_contiguous(); }

// A 1-D parameter list (one entry, or torch's single value) with `height` in front.
Argument with_height(const Argument& a, int64_t height) {
  const auto& v = a.get<std::vector<int64_t>>();
  return Argument(std::vector<int64_t>{height, v.empty() ? height : v.back()});
}

// The weight given a height of 1 in place: a constant read by this node alone, or a per-channel
// dequantize (axis 0) of one, both read by this node alone. False (nothing changed) otherwise.
bool weight_to_2d(Graph& g, ValueId w) {
  const ir::Value& value = g.value(w);
  if (!plain_3d(value.spec) || value.users.size() != 1 || g.is_output(w)) return false;
  if (value.is_constant()) {
    g.set_spec(w, with_unit_height(value.spec));
    return true;
  }
  if (!value.is_intermediate()) return false;
  const Node& dq = g.node(value.producer);
  if (!dq.is(ops::quantized_decomposed::dequantize_per_channel) || !dq.args[0].is_tensor())
    return false;
  const ValueId q = dq.args[0].tensor();
  const ir::Value& qv = g.value(q);
  const Argument& axis = dq.arg("axis");
  if (!qv.is_constant() || qv.users.size() != 1 || !plain_3d(qv.spec) || !axis.is<int64_t>() ||
      axis.get<int64_t>() != 0)
    return false;
  g.set_spec(q, with_unit_height(qv.spec));
  g.set_spec(w, with_unit_height(value.spec));
  return true;
}

// unsqueeze(v, 2), a new node placed before node `before`: v's [a, b, c] as [a, b, 1, c].
ValueId unsqueeze_before(Graph& g, ValueId v, ir::DebugHandle debug, NodeId before) {
  return g
      .node(g.add_node(
          schema(ops::aten::unsqueeze), {ir::TensorRef{v}, int64_t{2}},
          {ir::NewValue{g.unique_name(g.value(v).name + "_2d"), with_unit_height(g.value(v).spec)}},
          debug, before))
      .outputs[0];
}

// Node `id` computed in 4-D: `op` of `args` (reading 4-D values) makes the height-1 result,
// which `id` becomes the squeeze of, so its 3-D value keeps its readers.
void compute_in_2d(Graph& g, NodeId id, const ir::OpSchema& op, std::vector<Argument> args) {
  const ValueId y = g.node(id).outputs[0];
  const ir::DebugHandle debug = g.node(id).debug;
  const ValueId y4 = g.node(g.add_node(op, std::move(args),
                                       {ir::NewValue{g.unique_name(g.value(y).name + "_2d"),
                                                     with_unit_height(g.value(y).spec)}},
                                       debug, id))
                         .outputs[0];
  g.set_op(id, schema(ops::aten::squeeze_dims),
           {Argument(ir::TensorRef{y4}), Argument(std::vector<int64_t>{2})});
}

// Rewrites convolution node `id` if it is 1-D: the new 2-D one goes before it and `id` becomes
// the squeeze of its result, so the 1-D result keeps its value and readers.
bool rewrite_convolution(Graph& g, NodeId id) {
  const Node& conv = g.node(id);
  if (!conv.is(ops::aten::convolution) || conv.args.size() != 9 || g.is_dynamic_node(id))
    return false;
  const ValueId x = conv.arg("input").tensor(), y = conv.outputs[0];
  if (!plain_3d(g.value(x).spec) || !plain_3d(g.value(y).spec) || !conv.arg("weight").is_tensor())
    return false;
  for (const char* list : {"stride", "padding", "dilation", "output_padding"})
    if (!conv.arg(list).is<std::vector<int64_t>>()) return false;
  if (!weight_to_2d(g, conv.arg("weight").tensor())) return false;
  const Node& c = g.node(id);  // references into the graph may move as nodes are added
  const ir::DebugHandle debug = c.debug;
  std::vector<Argument> args = c.args;
  const ValueId x4 = unsqueeze_before(g, x, debug, id);
  args[0] = Argument(ir::TensorRef{x4});
  args[3] = with_height(args[3], 1);
  args[4] = with_height(args[4], 0);
  args[5] = with_height(args[5], 1);
  args[7] = with_height(args[7], 0);
  compute_in_2d(g, id, schema(ops::aten::convolution), std::move(args));
  return true;
}

// The 4-D value `v` is squeeze(2) of, or kNoValue.
ValueId unsqueezed(const Graph& g, ValueId v) {
  const ir::Value& value = g.value(v);
  if (!value.is_intermediate()) return ir::kNoValue;
  const Node& n = g.node(value.producer);
  if (!n.is(ops::aten::squeeze_dims) || !n.args[0].is_tensor()) return ir::kNoValue;
  const auto& dims = n.arg("dim").get<std::vector<int64_t>>();
  const ValueId src = n.args[0].tensor();
  const TensorSpec& s = g.value(src).spec;
  if (dims.size() != 1 || (dims[0] != 2 && dims[0] != -2) || s.rank() != 4 || s.sizes[2] != 1 ||
      s.is_dynamic())
    return ir::kNoValue;
  return src;
}

bool is_sinkable_unary(const Node& n) {
  return ir::any_overload_of(
      n, {ops::aten::relu, ops::aten::clamp, ops::aten::hardtanh, ops::aten::gelu, ops::aten::silu,
          ops::aten::sigmoid, ops::aten::tanh, ops::aten::hardswish, ops::aten::hardsigmoid,
          ops::aten::leaky_relu, ops::aten::elu, ops::aten::abs, ops::aten::neg,
          // PT2E's per-tensor Q/DQ pairs between layers (scale and zero point are scalars).
          ops::quantized_decomposed::quantize_per_tensor,
          ops::quantized_decomposed::dequantize_per_tensor});
}

// constant_pad_nd of the last dim only (F.pad(x, (left, right)): a causal convolution's): the
// same pad of the 4-D value.
bool pads_width_only(const Node& n) {
  return n.is(ops::aten::constant_pad_nd) && n.arg("pad").is<std::vector<int64_t>>() &&
         n.arg("pad").get<std::vector<int64_t>>().size() == 2;
}

bool is_sinkable_binary(const Node& n) {
  return n.is(ops::aten::add_Tensor) || n.is(ops::aten::sub_Tensor) ||
         n.is(ops::aten::mul_Tensor) || n.is(ops::aten::div_Tensor);
}

// An elementwise node reading squeezes of 4-D values: computed on those values, its own result
// then the squeeze. Unary ops (the rest of their arguments scalars; a pad of the last dim too)
// and binary ones whose two tensors are both such squeezes of one shape.
bool sink_squeeze(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.outputs.size() != 1 || n.args.empty() || !n.args[0].is_tensor() || g.is_dynamic_node(id))
    return false;
  std::vector<Argument> args = n.args;
  if (is_sinkable_unary(n) || pads_width_only(n)) {
    const ValueId a = unsqueezed(g, n.args[0].tensor());
    if (a == ir::kNoValue) return false;
    for (size_t i = 1; i < n.args.size(); ++i)
      if (n.args[i].is_tensor()) return false;
    args[0] = Argument(ir::TensorRef{a});
  } else if (is_sinkable_binary(n)) {
    if (n.args.size() < 2 || !n.args[1].is_tensor()) return false;
    const ValueId a = unsqueezed(g, n.args[0].tensor()), b = unsqueezed(g, n.args[1].tensor());
    if (a == ir::kNoValue || b == ir::kNoValue || g.value(a).spec.sizes != g.value(b).spec.sizes)
      return false;
    args[0] = Argument(ir::TensorRef{a});
    args[1] = Argument(ir::TensorRef{b});
  } else {
    return false;
  }
  const ValueId y = n.outputs[0];
  if (!plain_3d(g.value(y).spec)) return false;
  compute_in_2d(g, id, *n.schema, std::move(args));
  return true;
}

// mean(squeeze(v, 2), [2 or -1]) without keepdim is mean(v, [2, 3]): the same [N, C], as the
// global average pool a 2-D backend takes (a classifier's mean over time).
bool mean_over_time(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (!n.is(ops::aten::mean_dim) || !n.args[0].is_tensor() || g.is_dynamic_node(id)) return false;
  const ValueId v = unsqueezed(g, n.args[0].tensor());
  const Argument& dim = n.arg("dim");
  const Argument& keepdim = n.arg("keepdim");
  if (v == ir::kNoValue || !dim.is<std::vector<int64_t>>() || !keepdim.is<bool>() ||
      keepdim.get<bool>())
    return false;
  const auto& dims = dim.get<std::vector<int64_t>>();
  if (dims.size() != 1 || (dims[0] != 2 && dims[0] != -1)) return false;
  std::vector<Argument> args = n.args;
  args[0] = Argument(ir::TensorRef{v});
  args[1] = Argument(std::vector<int64_t>{2, 3});
  g.set_args(id, std::move(args));
  return true;
}

// unsqueeze(dq(q), 2) -> dq(unsqueeze(q, 2)), and the same for a quantize: a PT2E convolution's
// input then comes from its dequantize directly, the pattern the int8 backends match.
bool hoist_unsqueeze(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (!n.is(ops::aten::unsqueeze) || !n.args[0].is_tensor() || !n.arg("dim").is<int64_t>() ||
      g.is_dynamic_node(id))
    return false;
  const int64_t dim = n.arg("dim").get<int64_t>();
  const ValueId v = n.args[0].tensor(), out = n.outputs[0];
  const ir::Value& value = g.value(v);
  if ((dim != 2 && dim != -2) || !value.is_intermediate() || value.users.size() != 1 ||
      g.is_output(v) || !plain_3d(value.spec))
    return false;
  const Node& qdq = g.node(value.producer);
  if (!qdq.is(ops::quantized_decomposed::quantize_per_tensor) &&
      !qdq.is(ops::quantized_decomposed::dequantize_per_tensor))
    return false;
  if (!qdq.args[0].is_tensor() || !plain_3d(g.value(qdq.args[0].tensor()).spec)) return false;
  for (size_t i = 1; i < qdq.args.size(); ++i)
    if (qdq.args[i].is_tensor()) return false;
  const NodeId producer = qdq.id;
  const ValueId u = qdq.args[0].tensor();
  const ValueId u4 = unsqueeze_before(g, u, n.debug, producer);
  g.set_arg(producer, 0, Argument(ir::TensorRef{u4}));
  g.replace_all_uses(out, v);
  g.remove_node(id);
  g.set_spec(v, with_unit_height(g.value(v).spec));
  return true;
}

// unsqueeze(squeeze(v, 2), 2) is v: its readers read v.
bool cancel_unsqueeze(Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (!n.is(ops::aten::unsqueeze) || !n.args[0].is_tensor() || !n.arg("dim").is<int64_t>())
    return false;
  const int64_t dim = n.arg("dim").get<int64_t>();
  if (dim != 2 && dim != -2) return false;
  const ValueId v = unsqueezed(g, n.args[0].tensor()), out = n.outputs[0];
  if (v == ir::kNoValue || g.is_output(out) || g.value(v).spec != g.value(out).spec) return false;
  g.replace_all_uses(out, v);
  g.remove_node(id);
  return true;
}

}  // namespace

int conv1d_as_conv2d(ir::Graph& graph) {
  int changed = 0;
  for (NodeId id : std::vector<NodeId>(graph.nodes()))
    if (graph.has_node(id) && rewrite_convolution(graph, id)) ++changed;
  if (changed == 0) return 0;
  // Sinking a squeeze makes a new one below, which the next node in order may sink again.
  for (bool again = true; again;) {
    again = false;
    for (NodeId id : std::vector<NodeId>(graph.nodes())) {
      if (!graph.has_node(id)) continue;
      if (cancel_unsqueeze(graph, id) || hoist_unsqueeze(graph, id) || sink_squeeze(graph, id) ||
          mean_over_time(graph, id)) {
        ++changed;
        again = true;
      }
    }
  }
  remove_dead_code(graph);
  return changed;
}

}  // namespace pteron::compiler
