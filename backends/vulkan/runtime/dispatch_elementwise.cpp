// Elementwise ops: add/sub/mul/div with broadcasting (binary.comp), clamp, unary functions and
// the fp16 boundary conversions; one invocation per element, grid-stride beyond the limit.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {

// Merges output dims the binary shader can walk as one (size-1 dims; neighbours where both
// inputs' strides are contiguous across them): each dim costs the shader an integer division
// per element, which CPU devices do lane by lane. [1, 12, 128, 64] + same -> [98304].
void coalesce(BinaryParams& p) {
  uint32_t rank = 0;
  for (uint32_t d = 0; d < p.rank; ++d) {
    if (p.dims[d] == 1) continue;
    if (rank > 0 && p.stride0[rank - 1] == p.stride0[d] * p.dims[d] &&
        p.stride1[rank - 1] == p.stride1[d] * p.dims[d]) {
      p.dims[rank - 1] *= p.dims[d];  // the outer dim absorbs this one
      p.stride0[rank - 1] = p.stride0[d];
      p.stride1[rank - 1] = p.stride1[d];
      continue;
    }
    p.dims[rank] = p.dims[d];
    p.stride0[rank] = p.stride0[d];
    p.stride1[rank] = p.stride1[d];
    ++rank;
  }
  if (rank == 0) {  // one element
    p.dims[0] = 1;
    p.stride0[0] = p.stride1[0] = 0;
    rank = 1;
  }
  p.rank = rank;
}

Error plan_binary(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  BinaryParams p{};
  p.numel = static_cast<uint32_t>(numel);
  p.op = node.op() == fb::OpType::Add   ? 0
         : node.op() == fb::OpType::Sub ? 1
         : node.op() == fb::OpType::Mul ? 2
                                        : 4;
  p.alpha = node.alpha();
  p.rank = out.dims()->size();
  for (uint32_t i = 0; i < p.rank; ++i) p.dims[i] = out.dims()->Get(i);
  for (int which = 0; which < 2; ++which) {
    const fb::Tensor& t = tensor(d, node.inputs()->Get(which));
    uint32_t* strides = which == 0 ? p.stride0 : p.stride1;
    const uint32_t shift = p.rank - t.dims()->size();
    uint32_t s = 1;
    for (uint32_t i = t.dims()->size(); i-- > 0;) {
      const uint32_t size = t.dims()->Get(i);
      strides[i + shift] = size == 1 ? 0 : s;  // broadcast dims read element 0
      s *= size;
    }
  }
  coalesce(p);
  put(dp, p);
  dp.groups_y = 1;
  return plan_per_element(plan, dp, shader, "binary");
}

Error plan_clamp(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  ClampParams p{static_cast<uint32_t>(numel), node.output_min(), node.output_max()};
  put(dp, p);
  dp.groups_y = 1;
  return plan_per_element(plan, dp, shader, "clamp");
}

Error plan_unary(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  UnaryParams p{static_cast<uint32_t>(numel), static_cast<uint32_t>(node.unary())};
  put(dp, p);
  return plan_per_element(plan, dp, shader, "unary");
}

Error plan_convert(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  ConvertParams p{static_cast<uint32_t>(numel)};
  put(dp, p);
  dp.groups_x = groups_for(numel, kLocalSize, lim.maxComputeWorkGroupCount[0]);
  *shader = out.dtype() == fb::DataType::Float16 ? "to_f16" : "to_f32";
  return Error::Ok;
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
