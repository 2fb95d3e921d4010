// The TOSA lowering's internals (not a public header): the Lowerer, which lowers one region
// of IR nodes to one TOSA graph, and the helpers its op families share. The public API is
// aot/tosa_lowering.h; each op family's members are defined in the file named in the class.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "backends/tosa/aot/tosa_lowering.h"
#include "backends/tosa/aot/tosa_quant.h"
#include "backends/tosa/aot/tosa_writer.h"
#include "compiler/compile_error.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"
#include "compiler/passes/activation_bounds.h"
#include "compiler/quantize/qparams.h"

namespace pteron::tosa_aot::detail {

using compiler::activation_bounds;

namespace ir = compiler::ir;
namespace ops = compiler::ops;
using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::ScalarType;
using ir::ValueId;
using tosa::DType;
using tosa::Op;

inline constexpr ir::OpName kQuant = ops::quantized_decomposed::quantize_per_tensor;
inline constexpr ir::OpName kDequant = ops::quantized_decomposed::dequantize_per_tensor;
inline constexpr ir::OpName kDequantChannel = ops::quantized_decomposed::dequantize_per_channel;

// TOSA 1.0 level 8K: tensors of rank 6 at most, kernels and strides up to 8192.
inline constexpr size_t kMaxRank = 6;
inline constexpr int64_t kMaxKernel = 8192;

// NCHW logical dim d sits at this position of an NHWC tensor.
inline constexpr int kNhwcPos[4] = {0, 3, 1, 2};

// Why a node (or region) cannot be lowered: the compiler's refusal type, caught at the API
// boundary (lower() below); every other exception is an internal error.
using compiler::Refusal;
using compiler::refuse;

// A TOSA tensor standing for an IR value. `nhwc`: the IR value is 4-D NCHW and the TOSA tensor
// holds it as NHWC. `quant`: the IR value is float (or int8) and the tensor holds its int8
// quantization with (scale, zp).
struct TVal {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::FP32;
  bool nhwc = false;
  bool quant = false;
  double scale = 1;
  int32_t zp = 0;
};

using compiler::QParams;

// ---- helpers.cpp: shapes, arguments, constants, op kinds ----------------------------------

using ir::is_op;
using ir::numel;
using ir::shape_str;
// Elements of a constant in logical (row-major) order as doubles, whatever its dim order.
std::vector<double> constant_numbers(const Graph& g, ValueId v);
std::vector<int64_t> int_list(const ir::Argument& a);
std::vector<int64_t> pair_arg(const ir::Argument& a, int64_t fill);
int64_t norm_dim(int64_t d, size_t rank);
std::vector<uint8_t> f32_bytes(float x);
bool is_view_op(const std::string& op);
bool is_permute_op(const std::string& op);
// Ops whose INT lowering ends in a RESCALE from int32, so a relu/hardtanh/clamp after them
// becomes the clamp of that RESCALE's int8 result.
bool fuses_activation(const std::string& op);
bool is_graph_output(const Graph& g, ValueId v);

// ---- quantization.cpp: Q/DQ parameters ----------------------------------------------------

using compiler::per_tensor_qparams;
std::string qdq_reason(const Node& n);
int8_t quantize_value(double x, double scale, int64_t zp);

// ---- lowerer.cpp: one region to one TOSA graph ---------------------------------------------

// Lowers `nodes` (one region, topological order); a refusal is ok = false with the reason.
TosaLowering lower(const Graph& graph, const std::vector<NodeId>& nodes, TosaProfile profile,
                   bool check_only);

class Lowerer {
 public:
  // `check_only`: the support checker's run; weights are not read or written and nothing is
  // serialized (a big linear layer is checked without copying its weights).
  Lowerer(const Graph& g, const std::vector<NodeId>& nodes, TosaProfile profile, bool check_only);
  TosaLowering run();
  const Node* current() const { return current_; }

 private:
  bool is_int() const { return profile_ == TosaProfile::Int; }
  bool is_input_name(const std::string& name) const { return input_names_.count(name) != 0; }

  // The quantize taking node `n`'s output (possibly through a relu/hardtanh/clamp when
  // `fuse`): its parameters, the activation's int8 bounds, and the nodes the lowering of `n`
  // absorbs.
  struct OutQuant {
    QParams p;
    int64_t lo = -128, hi = 127;
    ValueId value = ir::kNoValue;  // the quantize's (int8) output
  };

  struct Weight {
    std::vector<double> values;  // logical order; int8 values in INT, floats in FP
    std::vector<int64_t> sizes;
    std::vector<double> scales;  // INT: per output channel (dim 0)
    int32_t zp = 0;
  };

  // Window geometry along one axis: TOSA needs (in - 1 + pad_a + pad_b - (k - 1) * dil) to be a
  // multiple of the stride, ending on the last output; trims pad_b or crops the input.
  struct Axis {
    int64_t pad_a, pad_b, crop;
  };

  // One axis of TOSA RESIZE: output index o reads source coordinate (o * d + offset) / n, and
  // border makes (in - 1) * n - offset + border = (out - 1) * d.
  struct ResizeAxis {
    int64_t n, d, offset, border;
  };

