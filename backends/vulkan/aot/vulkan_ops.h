// What the Vulkan delegate runs each supported op as (Kind), and the argument readers that the
// support rules (vulkan_support.cpp) and the payload lowering (vulkan_lowering.cpp) share, so
// that both read an op's arguments the same way. Internal to the Vulkan partitioner.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "backends/vulkan/runtime/payload_format.h"
#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace pteron::vulkan {

enum class Kind {
  Linear,
  AddMm,
  Mm,
  Add,
  Sub,
  Mul,
  Relu,
  Clamp,
  Hardtanh,
  Softmax,
  Conv,
  LayerNorm,
  Mean,
  Reshape,
  Permute,
  Bmm,
  Div,
  Unary,
  MaxPool,
  AvgPool,
  AdaptiveAvgPool,
  Cat,
  Slice,
  Select,
  Embedding,
  Transpose,
  UpsampleNearest,
  UpsampleBilinear,
  UpsampleAntialias,
  ConstantPad,
  ReflectionPad,
  ReplicationPad,
};

// The support table: op -> what the payload runs it as. Everything fp32, contiguous.
const compiler::ir::OpTable<Kind>& op_kinds();

// Unary ops (Kind::Unary) -> the payload's unary function.
const compiler::ir::OpTable<fb::UnaryOp>& unary_ops();

// An int list attribute as [h, w]: one entry repeats, an empty list is `dflt`.
std::vector<int64_t> pair_of(const compiler::ir::Argument& a, std::vector<int64_t> dflt);

inline int64_t norm_dim(int64_t d, int64_t rank) { return d < 0 ? d + rank : d; }

// Whether the node's op has an argument named `name` (a rule for some overloads only).
inline bool has_arg(const compiler::ir::Node& n, std::string_view name) {
  return n.schema != nullptr && n.schema->arg_index(name) >= 0;
}

// An upsample's scale_factors [h, w] as the payload carries them: 0 where none was given (an
// output_size) or the given one is <= 0 (ATen then uses input / output too). Refuses
// (compiler::refuse) a list of the wrong length or a non-finite factor.
std::vector<double> upsample_scales(const compiler::ir::Node& n);

// A pad node's [left, right, top, bottom] (torch's order: last dim first), or a reason in
// `why`. constant_pad_nd may list more dims as long as their pads are 0.
std::vector<int64_t> pads_of(const compiler::ir::Graph& g, const compiler::ir::Node& n,
                             std::string* why);

}  // namespace pteron::vulkan
