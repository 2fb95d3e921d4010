// Lowering of pteron IR regions to TOSA 1.0 graphs, and the support checker that decides, node
// by node, what a TOSA profile can take (with the reason when not).
//
//   INT profile: int8 graphs in PT2E form (quantized_decomposed dequantize -> op -> quantize,
//     as compiler/quantize and torchao's convert_pt2e write them). The region's inputs and
//     outputs are int8 (the quantize/dequantize at its edges stay outside); inside, each op
//     becomes integer TOSA: int8 x int8 -> int32 convolutions with zero points, RESCALE
//     (multiplier/shift, SINGLE_ROUND) back to int8, CLAMP for fused activations, TABLE for
//     sigmoid/tanh.
//   FP profile: fp32 graphs, op for op.
// 4-D activations are NHWC inside the graph (TOSA's convolutions and pools are NHWC); 4-D
// region inputs and outputs are NHWC too (their `dim_order` says so), others keep their
// logical (row-major) layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/partition/partitioner.h"

namespace pteron::tosa_aot {

enum class TosaProfile { Int, Fp };
const char* profile_name(TosaProfile p);  // "INT" | "FP"

// One graph input or output of the lowered TOSA graph.
struct TosaIo {
  std::string tosa_name;                                 // tensor name in the TOSA graph
  compiler::ir::ValueId value = compiler::ir::kNoValue;  // the IR value it carries
  std::string value_name;                                // that value's name
  std::vector<int64_t> shape;                            // TOSA shape (NHWC for 4-D)
  std::vector<uint8_t> dim_order;  // layout of the IR value's dims in memory ({0,2,3,1}: NHWC)
  compiler::ir::ScalarType dtype = compiler::ir::ScalarType::Float;  // Char (int8) or Float
  bool quantized = false;                                            // int8 with:
  double scale = 1;
  int32_t zero_point = 0;
};

struct TosaLowering {
  bool ok = false;
  std::string reason;                   // when !ok: which node and why
  std::vector<uint8_t> tosa;            // serialized TosaGraph (identifier "TOSA", version 1.0.0)
  std::vector<TosaIo> inputs, outputs;  // in TOSA graph input / output order
  size_t tosa_ops = 0;                  // operators written (CONST and CONST_SHAPE included)
};

// Whether `profile` can take `node` (looking at its quantize/dequantize neighbours in INT),
// with the reason when not: the op, dtype, shape, attribute, quantization or constraint.
compiler::SupportDecision tosa_supports(const compiler::ir::Graph& graph,
                                        const compiler::ir::Node& node, TosaProfile profile);

// Lowers `nodes` (a region, topological order) to one TOSA graph. Region inputs are the
// values the nodes read that no node of the region produces (constants excluded); outputs the
// values used outside the region or by the graph's outputs. A refusal is data (ok false,
// reason); an internal error throws CompileError naming the node.
TosaLowering lower_to_tosa(const compiler::ir::Graph& graph,
                           const std::vector<compiler::ir::NodeId>& nodes, TosaProfile profile);

// The nodes of `graph` tosa_supports accepts, in order (for whole-model lowering and tools),
// and the refusals of the others ("node ...: reason").
struct TosaSelection {
  std::vector<compiler::ir::NodeId> nodes;
  std::vector<std::string> refusals;
};
TosaSelection select_tosa_nodes(const compiler::ir::Graph& graph, TosaProfile profile);

}  // namespace pteron::tosa_aot
