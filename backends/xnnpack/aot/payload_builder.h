// Writes XNNPACK delegate payloads (backends/xnnpack/schema/xnnpack_payload.fbs). The
// compiler's XNNPACK lowering builds one payload per partition:
//
//   PayloadBuilder b;
//   TensorId x = b.add_tensor(DType::kFloat32, {1, 8, 8, 3});           // NHWC
//   TensorId w = b.add_constant(DType::kFloat32, {16, 3, 3, 3}, weights); // [OC, KH, KW, IC]
//   TensorId y = b.add_tensor(DType::kFloat32, {1, 8, 8, 16});
//   b.mark_external(x, ExternalKind::kInput, 0, {0, 2, 3, 1});  // arg 0: channels-last NCHW
//   b.mark_external(y, ExternalKind::kOutput, 1, {0, 2, 3, 1});
//   Conv2d conv{.kernel_height = 3, .kernel_width = 3, .group_input_channels = 3,
//               .group_output_channels = 16};
//   conv.padding = Padding::uniform(1);
//   if (std::string why = b.check_node(conv, {x, w}, {y}, OutputRange::relu()); !why.empty())
//     ... leave the op to portable kernels ...
//   b.add_node(conv, {x, w}, {y}, OutputRange::relu());
//   std::vector<uint8_t> payload = b.build();
//
// Builder misuse (an unknown tensor id, constant bytes of the wrong size) throws
// std::invalid_argument; whether XNNPACK accepts a node or payload is answered by check_node()
// and validate(), which return a reason string ("" = accepted).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace pteron::xnnpack {

using TensorId = uint32_t;

// Numbered as the schema's DataType.
enum class DType : uint8_t {
  kFloat32 = 1,
  kFloat16 = 2,
  kQInt8 = 3,    // per-tensor scale and zero point
  kQInt32 = 5,   // per-tensor scale, zero point 0 (bias of per-tensor weights)
  kQCInt8 = 6,   // per-channel scales (conv weights: channel_dim 0; depthwise: 3)
  kQCInt32 = 7,  // per-channel scales, channel_dim 0 (bias of per-channel weights)
};
size_t dtype_bytes(DType dtype);

struct Quant {
  float scale = 0.0f;
  int32_t zero_point = 0;
  std::vector<float> channel_scales;
  uint32_t channel_dim = 0;

  static Quant per_tensor(float scale, int32_t zero_point = 0) {
    return {scale, zero_point, {}, 0};
  }
  static Quant per_channel(std::vector<float> scales, uint32_t channel_dim = 0) {
    return {0.0f, 0, std::move(scales), channel_dim};
  }
};

enum class ExternalKind : uint8_t { kInput = 1, kOutput = 2 };

// ---- node attributes (see the schema for each operator's tensors and dtypes) ----

struct Padding {
  uint32_t top = 0, right = 0, bottom = 0, left = 0;
  static Padding uniform(uint32_t p) { return {p, p, p, p}; }
  static Padding symmetric(uint32_t h, uint32_t w) { return {h, w, h, w}; }
};

struct Conv2d {
  uint32_t kernel_height = 1, kernel_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  uint32_t dilation_height = 1, dilation_width = 1;
  uint32_t groups = 1;
  uint32_t group_input_channels = 0, group_output_channels = 0;
  Padding padding;
  bool same_padding = false;
};
struct DepthwiseConv2d {
  uint32_t kernel_height = 1, kernel_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  uint32_t dilation_height = 1, dilation_width = 1;
  uint32_t depth_multiplier = 1;
  uint32_t input_channels = 0;
  Padding padding;
  bool same_padding = false;
};
struct Deconv2d {
  uint32_t kernel_height = 1, kernel_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  uint32_t dilation_height = 1, dilation_width = 1;
  uint32_t adjustment_height = 0, adjustment_width = 0;
  uint32_t groups = 1;
  uint32_t group_input_channels = 0, group_output_channels = 0;
  Padding padding;
};
struct FullyConnected {
  bool transpose_weights = false;  // filter [in, out] instead of [out, in]
  bool reshape_2d = false;         // flatten the input to [numel / in, in]
};
enum class BinaryOp : uint8_t {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kMaximum,
  kMinimum,
  kSquaredDifference
};
struct Binary {
  BinaryOp op = BinaryOp::kAdd;
};
enum class UnaryOp : uint8_t {
  kAbs,
  kBankersRounding,
  kCeiling,
  kFloor,
  kNegate,
  kSquare,
  kSquareRoot,
  kHardswish,
  kSigmoid,
  kSoftmax,
  kConvert,
};
struct Unary {
  UnaryOp op = UnaryOp::kAbs;
};
// Written as a Clamp node whose output range is [min, max].
struct Clamp {
  float min = -INFINITY, max = INFINITY;
};
struct Elu {
  float alpha = 1.0f;
};
struct LeakyRelu {
  float negative_slope = 0.01f;
};
struct PRelu {};
struct MaxPool2d {
  uint32_t pooling_height = 1, pooling_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  uint32_t dilation_height = 1, dilation_width = 1;
  Padding padding;
  bool same_padding = false;
};
// With padding the divisor counts only input pixels (torch count_include_pad=False).
struct AvgPool2d {
  uint32_t pooling_height = 1, pooling_width = 1;
  uint32_t stride_height = 1, stride_width = 1;
  Padding padding;
  bool same_padding = false;
};
struct GlobalAvgPool2d {};
struct ConstantPad {
  std::vector<uint32_t> pre, post;
  float value = 0.0f;
};
struct StaticReshape {
  std::vector<uint32_t> new_shape;
};
struct ResizeBilinear2d {
  uint32_t new_height = 0, new_width = 0;
  bool align_corners = false;
  bool tensorflow_legacy = false;
};
struct DepthToSpace {
  uint32_t block_size = 2;
};

