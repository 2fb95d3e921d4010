// Scratch buffers for the kernels' vector paths (MVE or DSP), planned as graph values.
#include "kernels/cortex_m/scratch.h"

#include <algorithm>

#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {
namespace {

// The scratch the vector path (MVE, or DSP with `dsp`) of a cortex_m node asks for: which
// argument takes it and how many bytes (0: none, the node is no convolution or its vector path
// needs none).
struct NodeScratch {
  size_t arg = 0;
  size_t bytes = 0;
};
NodeScratch node_scratch(const compiler::ir::Graph& graph, const compiler::ir::Node& n, bool dsp) {
  const std::string op = n.op.str();
  const bool conv = op == "cortex_m::quantized_conv2d_nhwc.default";
  if (!conv && op != "cortex_m::quantized_depthwise_conv2d_nhwc.default") return {};
  const auto& in = graph.value(n.args[0].tensor()).spec.sizes;
  const auto& w = graph.value(n.args[1].tensor()).spec.sizes;
  if (!conv) {
    // Depth multiplier 1 only: the MVE path's per-channel data and one row of padding.
    if (w[3] != in[3]) return {};
    if (dsp) return {13, quantized_depthwise_conv2d_scratch_bytes_dsp(w[3], w[1], w[2])};
    const auto& out = graph.value(n.outputs[0]).spec.sizes;
    return {13, quantized_depthwise_conv2d_scratch_bytes(w[3], in[2], out[2],
                                                         pair_arg(n.args[3], 1)[1])};
  }
  if (dsp) return {12, quantized_conv2d_scratch_bytes_dsp(in[3], w[1], w[2], w[0])};
  const auto stride = pair_arg(n.args[3], 1), padding = pair_arg(n.args[4], 0);
  const bool pointwise = w[1] == 1 && w[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
                         padding[0] == 0 && padding[1] == 0;
  return {12, quantized_conv2d_scratch_bytes(in[3], w[1], w[2], w[0], pointwise, stride[1])};
}

}  // namespace

// Gives every convolution whose vector path needs scratch (kernel sums, im2col columns, the
// depthwise per-channel data and padding row) a cortex_m::scratch_buffer of that size (plus
// alignment slack) as its scratch argument: the memory planner then places it in an arena,
// alive for that one kernel, so the firmware allocates nothing at run time and the RAM budget
// counts it. The scalar path ignores it.
void Lowering::plan_scratch() {
  const std::vector<NodeId> order = g_.nodes();
  for (NodeId id : order) {
    const Node& n = g_.node(id);
    const NodeScratch scratch = node_scratch(g_, n, dsp_paths_);
    if (scratch.bytes == 0 || !n.args[scratch.arg].is_none()) continue;
    const auto size = static_cast<int64_t>(scratch.bytes + kScratchAlign);
    const ValueId buffer = new_node("scratch_buffer", {Argument(size)}, int8_spec({size}), n, id);
    g_.set_arg(id, scratch.arg, TensorRef{buffer});
  }
}

}  // namespace pteron::cortex_m::aot::detail

namespace pteron::cortex_m::aot {

size_t cortex_m_scratch_bytes(const compiler::ir::Graph& graph, bool dsp_paths) {
  size_t most = 0;
  for (compiler::ir::NodeId id : graph.nodes())
    most = std::max(most, detail::node_scratch(graph, graph.node(id), dsp_paths).bytes);
  return most;
}

}  // namespace pteron::cortex_m::aot
