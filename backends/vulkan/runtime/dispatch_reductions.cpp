// Row reductions, one invocation per row: softmax and layer norm over the last dim, mean over
// the trailing dims.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {

Error plan_softmax(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  RowsParams p;
  p.cols = x.dims()->Get(x.dims()->size() - 1);
  p.rows = static_cast<uint32_t>(numel / p.cols);
  put(dp, p);
  dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
  dp.groups_y = 1;
  *shader = "softmax";
  return Error::Ok;
}

Error plan_layer_norm(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  LayerNormParams p;
  p.cols = x.dims()->Get(x.dims()->size() - 1);
  p.rows = static_cast<uint32_t>(numel / p.cols);
  p.eps = node.eps();
  p.has_weight = node.has_weight();
  p.has_bias = node.has_bias();
  put(dp, p);
  dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
  dp.groups_y = 1;
  *shader = "layer_norm";
  return Error::Ok;
}

Error plan_mean(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  RowsParams p;
  p.rows = static_cast<uint32_t>(numel);
  p.cols = static_cast<uint32_t>(tensor_numel(x) / numel);
  put(dp, p);
  dp.groups_x = groups_for(p.rows, 1, lim.maxComputeWorkGroupCount[0]);
  dp.groups_y = 1;
  *shader = "mean";
  return Error::Ok;
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
