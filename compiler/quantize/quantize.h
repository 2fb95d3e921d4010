// Post-training static INT8 quantization of a float graph (the form PyTorch's PT2E flow
// produces, so backends lower pteron-quantized and PT2E-quantized graphs the same way).
//
// After the default passes (batch norm already folded into convolutions), the quantizer
//   1. decides which activations are quantized: inputs and outputs of conv, linear, add, mul,
//      pools, mean, cat and standalone relu/clamp; a relu/hardtanh/clamp right after conv,
//      linear, add or mul is fused (only its output is quantized); max pool and view/permute/
//      squeeze share their input's parameters (the int8 data passes through unchanged);
//   2. calibrates: runs the samples through the graph on the host kernels and observes those
//      activations (min/max, or a histogram's percentile range);
//   3. rewrites: quantize_per_tensor after each such value's producer and a
//      dequantize_per_tensor before each user (one per user, as PT2E's DuplicateDQPass);
//      conv/linear weights become int8 constants (symmetric, per output channel) read through
//      dequantize_per_channel; biases become int32 constants (scale input_scale x
//      weight_scale[c]) read through dequantize_per_channel where the scheme wants that;
//   4. optionally (int8_io) drops the first quantize / last dequantize so the program takes and
//      returns int8 tensors; their parameters are in the report.
// What runs without a backend: the portable kernels execute the Q/DQ graph as written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/quantize/calibration.h"
#include "compiler/quantize/observer.h"

namespace pteron::compiler {

// Who will run the quantized graph. All three use int8 asymmetric per-tensor activations
// ([-128, 127], zero point from the range) and int8 symmetric per-channel weights
// ([-127, 127], zero point 0) for conv and linear:
//   cortex-m  CMSIS-NN's convention: its s8 kernels take input/output offsets (asymmetric
//             activations) and per-channel weight multipliers; int32 bias. Observer: min/max
//             (the TFLite convention of the MLPerf Tiny reference models).
//   xnnpack   ExecuTorch's XNNPACKQuantizer symmetric config; bias stays float (XNNPACK
//             quantizes it itself). Observer: histogram percentile.
//   ethos-u   TOSA int8 (Vela): int32 bias. Observer: histogram percentile.
enum class QuantScheme { CortexM, Xnnpack, EthosU };
enum class QuantObserver { MinMax, Percentile };

// "cortex-m" | "xnnpack" | "ethos-u"; throws CompileError listing the choices.
QuantScheme parse_quant_scheme(std::string_view name);
std::string_view quant_scheme_name(QuantScheme scheme);
// "minmax" | "percentile"
QuantObserver parse_quant_observer(std::string_view name);

struct QuantizeOptions {
  QuantScheme scheme = QuantScheme::Xnnpack;
  std::optional<QuantObserver> observer;  // default: per scheme (above)
  double percentile = 99.99;
  bool int8_io = false;
  CalibrationData calibration;
  CalibrationProgress progress;
};

// Quantization parameters of a program input or output that crosses the boundary as int8.
struct QuantizedIo {
  std::string name;
  size_t index = 0;
  QParams qparams;
};

struct QuantizeReport {
  std::string scheme;
  std::string observer;
  size_t samples = 0;
  size_t quantized_ops = 0;                  // nodes whose inputs and outputs are quantized
  size_t quantized_values = 0;               // activations with a quantize node
  size_t weight_bytes = 0;                   // int8 weights and int32 biases written
  std::vector<QuantizedIo> inputs, outputs;  // int8_io only
  std::vector<std::string> lines;            // human-readable summary
};

// Quantizes `graph` in place (it must be a float graph after the default passes). Throws
// CompileError on bad calibration data or a graph that is already quantized.
QuantizeReport quantize_graph(ir::Graph& graph, const QuantizeOptions& options);

}  // namespace pteron::compiler