  // lowerer.cpp: the region's boundary, tensor plumbing and per-node dispatch
  TosaIo add_region_input(ValueId v);
  TosaIo add_region_output(ValueId v);
  static std::vector<int64_t> to_nhwc_shape(const std::vector<int64_t>& s);
  void check_rank(const std::vector<int64_t>& s, const std::string& what);
  std::string base() const;
  TVal tensor(std::vector<int64_t> shape, DType dtype, const TVal& like);
  TVal get(ValueId v);
  TVal operand(ValueId v);
  TVal transpose(const TVal& in, const std::vector<int32_t>& perms, std::vector<int64_t> out_shape,
                 bool out_nhwc);
  TVal to_nhwc(const TVal& in);
  TVal to_logical(const TVal& in);
  TVal reshape(const TVal& in, const std::vector<int64_t>& shape);
  void lower_node(const Node& n);
  void fp_only(const char* what);

  // quantization.cpp: INT rescaling, output quantization, Q/DQ nodes, weights and biases
  std::string zp_const(DType dtype, int32_t zp);
  TVal rescale(const TVal& in, const std::vector<double>& factors, int32_t in_zp, int32_t out_zp,
               DType out_dtype);
  TVal requantize(const TVal& in, double scale, int32_t zp);
  TVal clamp_i8(const TVal& in, int64_t lo, int64_t hi);
  const Node* only_user(ValueId v) const;
  OutQuant out_quant(const Node& n, bool fuse);
  void bind(const Node& n, TVal t, const OutQuant* q);
  void bind_shared(const Node& n, TVal t);
  void dequantize(const Node& n);
  void quantize(const Node& n);
  Weight weight(ValueId v);
  std::vector<double> bias(const ir::Argument& a, size_t channels, double in_scale,
                           const Weight& w);

  // conv_pool.cpp: convolution and pooling
  TVal conv_core(const Node& n, const TVal& x_nhwc, const Weight& w, const ir::Argument& bias_arg,
                 bool depthwise, int64_t multiplier, std::vector<int32_t> pad,
                 std::vector<int32_t> stride, std::vector<int32_t> dilation,
                 std::vector<int64_t> out_nhwc, const OutQuant* q);
  TVal crop_nhwc(const TVal& in, int64_t rows, int64_t cols);
  static Axis fit_axis(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dil,
                       int64_t pad_a, int64_t pad_b);
  void conv(const Node& n);
  void max_pool(const Node& n);
  TVal avg_pool_op(TVal x, std::vector<int64_t> k, std::vector<int64_t> stride,
                   std::vector<int32_t> pad, std::vector<int64_t> out_nhwc, const OutQuant* q);
  TVal global_mean_int(const TVal& x, const OutQuant& q);
  void avg_pool(const Node& n);
  void global_pool(const Node& n, const std::string& op);

  // linear_matmul.cpp: linear layers and matrix products
  void linear(const Node& n);
  void matmul(const Node& n, const std::string& op);

  // elementwise.cpp: binary ops, clamps, FP operands
  TVal clamp_f32(const TVal& in, double lo, double hi);
  std::pair<TVal, TVal> align(TVal a, TVal b, const std::vector<int64_t>& la,
                              const std::vector<int64_t>& lb, size_t rank);
  void binary(const Node& n, const std::string& op);
  void activation(const Node& n);
  TVal fp_operand(const ir::Argument& a, std::vector<int64_t>* logical);
  TVal mul_fp(const TVal& a, const TVal& b, std::vector<int64_t> shape);
  TVal binary_fp(Op op, const TVal& a, const TVal& b, std::vector<int64_t> shape);
  void divide(const Node& n);
  void where(const Node& n);

  // shape_ops.cpp: views, permutes, cat, pad, split, resize
  TVal pad_nhwc(const TVal& x, int64_t top, int64_t bottom, int64_t left, int64_t right);
  TVal pad_tensor(const TVal& x, const std::vector<int64_t>& padding, double value);
  void view(const Node& n);
  void permute(const Node& n, const std::string& op);
  void cat(const Node& n);
  enum class PadMode { Constant, Reflect, Replicate };
  TVal slice_axis(const TVal& x, size_t axis, int64_t begin, int64_t size);
  TVal pad_edges(const TVal& x, size_t axis, int64_t before, int64_t after, bool reflect);
  void pad(const Node& n, PadMode mode);
  ResizeAxis resize_axis(int64_t in, int64_t out, bool bilinear, bool align);
  void resize(const Node& n, bool bilinear);
  void split(const Node& n);

  // softmax_tables.cpp: softmax and TABLE-based nonlinearities
  void softmax(const Node& n);
  void softmax_int(const Node& n, int64_t dim);
  void sigmoid_tanh(const Node& n, const std::string& op);
  template <typename F>
  void table_int(const Node& n, F f);
  void gelu(const Node& n);
  void pointwise(const Node& n, const std::string& op);

  // normalization.cpp: layer norm and unfolded batch norm
  void layer_norm(const Node& n);
  void batch_norm(const Node& n);

  const Graph& g_;
  std::vector<NodeId> nodes_;
  TosaProfile profile_;
  std::unordered_set<NodeId> in_region_;
  std::unordered_set<NodeId> consumed_;
  std::unordered_map<ValueId, TVal> vals_;
  std::unordered_set<std::string> output_names_, input_names_;
  bool check_only_ = false;
  TosaWriter w_;
  const Node* current_ = nullptr;
};

}  // namespace pteron::tosa_aot::detail