using NodeAttrs = std::variant<Conv2d, DepthwiseConv2d, Deconv2d, FullyConnected, Binary, Unary,
                               Clamp, Elu, LeakyRelu, PRelu, MaxPool2d, AvgPool2d, GlobalAvgPool2d,
                               ConstantPad, StaticReshape, ResizeBilinear2d, DepthToSpace>;
// "conv2d", "add", ... as runtime messages name them.
std::string node_kind_name(const NodeAttrs& attrs);

// Fused output clamp, in real values (ignored for Clamp nodes, whose bounds are the range).
struct OutputRange {
  float min = -INFINITY, max = INFINITY;
  static OutputRange none() { return {}; }
  static OutputRange relu() { return {0.0f, INFINITY}; }
  static OutputRange relu6() { return {0.0f, 6.0f}; }
};

// A constant a payload references by key; the key is a function of the bytes alone.
struct NamedConstant {
  std::string key;
  std::vector<uint8_t> bytes;
};

// "pteron.xnnpack.c.<64-bit FNV-1a of the bytes, hex>.<size>".
std::string constant_key(std::span<const uint8_t> bytes);

class PayloadBuilder {
 public:
  // A value computed inside the graph, or (after mark_external) a boundary value.
  TensorId add_tensor(DType dtype, std::vector<uint32_t> dims, Quant quant = {});
  // A constant; `data` holds exactly numel * dtype_bytes bytes (copied).
  TensorId add_constant(DType dtype, std::vector<uint32_t> dims, std::span<const uint8_t> data,
                        Quant quant = {});
  TensorId add_constant(DType dtype, std::vector<uint32_t> dims, std::span<const float> data,
                        Quant quant = {});
  TensorId add_constant(DType dtype, std::vector<uint32_t> dims, std::span<const int8_t> data,
                        Quant quant = {});
  TensorId add_constant(DType dtype, std::vector<uint32_t> dims, std::span<const int32_t> data,
                        Quant quant = {});
  // Binds a tensor to DelegateCall argument `arg_index`. `dim_order` is the dim order the
  // pteron tensor has (empty = contiguous): the tensor's sizes permuted by it are the dims
  // given to add_tensor, e.g. {0, 2, 3, 1} for a channels-last NCHW tensor of NHWC dims.
  void mark_external(TensorId id, ExternalKind kind, uint32_t arg_index,
                     std::vector<uint8_t> dim_order = {});
  // Appends a node (nodes run in the order added). Returns its index.
  size_t add_node(const NodeAttrs& attrs, std::vector<TensorId> inputs,
                  std::vector<TensorId> outputs, OutputRange range = {});

  // Number of DelegateCall arguments; by default 1 + the largest arg index marked.
  void set_num_args(uint32_t num_args) { num_args_ = num_args; }
  void set_fp16_inference(bool on) { fp16_inference_ = on; }

  // Would the runtime accept this node, with these tensors, as a payload of its own? Runs the
  // runtime's verifier and XNNPACK (define and create, no execution) on a one-node payload.
  // "" when accepted, else the reason.
  std::string check_node(const NodeAttrs& attrs, const std::vector<TensorId>& inputs,
                         const std::vector<TensorId>& outputs, OutputRange range = {}) const;
  // Same question for the whole payload as built so far.
  std::string validate() const;

  // The payload bytes: flatbuffer, padding, constant blob. Self-contained.
  std::vector<uint8_t> build() const;
  // The same graph with every constant of at least `min_bytes` moved out of the blob into
  // `named` (appended), the payload naming each by a key derived from its bytes: payloads of
  // one program that hold the same weights name the same key, and the program stores it once
  // (its named data). Loads only with the program's named data at hand.
  std::vector<uint8_t> build_sharing(size_t min_bytes, std::vector<NamedConstant>* named) const;

  size_t num_tensors() const { return tensors_.size(); }
  size_t num_nodes() const { return nodes_.size(); }

 private:
  struct TensorEntry {
    DType dtype;
    std::vector<uint32_t> dims;
    Quant quant;
    bool constant = false;
    std::vector<uint8_t> data;
    uint8_t external = 0;  // 0, ExternalKind
    uint32_t arg_index = 0;
    std::vector<uint8_t> dim_order;
  };
  struct NodeEntry {
    NodeAttrs attrs;
    std::vector<TensorId> inputs, outputs;
    OutputRange range;
  };

  const TensorEntry& tensor(TensorId id) const;
  std::vector<uint8_t> build_impl(size_t named_min_bytes, std::vector<NamedConstant>* named) const;
  size_t element_count(const std::vector<uint32_t>& dims) const;

  std::vector<TensorEntry> tensors_;
  std::vector<NodeEntry> nodes_;
  int64_t num_args_ = -1;
  bool fp16_inference_ = false;
};

// "" when the pteron runtime would load `payload` (verification and XNNPACK runtime creation
// succeed), else the reason.
std::string check_payload(std::span<const uint8_t> payload);

}  // namespace pteron::xnnpack
