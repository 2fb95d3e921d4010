// Small hand-built graphs for the pass tests: one line per node, and the graph run on the host
// kernels before and after a pass so each test checks the rewrite keeps the numbers too.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler::testing {

using ir::Argument;
using ir::NodeId;
using ir::TensorSpec;
using ir::ValueId;

TensorSpec f32(std::vector<int64_t> sizes);
TensorSpec spec(ScalarType dtype, std::vector<int64_t> sizes);

// Names are made unique (w, w_1, ...), so helpers may add the same name several times.
class GraphBuilder {
 public:
  ValueId input(const std::string& name, TensorSpec spec);
  // A constant of `spec` with the given float32 contents, or pseudo-random ones in [-1, 1).
  ValueId constant(const std::string& name, TensorSpec spec, std::vector<float> data);
  ValueId constant(const std::string& name, TensorSpec spec);
  // A constant of any dtype from raw bytes.
  ValueId constant_bytes(const std::string& name, TensorSpec spec, std::vector<uint8_t> bytes);
  // A call of `op` ("aten::relu.default") with one output of `out`; returns the output.
  // Trailing arguments left out take the schema's defaults.
  ValueId op(std::string_view op, std::vector<Argument> args, TensorSpec out,
             const std::string& name = "");
  // The same, returning the node.
  NodeId node(std::string_view op, std::vector<Argument> args, TensorSpec out,
              const std::string& name = "");
  // A call with several outputs (e.g. native_batch_norm's three).
  NodeId node(std::string_view op, std::vector<Argument> args, std::vector<TensorSpec> outs,
              const std::string& name = "");
  // Sets the graph outputs and returns the graph.
  ir::Graph finish(std::vector<ValueId> outputs);

  ir::Graph& graph() { return g_; }

 private:
  ir::Graph g_;
  uint32_t seed_ = 1;
};

const ir::OpSchema& schema(std::string_view op);
// How many nodes of `op` ("aten::relu.default") the graph has.
int count(const ir::Graph& g, std::string_view op);
// The node producing `v` (an intermediate).
const ir::Node& producer(const ir::Graph& g, ValueId v);
// The ops of the graph's nodes in order, for messages.
std::string ops(const ir::Graph& g);

// Pseudo-random float32 inputs for every graph input (uniform in [-1, 1); bool inputs from a
// fixed pattern, integer inputs 0..size-1 modulo `index_bound`).
std::vector<std::vector<uint8_t>> sample_inputs(const ir::Graph& g, uint32_t seed = 7,
                                                int64_t index_bound = 4);
// Runs `g` on the host kernels (the libraries linked into the test) with `inputs` and returns
// each float32 graph output's elements.
std::vector<std::vector<float>> run(const ir::Graph& g,
                                    const std::vector<std::vector<uint8_t>>& inputs);
// Largest |x| over all outputs.
double max_abs(const std::vector<std::vector<float>>& a);
// Largest |a - b| over all outputs (infinity when the shapes differ).
double max_abs_diff(const std::vector<std::vector<float>>& a,
                    const std::vector<std::vector<float>>& b);

}  // namespace pteron::compiler::testing
