// Calibration: running sample inputs through a float graph on the host kernels (node by node,
// as constant folding does) and handing every computed float tensor to an observer.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "compiler/ir/graph.h"

namespace pteron::compiler {

// One graph input's samples, stacked on a leading sample axis: shape [N, *input shape], C order.
struct CalibrationInput {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};
// One entry per graph input, in the graph's input order.
using CalibrationData = std::vector<CalibrationInput>;

// Called after each sample: pass (1-based) of passes over the data, samples done of total.
using CalibrationProgress = std::function<void(int pass, int passes, size_t done, size_t total)>;

// Checks count, dtype and shape of every input's samples against the graph and returns the
// number of samples. Throws CompileError with one line naming the input at fault.
size_t check_calibration_data(const ir::Graph& graph, const CalibrationData& data);

// Runs every sample through `graph`; calls visit(value, elements) for each float32 value in
// `wanted` (graph inputs included) once per sample. Intermediates are freed after their last use.
using CalibrationVisitor = std::function<void(ir::ValueId, std::span<const float>)>;
using SampleDone = std::function<void(size_t done, size_t total)>;
void run_calibration(const ir::Graph& graph, const CalibrationData& data,
                     const std::vector<bool>& wanted, const CalibrationVisitor& visit,
                     const SampleDone& done = {});

}  // namespace pteron::compiler
