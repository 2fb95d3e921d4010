// Measuring this machine's calibration for the compiler's cost model (compiler/cost/): `pteron
// tune` runs it once and caches it (compiler/cost/host_calibration.h says where); compiles for
// the host read it, and their partitioners then choose per region between XNNPACK and the
// kernel libraries by estimated time. Docs: tools/cli/README.md ("pteron tune").
#pragma once

#include <functional>
#include <string>

#include "compiler/cost/cost_model.h"
#include "compiler/cost/host_calibration.h"

namespace pteron::cli {

// Measures the rates: for each op class (a 3x3 stride-1 convolution, a 5x5 one, a pointwise
// one, 3x3, 5x5 and 7x7 depthwise ones, a linear), chains of 1 and of 4 (large layers) or 8 (small
// ones) identical layers at two sizes are compiled for each engine (fp32: XNNPACK and the optimized
// kernels; int8: XNNPACK and the int8 kernel library) and timed in processes of their own, in
// alternating rounds (cli::time_programs). Per round, the long chain's extra time per layer
// (free of the program's own costs: input copies, quantize, dequantize) at the two sizes gives
// a cost per call and per multiply-add; the median over rounds is kept. `progress` gets a line
// per op class. Throws UserError.
compiler::cost::Calibration calibrate(int threads, int rounds,
                                      const std::function<void(const std::string&)>& progress);

// Writes `c` to `path`, making its folders; written beside it and renamed, so a compile reading
// the cache never sees half a file. Throws UserError.
void write_calibration(const std::string& path, const compiler::cost::Calibration& c);

// Rounds `pteron tune` takes unless told otherwise (and a first compile always).
constexpr int kTuneRounds = 5;

// A host compile on the target's default backends that finds no usable calibration in this
// machine's cache (`host.cache_path`: none yet, one of another pteron version, a damaged one)
// measures it as `pteron tune` does, caches it and returns it as host_calibration() reads it;
// `quiet` leaves out the progress on stderr. When measuring fails the compile goes on with the
// fixed rules: `host` comes back with a note saying why.
compiler::cost::HostCalibration calibrate_on_first_use(compiler::cost::HostCalibration host,
                                                       int threads, bool quiet);

}  // namespace pteron::cli
