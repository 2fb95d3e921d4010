// The Cortex-M lowering's internals (not a public header): the Lowering, which rewrites a
// PT2E-quantized graph onto cortex_m:: int8 kernels, and the Q/DQ pattern helpers its op
// families share. The public API is aot/lower_cortex_m.h; each family's members are defined in
// the file named in the class.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/activation_bounds.h"
#include "compiler/quantize/qparams.h"
#include "kernels/cortex_m/aot/lower_cortex_m.h"
#include "kernels/cortex_m/util/requantize.h"

namespace pteron::cortex_m::aot::detail {

namespace ir = compiler::ir;
namespace ops = compiler::ops;
using compiler::activation_bounds;
using ir::Argument;
using ir::Graph;
using ir::NewValue;
using ir::Node;
using ir::NodeId;
using ir::TensorRef;
using ir::TensorSpec;
using ir::ValueId;

inline constexpr ir::OpName kQuant = ops::quantized_decomposed::quantize_per_tensor;
inline constexpr ir::OpName kDequant = ops::quantized_decomposed::dequantize_per_tensor;
inline constexpr ir::OpName kDequantChannel = ops::quantized_decomposed::dequantize_per_channel;
// cortex_m ops the rewrites look for (their schemas: cortex_m_schemas.cpp).
inline constexpr ir::OpName kQuantizedConv2d{"cortex_m::quantized_conv2d_nhwc.default"};
inline constexpr ir::OpName kQuantizedDepthwiseConv2d{
    "cortex_m::quantized_depthwise_conv2d_nhwc.default"};

using compiler::QParams;

// ---- patterns.cpp: the Q/DQ patterns around an op ------------------------------------------

bool same_qparams(const QParams& a, const QParams& b);
using compiler::per_tensor_qparams;
using ir::is_op;
// A reshape: view (emitted as view_copy) or view_copy, whose int8 form moves bytes unchanged.
bool is_view(const Node& n);

// An int8 activation: the input of the per-tensor dequantize that produced `v`.
struct QuantInput {
  ValueId q = ir::kNoValue;
  QParams p;
};
std::optional<QuantInput> dequantized(const Graph& g, ValueId v);

// The quantize that takes `node`'s result, possibly through a fusable activation.
struct QuantOutput {
  NodeId quant = ir::kNoNode;
  QParams p;
  int64_t act_min = -128, act_max = 127;
};

int64_t quantize_bound(double x, const QParams& p);
// The single user of `v`, if `v` is not a graph output.
const Node* only_user(const Graph& g, ValueId v);
std::optional<QuantOutput> quantized_output(const Graph& g, const Node& n, bool fuse_activation);

// A float/double/int constant as doubles (scales, zero points, float biases).
std::optional<std::vector<double>> constant_as_doubles(const Graph& g, ValueId v);

struct QuantWeight {
  std::vector<int8_t> data;  // as the float op's weight is laid out (contiguous)
  std::vector<int64_t> sizes;
  std::vector<double> scales;  // one per output channel (dim 0)
  int64_t zp = 0;              // per-tensor weights only; per-channel must be symmetric
};

// A weight given as dequantize(int8 constant), per tensor or per channel on axis 0.
std::optional<QuantWeight> quantized_weight(const Graph& g, ValueId v);
// int32 bias: a float constant scaled by input_scale * weight_scale[c], or dequantize(int32).
std::optional<std::vector<int32_t>> quantized_bias(const Graph& g, const Argument& arg,
                                                   double input_scale, const QuantWeight& w);
// Per-channel requantisation of input_scale * weight_scale[c] / output_scale.
std::optional<std::pair<std::vector<int32_t>, std::vector<int32_t>>> channel_requant(
    double input_scale, const std::vector<double>& weight_scales, double output_scale);

// ---- building the rewritten graph ----------------------------------------------------------

template <typename T>
ValueId add_constant(Graph& g, const std::string& base, ScalarType dtype,
                     std::vector<int64_t> sizes, const std::vector<T>& data) {
  std::vector<uint8_t> bytes(data.size() * sizeof(T));
  std::memcpy(bytes.data(), data.data(), bytes.size());
  return g.add_constant(g.unique_name(base), TensorSpec::contiguous(dtype, std::move(sizes)),
                        ir::ConstantData::owned(std::move(bytes)));
}

inline std::vector<int64_t> ints(std::initializer_list<int64_t> v) {
  return std::vector<int64_t>(v);
}

inline std::vector<int64_t> pair_arg(const Argument& a, int64_t fill) {
  std::vector<int64_t> v =
      a.is<std::vector<int64_t>>() ? a.get<std::vector<int64_t>>() : std::vector<int64_t>{};
  if (v.empty()) return {fill, fill};
  if (v.size() == 1) return {v[0], v[0]};
  return v;
}

class Lowering {
 public:
  Lowering(Graph& g, const std::unordered_set<NodeId>& delegated, bool dsp_paths)
      : g_(g), delegated_(delegated), dsp_paths_(dsp_paths) {}
  CortexMLoweringReport run();

 private:
  // lowering.cpp: the driver and the node-building helpers
  bool near_delegated(NodeId id) const;
  bool keep(std::string reason);
  ValueId new_node(const char* name, std::vector<Argument> args, TensorSpec spec, const Node& from,
                   NodeId before);
  void finish(const QuantOutput& out, ValueId result);
  TensorSpec int8_spec(std::vector<int64_t> sizes);
  ValueId to_nhwc(ValueId x, const Node& from, NodeId before);
  ValueId to_nchw(ValueId x, const Node& from, NodeId before);

  // conv_pool.cpp: convolutions and pools
  bool conv(const Node& n);
  bool max_pool(const Node& n);
  bool avg_pool(const Node& n);

  // linear.cpp: linear layers
  bool matmul(const Node& n);
  bool linear(const Node& n, const Argument& input, ValueId weight, const Argument& bias_arg_in);

  // elementwise.cpp: add, mul, clamp, tables of unary ops
  bool add(const Node& n);
  bool mul(const Node& n);
  bool clamp(const Node& n);
  std::vector<NodeId> table_cone(const Node& root, ValueId* source) const;
  std::optional<std::vector<int8_t>> table_of(const std::vector<NodeId>& cone,
                                              ValueId dequantized_value, const QuantOutput& out);
  bool table(const Node& root);

  // softmax.cpp: softmax
  bool softmax(const Node& n);

  // shape_ops.cpp: permute, pad, view
  bool permute(const Node& n);
  bool pad(const Node& n);
  bool view(const Node& n);
  int move_dequantize_past_views();

  // upsample.cpp: nearest and bilinear upsampling
  bool upsample(const Node& n, bool bilinear);

  // graph_rewrites.cpp: rewrites of the lowered graph
  void fold_pads_into_convs();
  void sink_transposes_through_elementwise();
  int fold_int8_functions_into_tables();
  int cancel_transposes();
  void fold_requantize_pairs();
  int convert_quant_nodes();

  // scratch.cpp: scratch buffers
  void plan_scratch();

  Graph& g_;
  const std::unordered_set<NodeId>& delegated_;
  const bool dsp_paths_;  // the kernels take their DSP paths (plan_scratch sizes for those)
  CortexMLoweringReport report_;
  std::string reason_;
};

}  // namespace pteron::cortex_m::aot::detail
