// The compiler's XNNPACK partitioner ("xnnpack", backend id "PteronXnnpackBackend"): claims the
// fp32 nodes this XNNPACK snapshot runs, keeps regions that repay their boundary, and lowers
// each region to one payload (aot/payload_builder.h). See backends/xnnpack/README.md
// ("Partitioner") for the operator list, the layout rule and the cost rule.
//
// Layout: every 4-D activation inside a region is NHWC (XNNPACK's 2-D ops are channels-last).
// 4-D region inputs and outputs cross the boundary as channels-last NCHW tensors
// (dim_order [0, 2, 3, 1]); LoweredRegion says so and the compiler converts outside the
// delegate where the neighbouring tensors are contiguous.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/partition/partitioner.h"

namespace pteron::xnnpack {

class XnnpackPartitioner final : public compiler::Partitioner {
 public:
  std::string name() const override { return "xnnpack"; }
  std::string backend_id() const override { return "PteronXnnpackBackend"; }
  std::string dynamic_shape_refusal() const override {
    // What it would take: XNNPACK's reshape API (upstream since 2023, bundled by ExecuTorch):
    // per call, xnn_reshape_external_value for each dynamic input, xnn_reshape_runtime to
    // propagate the sizes, then xnn_setup_runtime_v2 with buffers planned at the upper bound.
    return "dynamic shape: Debian's XNNPACK (2022) has no runtime reshape; running this needs "
           "XNNPACK's reshape API (xnn_reshape_external_value + xnn_reshape_runtime, then "
           "xnn_setup_runtime_v2 per call), in XNNPACK since 2023, so the node runs on the "
           "kernel libraries";
  }
  compiler::SupportDecision supports(const compiler::ir::Graph& graph,
                                     const compiler::ir::Node& node,
                                     const compiler::PartitionContext& context) const override;
  compiler::SupportDecision worth_delegating(
      const compiler::ir::Graph& graph, const compiler::Region& region,
      const compiler::PartitionContext& context) const override;
  compiler::LoweredRegion lower(const compiler::ir::Graph& graph, const compiler::Region& region,
                                const compiler::PartitionContext& context) const override;
};

// A region is kept when it holds a convolution, linear layer or pool, or when it does at least
// this many FLOPs per byte crossing its boundary (inputs read plus outputs written).
constexpr double kMinFlopsPerBoundaryByte = 2.0;

// When the compile's kernel libraries include "optimized" (PartitionContext::kernel_libraries),
// fp32 nodes the optimized kernels run faster are refused with "optimized kernel faster: ...":
// linear / addmm / mm with at least this many rows (M of the M x K x N product; fewer rows is
// a GEMV-like product where XNNPACK matches or beats the SGEMM, and conv nets' classifier heads
// stay in their region), and softmax. int8 (Q/DQ) nodes are never refused for this. Measured
// in bench/results/xnnpack_vs_optimized.md (bench/kernels/xnnpack_vs_optimized.py).
constexpr int64_t kMinRowsForOptimizedLinear = 16;

// Links the partitioner's start-up registration into a binary that references nothing else
// of it (call it anywhere; it returns whether "xnnpack" is registered).
bool xnnpack_partitioner_registered();

}  // namespace pteron::xnnpack
