// Writes Vulkan delegate payloads (backends/vulkan/schema/vulkan_payload.fbs). The compiler's
// Vulkan lowering builds one payload per region:
//
//   PayloadBuilder b;
//   uint32_t x = b.add_input({4, 32}, 0);
//   uint32_t w = b.add_constant({16, 32}, weights);
//   uint32_t y = b.add_output({4, 16}, 1);
//   b.add_node(fb::OpType::Linear, {x, w}, y, {.output_min = 0.0f});  // linear + relu
//   std::vector<uint8_t> payload = b.build();
//
// Builder misuse (an unknown tensor, constant data of the wrong size) throws
// std::invalid_argument. The runtime's verifier decides whether a payload is valid.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "backends/vulkan/runtime/payload_format.h"

namespace pteron::vulkan {

struct NodeAttrs {
  float alpha = 1.0f;
  float output_min = -INFINITY;
  float output_max = INFINITY;
  std::vector<uint32_t> stride, padding, dilation;  // Conv2d: [h, w]
  uint32_t groups = 1;                              // Conv2d
  float eps = 1e-5f;                                // LayerNorm
  bool has_weight = false, has_bias = false;        // LayerNorm
  std::vector<uint32_t> perm;                       // Permute
  fb::UnaryOp unary = fb::UnaryOp::Sigmoid;         // Unary
  fb::PoolType pool = fb::PoolType::Max;            // Pool2d
  std::vector<uint32_t> kernel;                     // Pool2d: [h, w]
  bool count_include_pad = true;                    // Pool2d (Average)
  uint32_t divisor = 0;                             // Pool2d (Average): 0 = none
  uint32_t axis = 0;                                // Cat, Slice
  uint32_t start = 0, step = 1;                     // Slice
  fb::ResizeMode resize = fb::ResizeMode::Nearest;  // Upsample
  bool align_corners = false;                       // Upsample (Bilinear)
  std::vector<double> scales;                       // Upsample: [h, w], 0 = none
  std::vector<int32_t> pads;                        // Pad: [left, right, top, bottom]
  fb::PadMode pad_mode = fb::PadMode::Constant;     // Pad
  float pad_value = 0.0f;                           // Pad (Constant)
};

// One size expression in the payload's postfix form (schema SizeExpr): ops[i] with args[i].
struct SizeProgram {
  std::vector<fb::SizeOp> ops;
  std::vector<int64_t> args;
  static SizeProgram constant(int64_t v) { return {{fb::SizeOp::Const}, {v}}; }
  static SizeProgram symbol(uint32_t index) { return {{fb::SizeOp::Symbol}, {index}}; }
};

class PayloadBuilder {
 public:
  // Internal to the region. Float32 or Float16.
  uint32_t add_tensor(std::vector<uint32_t> dims, fb::DataType dtype = fb::DataType::Float32);
  // Stored as `dtype` (Float16: rounded to nearest even).
  uint32_t add_constant(std::vector<uint32_t> dims, std::span<const float> data,
                        fb::DataType dtype = fb::DataType::Float32);
  // Float32 or (embedding indices) Int64.
  uint32_t add_input(std::vector<uint32_t> dims, uint32_t arg_index,
                     fb::DataType dtype = fb::DataType::Float32);
  uint32_t add_output(std::vector<uint32_t> dims, uint32_t arg_index);
  void add_node(fb::OpType op, std::vector<uint32_t> inputs, uint32_t output, NodeAttrs attrs = {});
  // Bounded dynamic shapes: symbol `index` (returned, in order of addition) is dimension `dim`
  // of input argument `arg_index`, within [min, max].
  uint32_t add_symbol(uint32_t arg_index, uint32_t dim, uint32_t min, uint32_t max);
  // Tensor `id`'s size expressions, one per dim (its dims stay the upper bounds).
  void set_sym_dims(uint32_t id, std::vector<SizeProgram> dims);
  // The debug id (the graph node's position in its region) of the nodes added from now on;
  // -1 (the default) for nodes that stand for no graph node.
  void set_debug_id(int32_t id) { debug_id_ = id; }
  // false: the runtime runs this (fp16) region's storage-only shader variants.
  void set_fp16_arithmetic(bool allowed) { fp16_arithmetic_ = allowed; }
  // Serialises [flatbuffer][padding][constant blob].
  std::vector<uint8_t> build() const;

 private:
  struct TensorDef {
    std::vector<uint32_t> dims;
    fb::DataType dtype = fb::DataType::Float32;
    fb::ExternalKind external = fb::ExternalKind::Internal;
    uint32_t arg_index = 0;
    bool is_constant = false;
    uint64_t constant_offset = 0, constant_size = 0;
    std::vector<SizeProgram> sym_dims;
  };
  struct SymbolDef {
    uint32_t arg_index, dim, min, max;
  };
  struct NodeDef {
    fb::OpType op;
    std::vector<uint32_t> inputs;
    uint32_t output;
    NodeAttrs attrs;
    int32_t debug_id;
  };
  uint32_t add(TensorDef t);
  std::vector<TensorDef> tensors_;
  std::vector<NodeDef> nodes_;
  std::vector<SymbolDef> symbols_;
  std::vector<uint8_t> blob_;
  int32_t debug_id_ = -1;
  bool fp16_arithmetic_ = true;
};

}  // namespace pteron::vulkan
