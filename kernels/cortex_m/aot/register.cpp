// The "cortex-m" kernel library for `--backends cortex-m,portable`: its kernels register under
// "cortex_m" in the runtime, and its pass lowers quantized patterns onto them.
#include "compiler/partition/registry.h"
#include "kernels/cortex_m/aot/in_place_rules.h"
#include "kernels/cortex_m/aot/lower_cortex_m.h"

namespace pteron::cortex_m::aot {
namespace {

const bool registered = [] {
  compiler::KernelLibrary library{"cortex-m", "cortex_m", {}};
  library.passes.emplace_back(
      "lower_to_cortex_m",
      [](compiler::ir::Graph& graph, const std::unordered_set<compiler::ir::NodeId>& delegated,
         const compiler::PartitionContext& context) {
        const CortexMLoweringReport report = lower_to_cortex_m(graph, delegated, context.target);
        return report.lowered + report.quant_ops;
      });
  // Element-wise on same-shape operands, scalar and MVE paths alike: each vector of the output
  // is written after the same elements of the inputs were read. Convolutions and transposes:
  // their output may start some rows before their input (in_place_rules.h).
  using compiler::elementwise_in_place;
  library.in_place_ops = {
      {"cortex_m::quantized_clamp.default", elementwise_in_place},
      {"cortex_m::quantized_lut.default", elementwise_in_place},
      {"cortex_m::requantize.default", elementwise_in_place},
      {"cortex_m::quantized_add.default", elementwise_in_place},
      {"cortex_m::quantized_mul.default", elementwise_in_place},
      {"cortex_m::quantized_conv2d_nhwc.default", conv2d_in_place},
      {"cortex_m::quantized_depthwise_conv2d_nhwc.default", depthwise_conv2d_in_place},
      {"cortex_m::transpose.default", transpose_in_place}};
  // The planned scratch of a convolution (lower_cortex_m's plan_scratch).
  library.allocation_ops = {"cortex_m::scratch_buffer.default"};
  return compiler::register_kernel_library(std::move(library));
}();

}  // namespace
}  // namespace pteron::cortex_m::aot
