// Lowering of PT2E-quantized graphs (quantized_decomposed dequantize -> op -> quantize, as
// torchao's convert_pt2e and pteron's quantizer write them; compiler/quantize/README.md) onto the
// cortex_m:: int8 kernels. Multipliers, shifts and int32 biases are computed here, weights
// rearranged to the kernels' layouts (OHWI, [1, kH, kW, C] for depthwise). Ops that do not match
// stay float, with their Q/DQ around them (the remaining per-tensor int8 Q/DQ become cortex_m ops
// too).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/target/target.h"

namespace pteron::cortex_m::aot {

struct CortexMLoweringReport {
  int lowered = 0;                // float ops replaced by cortex_m int8 ops
  int quant_ops = 0;              // Q/DQ nodes turned into cortex_m::(de)quantize_per_tensor
  int transposes_removed = 0;     // NHWC<->NCHW pairs that cancelled between int8 ops
  std::vector<std::string> kept;  // "node 'x' (aten::y): reason" for quantized ops left float
};

// Rewrites `graph` in place (it stays verified) and removes what became dead. Nodes in
// `delegated` (and patterns touching them) are left alone. `target` (nullptr: none) decides
// which vector path's scratch the convolutions get planned (dsp_paths).
CortexMLoweringReport lower_to_cortex_m(
    compiler::ir::Graph& graph, const std::unordered_set<compiler::ir::NodeId>& delegated = {},
    const compiler::Target* target = nullptr);

// Whether the program's kernels will take their DSP paths: the target's core has the DSP
// extension and no MVE (Cortex-M4, M7). Otherwise (Cortex-M55, or no firmware target) the MVE
// paths' scratch is planned.
bool dsp_paths(const compiler::Target* target);

// Scratch bytes the lowered graph's kernels ask for at most (kernels/cortex_m/scratch.h), for
// the memory plan to reserve; also recorded as graph metadata "cortex_m.scratch_bytes".
size_t cortex_m_scratch_bytes(const compiler::ir::Graph& graph, bool dsp_paths = false);

// A positive real factor as a Q31 multiplier and shift: real ~= multiplier * 2^(shift - 31).
struct Requant {
  int32_t multiplier = 0;
  int32_t shift = 0;
};
Requant quantize_multiplier(double real);

}  // namespace pteron::cortex_m::aot
