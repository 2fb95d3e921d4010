// Linear, matmul and bmm: one of three shaders (tiled in shared memory, register-tiled, or one
// output per invocation) and its grid.
#include "backends/vulkan/runtime/vulkan_delegate.h"

namespace pteron {
namespace vulkan {
namespace detail {

Error plan_linear(const NodeToPlan& plan, Dispatch& dp, const char** shader) {
  const auto& [d, n, node, out, x, numel, lim] = plan;
  LinearParams p{};
  const bool batched = node.op() == fb::OpType::BatchMatMul;
  const uint32_t batches = batched ? out.dims()->Get(0) : 1;
  p.K = x.dims()->Get(x.dims()->size() - 1);
  p.N = out.dims()->Get(out.dims()->size() - 1);
  p.M = static_cast<uint32_t>(numel / p.N / batches);
  if (batched) {
    p.a_batch_stride = p.M * p.K;
    p.w_batch_stride = p.K * p.N;
    p.out_batch_stride = p.M * p.N;
  }
  dp.groups_z = batches;
  p.w_transposed = node.op() == fb::OpType::Linear;
  p.has_bias = node.inputs()->size() == 3;
  p.lo = node.output_min();
  p.hi = node.output_max();
  put(dp, p);
  // CPU implementations run the barrier-free shader (see linear_direct.comp).
  LinearShader choice = g_linear_shader.load();
  if (choice == LinearShader::Auto) {
    choice = d.ctx->properties.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? LinearShader::Registers
                                                                         : LinearShader::Tiled;
  }
  if (choice == LinearShader::Direct) {
    dp.groups_x = (p.N + kLocalSize - 1) / kLocalSize;
    dp.groups_y = p.M;
    *shader = "linear_direct";
  } else if (choice == LinearShader::Registers) {
    const uint32_t tile_n = kConvLocalSize * kLinearColumns;
    dp.groups_x = (p.N + tile_n - 1) / tile_n;
    dp.groups_y = (p.M + kLinearRows - 1) / kLinearRows;
    *shader = "linear_reg";
  } else {
    dp.groups_x = (p.N + kTile - 1) / kTile;
    dp.groups_y = (p.M + kTile - 1) / kTile;
    *shader = "linear";
  }
  if (!fits_device(dp, lim)) {
    return fail(Error::NotSupported,
                "Vulkan delegate: node %u (%s) [%u x %u] exceeds the device's dispatch size", n,
                op_name(node.op()), p.M, p.N);
  }
  return Error::Ok;
}

}  // namespace detail
}  // namespace vulkan
}  // namespace pteron
