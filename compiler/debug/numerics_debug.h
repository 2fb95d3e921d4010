// Numerical debugging: runs a model's graph on the portable (reference) kernels and its compiled
// program on the program's own kernels and delegates, compares every intermediate both expose
// (kernel outputs, and delegate outputs at region boundaries), and finds the first node whose
// value is beyond tolerance, with its source line. `pteron debug` is the front end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/quantize/calibration.h"

namespace pteron::compiler {

struct NumericsTolerance {
  // A value matches when max|program - reference| <= atol + rtol * max|reference|.
  double rtol = 1e-4;
  double atol = 1e-5;
};

struct IntermediateCheck {
  size_t instruction = 0;
  std::string node;  // graph node (its output's name)
  std::string op;
  std::string source;   // "file.py:123" when the export recorded it
  std::string runs_on;  // kernel library or backend
  double max_abs_error = 0;
  double reference_max_abs = 0;
  bool within = true;
};

struct NumericsReport {
  std::vector<IntermediateCheck> checks;  // execution order
  int first_beyond = -1;                  // index into checks, -1 when all match
  size_t not_compared = 0;  // program values with no float reference (ints, fused nodes)
};

// `graph_info_json` is the program's graph info (pteron.graph_info named data); `inputs` holds
// one sample per graph input (shape [1, *input shape]). Throws CompileError / std::runtime_error
// with one line on failure (bad files, inputs that do not fit, a program without graph info).
NumericsReport debug_numerics(const std::vector<uint8_t>& program,
                              const std::string& graph_info_json, const std::string& pt2_path,
                              const CalibrationData& inputs, const NumericsTolerance& tolerance);

}  // namespace pteron::compiler
