// Measuring this machine's calibration for the compiler's cost model (compiler/cost/): `pteron
// tune` runs it once and caches it (compiler/cost/host_calibration.h says where); compiles for
// the host read it, and their partitioners then choose per region between XNNPACK and the
// kernel libraries by estimated time. Docs: tools/cli/README.md ("pteron tune").
#pragma once

#include <functional>
#include <string>

#include "compiler/cost/cost_model.h"

namespace pteron::cli {

// Measures the rates: for each op class, a chain of 1 and of 4 identical layers (a 3x3
// convolution, a pointwise one, a depthwise one, a linear) is compiled for each engine (fp32:
// XNNPACK and the optimized kernels; int8: XNNPACK and the int8 kernel library) and timed in
// processes of their own, alternating (cli::time_programs); the 4-layer chain's extra time over
// the 1-layer one, per multiply-add, is the rate, free of the program's fixed costs (input
// copies, quantize, dequantize). `progress` gets a line per op class. Throws UserError.
compiler::cost::Calibration calibrate(int threads, int rounds,
                                      const std::function<void(const std::string&)>& progress);

}  // namespace pteron::cli
