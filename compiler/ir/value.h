// Values: the tensors a graph computes on. Graph inputs, constants (weights), intermediates.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/ids.h"
#include "compiler/ir/tensor_spec.h"

namespace pteron::compiler::ir {

enum class ValueKind : uint8_t {
  Input,         // supplied by the caller at run time (a user input of the exported program)
  Constant,      // known at compile time (weights, buffers, folded results)
  Intermediate,  // produced by a node
  State,         // a mutable buffer: lives across calls, starts at (and resets to) `initial`
};

enum class ConstantKind : uint8_t {
  Parameter,       // nn.Parameter (state_dict)
  Buffer,          // registered buffer (persistent or not)
  TensorConstant,  // tensor lifted from forward() (e.g. torch.tensor([...]) in code)
  Folded,          // computed by the compiler (constant folding, fused weights)
};

// A constant's bytes, laid out as its Value's spec says (dim order included). Either a span
// into the memory-mapped .pt2 archive (no copy) or bytes the compiler made; `owner` keeps the
// memory alive either way, so copies of a Graph share it safely.
struct ConstantData {
  ConstantKind kind = ConstantKind::Folded;
  std::string fqn;         // state_dict / constants name ("layers.0.attn.in_proj_weight")
  bool persistent = true;  // buffers only: false for register_buffer(persistent=False)
  std::span<const uint8_t> bytes;
  std::shared_ptr<const void> owner;

  // Owned bytes for a constant the compiler made (kind Folded unless changed).
  static ConstantData owned(std::vector<uint8_t> data, std::string fqn = {});
};

struct Value {
  ValueId id = kNoValue;
  std::string name;  // unique in the graph; export's name ("p_fc1_weight", "addmm_1")
  TensorSpec spec;
  ValueKind kind = ValueKind::Intermediate;
  std::optional<ConstantData> constant;  // set exactly when kind == Constant
  // Set exactly when kind == State: the buffer's value at load and after a reset. Kept apart
  // from `constant` so no pass mistakes state for a weight it may fold or pack.
  std::optional<ConstantData> initial;
  NodeId producer = kNoNode;     // intermediates: the node computing it
  uint32_t producer_output = 0;  // ... and which of its outputs it is
  std::vector<NodeId> users;     // nodes reading it, each once, in insertion order

  bool is_input() const { return kind == ValueKind::Input; }
  bool is_constant() const { return kind == ValueKind::Constant; }
  bool is_intermediate() const { return kind == ValueKind::Intermediate; }
  bool is_state() const { return kind == ValueKind::State; }
};

}  // namespace pteron::compiler::ir
