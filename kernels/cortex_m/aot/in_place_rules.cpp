// The in-place rules of the "cortex-m" kernel library's windowed kernels (kernels/cortex_m/
// in_place.h): a convolution's output may start a few rows' bytes before its input.
#include "kernels/cortex_m/aot/in_place_rules.h"

#include "kernels/cortex_m/aot/lowering/lowering.h"
#include "kernels/cortex_m/in_place.h"

namespace pteron::cortex_m::aot {
namespace {

// The input's and the output's NHWC geometry; nullopt unless `input` is the node's activation.
std::optional<WindowGeometry> geometry(const compiler::ir::Graph& graph,
                                       const compiler::ir::Node& node,
                                       compiler::ir::ValueId input) {
  if (node.outputs.size() != 1 || !node.arg("input").is_tensor() ||
      node.arg("input").tensor() != input) {
    return std::nullopt;
  }
  const auto& in = graph.value(input).spec.sizes;
  const auto& out = graph.value(node.outputs[0]).spec.sizes;
  if (in.size() != 4 || out.size() != 4) return std::nullopt;
  const auto stride = detail::pair_arg(node.arg("stride"), 1);
  const auto padding = detail::pair_arg(node.arg("padding"), 0);
  WindowGeometry g;
  g.n = in[0], g.h = in[1], g.w = in[2], g.in_channels = in[3];
  g.out_h = out[1], g.out_w = out[2], g.out_channels = out[3];
  g.stride_h = stride[0], g.stride_w = stride[1], g.pad_top = padding[0], g.pad_left = padding[1];
  if (g.n != out[0] || g.h < 1 || g.w < 1 || g.out_h < 1 || g.out_w < 1 || g.stride_h < 1 ||
      g.stride_w < 1 || g.pad_top < 0 || g.pad_left < 0) {
    return std::nullopt;
  }
  return g;
}

// The lag for the pixels the kernel keeps in flight (given the geometry).
std::optional<uint64_t> lag(const compiler::ir::Graph& graph, const compiler::ir::Node& node,
                            compiler::ir::ValueId input,
                            int64_t (*pixels_in_flight)(const WindowGeometry&)) {
  const auto g = geometry(graph, node, input);
  if (!g) return std::nullopt;
  return static_cast<uint64_t>(window_in_place_lag(*g, pixels_in_flight(*g)));
}

}  // namespace

std::optional<uint64_t> conv2d_in_place(const compiler::ir::Graph& graph,
                                        const compiler::ir::Node& node,
                                        compiler::ir::ValueId input) {
  return lag(graph, node, input,
             [](const WindowGeometry& g) { return conv2d_pixels_in_flight(g.out_channels); });
}

std::optional<uint64_t> depthwise_conv2d_in_place(const compiler::ir::Graph& graph,
                                                  const compiler::ir::Node& node,
                                                  compiler::ir::ValueId input) {
  return lag(graph, node, input,
             [](const WindowGeometry& g) { return depthwise_pixels_in_flight(g.out_w); });
}

std::optional<uint64_t> transpose_in_place(const compiler::ir::Graph& graph,
                                           const compiler::ir::Node& node,
                                           compiler::ir::ValueId input) {
  if (node.outputs.size() != 1 || !node.arg("input").is_tensor() ||
      node.arg("input").tensor() != input || !node.arg("perm").is<std::vector<int64_t>>()) {
    return std::nullopt;
  }
  const auto& sizes = graph.value(input).spec.sizes;
  std::vector<int64_t> perm = node.arg("perm").get<std::vector<int64_t>>();
  const auto rank = static_cast<int64_t>(sizes.size());
  if (rank < 1 || rank > 4 || static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  for (int64_t& p : perm) p = p < 0 ? p + rank : p;
  return static_cast<uint64_t>(
      transpose_in_place_lag(static_cast<int32_t>(rank), sizes.data(), perm.data()));
}

}  // namespace pteron::cortex_m::aot
