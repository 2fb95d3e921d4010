// int8 quantization parameters, and reading them off a graph's per-tensor Q/DQ nodes: shared by
// the quantizer, which writes them, and the lowerings that match PT2E's Q/DQ patterns (TOSA,
// Cortex-M).
#pragma once

#include <cstdint>
#include <optional>

#include "compiler/ir/node.h"

namespace pteron::compiler {

struct QParams {
  double scale = 1.0;  // stored in the graph as float32 (torch's observers compute in float32)
  int64_t zp = 0;      // zero point
  int64_t qmin = -128;
  int64_t qmax = 127;
};

// The parameters of a per-tensor int8 quantize or dequantize node
// (quantized_decomposed::{quantize,dequantize}_per_tensor.default: input, scale, zero point,
// qmin, qmax, dtype): nullopt unless the dtype is int8, the scale positive and finite, and the
// zero point and [qmin, qmax] within int8.
std::optional<QParams> per_tensor_qparams(const ir::Node& n);

}  // namespace pteron::compiler
