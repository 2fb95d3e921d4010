// Scratch buffers for the kernels' vector paths (MVE or DSP), planned as graph values.
#include "kernels/cortex_m/scratch.h"

#include <algorithm>

#include "kernels/cortex_m/aot/lowering/lowering.h"

namespace pteron::cortex_m::aot::detail {
namespace {

// The scratch the vector path (MVE, or DSP with `dsp`) of a cortex_m node asks for, in bytes
// (0: none, the node is no convolution or its vector path needs none).
size_t node_scratch(const compiler::ir::Graph& graph, const compiler::ir::Node& n, bool dsp) {
  const bool conv = n.is(kQuantizedConv2d);
  if (!conv && !n.is(kQuantizedDepthwiseConv2d)) return 0;
  const auto& in = graph.value(n.arg("input").tensor()).spec.sizes;
  const auto& w = graph.value(n.arg("weight").tensor()).spec.sizes;
  const auto stride = pair_arg(n.arg("stride"), 1);
  if (!conv) {
    // Depth multiplier 1 only: the MVE path's per-channel data and one row of padding.
    if (w[3] != in[3]) return 0;
    if (dsp) return quantized_depthwise_conv2d_scratch_bytes_dsp(w[3], w[1], w[2]);
    const auto& out = graph.value(n.outputs[0]).spec.sizes;
    return quantized_depthwise_conv2d_scratch_bytes(w[3], in[2], out[2], stride[1]);
  }
  if (dsp) return quantized_conv2d_scratch_bytes_dsp(in[3], w[1], w[2], w[0]);
  const auto padding = pair_arg(n.arg("padding"), 0);
  const bool pointwise = w[1] == 1 && w[2] == 1 && stride[0] == 1 && stride[1] == 1 &&
                         padding[0] == 0 && padding[1] == 0;
  return quantized_conv2d_scratch_bytes(in[3], w[1], w[2], w[0], pointwise, stride[1]);
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
    const size_t bytes = node_scratch(g_, n, dsp_paths_);
    if (bytes == 0 || !n.arg("scratch").is_none()) continue;
    const auto size = static_cast<int64_t>(bytes + kScratchAlign);
    const ValueId buffer = new_node("scratch_buffer", {Argument(size)}, int8_spec({size}), n, id);
    g_.set_arg(id, "scratch", TensorRef{buffer});
  }
}

}  // namespace pteron::cortex_m::aot::detail

namespace pteron::cortex_m::aot {

size_t cortex_m_scratch_bytes(const compiler::ir::Graph& graph, bool dsp_paths) {
  size_t most = 0;
  for (compiler::ir::NodeId id : graph.nodes())
    most = std::max(most, detail::node_scratch(graph, graph.node(id), dsp_paths));
  return most;
}

}  // namespace pteron::cortex_m::aot
