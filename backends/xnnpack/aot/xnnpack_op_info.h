// What the XNNPACK partitioner and its lowering need to know about graph nodes: which op a
// node is (op_table), its attributes, constants and int8 weights read in logical order, the
// PT2E quantize/dequantize forms, and the NHWC layout rules for 4-D values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backends/xnnpack/aot/payload_builder.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/queries.h"

namespace pteron::xnnpack::aot {

using compiler::ir::Argument;
using compiler::ir::Graph;
using compiler::ir::Node;
using compiler::ir::NodeId;
using compiler::ir::ScalarType;
using compiler::ir::TensorSpec;
using compiler::ir::Value;
using compiler::ir::ValueId;

inline const std::vector<uint8_t> kChannelsLast = {0, 2, 3, 1};

using compiler::ir::is_op;
using compiler::ir::numel;
using compiler::ir::shape_str;

// XNNPACK dims of a value: 4-D activations are NHWC inside a region, others as they are.
std::vector<uint32_t> xnn_dims(const TensorSpec& spec);

// True when NCHW and NHWC order the elements the same (a reshape can cross the layouts).
bool nhwc_is_plain(const std::vector<int64_t>& s);

// A float constant's elements in logical (row-major) order, whatever its dim order.
std::vector<float> read_floats(const Value& v);

// Any numeric constant's elements as doubles, in logical order (scales, zero points, int8).
std::vector<double> read_numbers(const Value& v);

inline constexpr char kQuantize[] = "quantized_decomposed::quantize_per_tensor.default";

inline constexpr char kDequantize[] = "quantized_decomposed::dequantize_per_tensor.default";

inline constexpr char kDequantizeChannel[] = "quantized_decomposed::dequantize_per_channel.default";

// The dequantize node producing `v` from a constant (a PT2E weight), or nullptr.
const Node* weight_dequantize(const Graph& g, ValueId v);

// int8 quantization of an activation or weight: per-tensor, or per-channel along `axis`.
struct QuantInfo {
  std::vector<float> scales;  // one (per tensor) or one per channel
  std::vector<int32_t> zero_points;
  int64_t axis = -1;  // -1: per tensor
};

QuantInfo quant_of(const Graph& g, const Node& qdq);

// A value known at compile time in fp32: a constant, or a dequantized constant.
std::vector<float> static_floats(const Graph& g, ValueId v);

bool is_static(const Graph& g, ValueId v);

// Row-major data of `sizes` permuted: out dims are sizes[perm[i]].
template <typename T>
std::vector<T> permute(const std::vector<T>& in, const std::vector<int64_t>& sizes,
                       const std::vector<size_t>& perm) {
  const size_t r = sizes.size();
  std::vector<int64_t> in_strides(r, 1);
  for (size_t d = r - 1; d-- > 0;) in_strides[d] = in_strides[d + 1] * sizes[d + 1];
  std::vector<int64_t> out_sizes(r);
  for (size_t i = 0; i < r; ++i) out_sizes[i] = sizes[perm[i]];
  std::vector<T> out(in.size());
  std::vector<int64_t> index(r, 0);
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += index[d] * in_strides[perm[d]];
    out[i] = in[size_t(off)];
    for (size_t d = r; d-- > 0;) {
      if (++index[d] < out_sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// ---- which op a node is ----

enum class Kind {
  kUnsupported,
  kConv,
  kLinear,
  kAddmm,
  kMm,
  kBinary,
  kClampLike,
  kUnary,
  kLeakyRelu,
  kElu,
  kHardsigmoid,  // x / 6 + 1/2 clamped to [0, 1]: a multiply and an add (no XNNPACK op)
  kSoftmax,
  kSquare,
  kMaxPool,
  kAvgPool,
  kGlobalPool,
  kPad,
  kReshape,
  kResize,
  kResizeNearest,  // upsample_nearest2d by integer factors: a depthwise deconvolution of ones
  kConvert,
};

struct OpInfo {
  Kind kind = Kind::kUnsupported;
  BinaryOp binary = BinaryOp::kAdd;
  UnaryOp unary = UnaryOp::kAbs;
  bool scalar_other = false;  // the Scalar overload of a binary op
};

const compiler::ir::OpTable<OpInfo>& op_table();

OpInfo info_of(const Node& n);

const Value& input_value(const Graph& g, const Node& n, const char* name);

std::vector<int64_t> int_list(const Node& n, const char* name);

int64_t pair_at(const std::vector<int64_t>& v, size_t i, int64_t fallback);

// Clamp bounds of relu / hardtanh / clamp.
OutputRange clamp_range(const Node& n);

// Ops whose XNNPACK node takes a fused output range.
bool takes_output_range(const Node& n);

// Why upsample_nearest2d from `in` to `out` (one axis) is not an integer-factor repeat that
// picks the same source rows as PyTorch's kernel (its float index arithmetic), or "" when it is.
// `scale` is the scale factor the graph gives for the axis, <= 0 when none.
std::string nearest_upsample_reason(int64_t in, int64_t out, double scale);

std::string reshape_reason(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

const char* linear_input_name(Kind kind);

const char* linear_weight_name(Kind kind);

}  // namespace pteron::xnnpack::aot
