// Measuring this machine's calibration for the compiler's cost model (compiler/cost/): `pteron
// tune` runs it once and caches it (compiler/cost/host_calibration.h says where); compiles for
// the host read it, and their partitioners then choose per region between XNNPACK and the
// kernel libraries by estimated time. Docs: tools/cli/README.md ("pteron tune").
#pragma once

#include <functional>
#include <string>

#include "compiler/cost/cost_model.h"

namespace pteron::cli {

// Measures the rates: for each op class (a 3x3 stride-1 convolution, a 5x5 one, a pointwise
// one, a depthwise one, a linear), chains of 1 and of 4 (large layers) or 8 (small ones)
// identical layers at two sizes are compiled for each engine (fp32: XNNPACK and the optimized
// kernels; int8: XNNPACK and the int8 kernel library) and timed in processes of their own, in
// alternating rounds (cli::time_programs). Per round, the long chain's extra time per layer
// (free of the program's own costs: input copies, quantize, dequantize) at the two sizes gives
// a cost per call and per multiply-add; the median over rounds is kept. `progress` gets a line
// per op class. Throws UserError.
compiler::cost::Calibration calibrate(int threads, int rounds,
                                      const std::function<void(const std::string&)>& progress);

}  // namespace pteron::cli
