// The Lowering's driver: the per-node dispatch to the op families (conv_pool.cpp, linear.cpp,
// elementwise.cpp, softmax.cpp, shape_ops.cpp), the rewrites after it (graph_rewrites.cpp) and the
// helpers that build cortex_m nodes.
#include "kernels/cortex_m/aot/lowering/lowering.h"

#include <string>

#include "compiler/passes/passes.h"
#include "kernels/cortex_m/aot/cortex_m_schemas.h"

namespace pteron::cortex_m::aot::detail {

CortexMLoweringReport Lowering::run() {
  register_cortex_m_schemas();
  report_.lowered += move_dequantize_past_views();
  const std::vector<NodeId> order = g_.nodes();
  for (NodeId id : order) {
    if (!g_.has_node(id)) continue;
    if (near_delegated(id)) continue;
    if (g_.is_dynamic_node(id)) continue;  // Cortex-M kernels are planned for static shapes
    const Node n = g_.node(id);            // a copy: adding nodes moves the graph's storage
    const std::string op = n.op.str();
    bool done = false;
    if (op == ops::aten::convolution) {
      done = conv(n);
    } else if (op == ops::aten::linear) {
      done = linear(n, n.arg("input"), n.arg("weight").tensor(), n.arg("bias"));
    } else if (op == ops::aten::addmm || op == ops::aten::mm) {
      done = matmul(n);
    } else if (op == ops::aten::add_Tensor) {
      done = add(n);
    } else if (op == ops::aten::mul_Tensor) {
      done = mul(n);
    } else if (op == ops::aten::max_pool2d_with_indices) {
      done = max_pool(n);
    } else if (op == ops::aten::avg_pool2d || op == ops::aten::_adaptive_avg_pool2d ||
               op == ops::aten::mean_dim) {
      done = avg_pool(n);
    } else if (op == ops::aten::_softmax) {
      done = softmax(n);
    } else if (activation_bounds(n)) {
      done = clamp(n);
    } else if (op == ops::aten::permute || op == ops::aten::permute_copy) {
      done = permute(n);
    } else if (op == ops::aten::constant_pad_nd) {
      done = pad(n);
    } else if (op == ops::aten::upsample_nearest2d_vec ||
               op == ops::aten::upsample_bilinear2d_vec) {
      done = upsample(n, op == ops::aten::upsample_bilinear2d_vec);
    } else if (is_view(n)) {
      done = view(n);
    }
    // Elementwise ops from one int8 value to a quantize (a sigmoid; hardswish's add, clamp and
    // divide; x * sigmoid(x)) that no pattern above took: the table of their 256 results.
    if (!done && table(n)) {
      done = true;
      reason_.clear();
    }
    if (done) {
      ++report_.lowered;
    } else if (!reason_.empty()) {
      report_.kept.push_back(n.describe() + ": " + reason_);
    }
    reason_.clear();
  }
  compiler::remove_dead_code(g_);
  fold_pads_into_convs();
  sink_transposes_through_elementwise();
  report_.transposes_removed = cancel_transposes();
  fold_int8_functions_into_tables();
  fold_requantize_pairs();
  report_.quant_ops = convert_quant_nodes();
  compiler::remove_dead_code(g_);
  plan_scratch();
  g_.metadata()["cortex_m.scratch_bytes"] = std::to_string(cortex_m_scratch_bytes(g_, dsp_paths_));
  g_.verify();
  return report_;
}

// True when `id` or a node within the Q/DQ pattern around it belongs to a delegate, whose
// nodes and values the lowering must leave alone.
bool Lowering::near_delegated(NodeId id) const {
  if (delegated_.empty()) return false;
  if (delegated_.count(id)) return true;
  const Node& n = g_.node(id);
  for (ValueId v : n.inputs()) {
    const ir::Value& value = g_.value(v);
    if (value.is_intermediate() && delegated_.count(value.producer)) return true;
  }
  std::vector<NodeId> frontier = {id};
  for (int depth = 0; depth < 3; ++depth) {
    std::vector<NodeId> next;
    for (NodeId f : frontier)
      for (ValueId v : g_.node(f).outputs) {
        if (v == ir::kNoValue) continue;
        for (NodeId u : g_.value(v).users) {
          if (delegated_.count(u)) return true;
          next.push_back(u);
        }
      }
    frontier = std::move(next);
  }
  return false;
}

// Records why a quantized op stays float (only when it looked quantized).
bool Lowering::keep(std::string reason) {
  reason_ = std::move(reason);
  return false;
}

ValueId Lowering::new_node(const char* name, std::vector<Argument> args, TensorSpec spec,
                           const Node& from, NodeId before) {
  const ir::OpSchema& schema = cortex_m_op(name);
  const NodeId id = g_.add_node(
      schema, std::move(args),
      {NewValue{g_.unique_name(from.debug.node_name.empty() ? std::string("cortex_m_") + name
                                                            : from.debug.node_name + "_q"),
                std::move(spec)}},
      from.debug, before);
  return g_.node(id).outputs[0];
}

// Points the users of the quantize at `result` (the int8 value now computed directly).
void Lowering::finish(const QuantOutput& out, ValueId result) {
  g_.replace_all_uses(g_.node(out.quant).outputs[0], result);
}

TensorSpec Lowering::int8_spec(std::vector<int64_t> sizes) {
  return TensorSpec::contiguous(ScalarType::Char, std::move(sizes));
}

ValueId Lowering::to_nhwc(ValueId x, const Node& from, NodeId before) {
  const std::vector<int64_t> s = g_.value(x).spec.sizes;
  return new_node("transpose", {TensorRef{x}, ints({0, 2, 3, 1})},
                  int8_spec({s[0], s[2], s[3], s[1]}), from, before);
}

ValueId Lowering::to_nchw(ValueId x, const Node& from, NodeId before) {
  const std::vector<int64_t> s = g_.value(x).spec.sizes;
  return new_node("transpose", {TensorRef{x}, ints({0, 3, 1, 2})},
                  int8_spec({s[0], s[3], s[1], s[2]}), from, before);
}

}  // namespace pteron::cortex_m::aot::detail

namespace pteron::cortex_m::aot {

CortexMLoweringReport lower_to_cortex_m(compiler::ir::Graph& graph,
                                        const std::unordered_set<compiler::ir::NodeId>& delegated,
                                        const compiler::Target* target) {
  return detail::Lowering(graph, delegated, dsp_paths(target)).run();
}

bool dsp_paths(const compiler::Target* target) {
  if (target == nullptr) return false;
  bool dsp = false, mve = false;
  for (const std::string& f : target->cpu_features) {
    dsp = dsp || f == "dsp";
    mve = mve || f.rfind("mve", 0) == 0;
  }
  return dsp && !mve;
}

}  // namespace pteron::cortex_m::aot
