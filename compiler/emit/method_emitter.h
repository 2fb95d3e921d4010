// The emitter of one ExecutionPlan (internal to compiler/emit): program_emitter.cpp drives it
// per method; method_emitter.cpp builds values, kernel and delegate calls;
// method_emitter_control_flow.cpp inlines control-flow subgraphs between JumpFalse instructions.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/emit/constant_table.h"
#include "compiler/emit/program_emitter.h"
#include "compiler/emit/pte_writer.h"
#include "compiler/emit/sym_prologue.h"
#include "schema/program_generated.h"

namespace pteron::compiler::detail {

using flatbuffers::Offset;

// The mutable data segment: the initial values of the program's state (mutable buffers), one
// entry per buffer name, so methods sharing a buffer share its entry. As in ExecuTorch, entry 0
// is reserved and a planned tensor with data_buffer_idx > 0 is loaded from entry
// data_buffer_idx of mutable_data_segments[0] at method load (and on reset).
class MutableTable {
 public:
  static constexpr uint64_t kAlignment = 16;
  MutableTable() { offsets_.push_back(0); }
  uint32_t add(const std::string& fqn, std::span<const uint8_t> bytes) {
    auto [it, inserted] = index_.try_emplace(fqn, static_cast<uint32_t>(offsets_.size()));
    if (!inserted) return it->second;
    size_ = (size_ + kAlignment - 1) / kAlignment * kAlignment;
    offsets_.push_back(size_);
    pieces_.pieces.push_back({size_, bytes});
    size_ += bytes.size();
    return it->second;
  }
  bool empty() const { return offsets_.size() == 1; }
  const std::vector<uint64_t>& offsets() const { return offsets_; }
  SegmentPieces pieces() const {
    SegmentPieces p = pieces_;
    p.size = size_;
    return p;
  }

 private:
  std::map<std::string, uint32_t> index_;
  std::vector<uint64_t> offsets_;
  SegmentPieces pieces_;
  uint64_t size_ = 0;
};

// What every instruction of one ExecutionPlan shares, its control flow's subgraphs' included: the
// values table, the literals in it, the operators and the delegates.
struct PlanTables {
  std::vector<Offset<fb::EValue>> values;
  std::map<int64_t, int32_t> literal_ints;
  std::map<uint64_t, int32_t> literal_doubles;
  int32_t literal_bools[2] = {-1, -1};
  std::map<std::vector<int64_t>, int32_t> literal_int_lists;
  int32_t none = -1;
  std::vector<std::pair<std::string, std::string>> operators;
  std::map<std::pair<std::string, std::string>, int32_t> operator_index;
  std::vector<const LoweredDelegate*> delegates;  // the method's, then its subgraphs', in order
  size_t constants_used = 0;
  size_t delegate_calls = 0;
};

// Builds one ExecutionPlan; values are created on first use, in execution order. A control-flow
// node's subgraph (torch.cond's branch, while_loop's cond and body, scan's step) is emitted by
// an emitter of its own over the same tables, its inputs bound to the node's values.
class MethodEmitter {
 public:
  // `first_segment`: the program segment index this method's first delegate payload gets.
  MethodEmitter(flatbuffers::FlatBufferBuilder& b, const MethodToEmit& m, ConstantTable& constants,
                MutableTable& mutables, uint32_t first_segment)
      : MethodEmitter(b, m, constants, mutables, first_segment, own_tables_) {}

  Offset<fb::ExecutionPlan> emit();
  size_t values() const { return t_.values.size(); }
  size_t instructions() const { return instructions_; }
  size_t constants_used() const { return t_.constants_used; }
  size_t delegate_calls() const { return t_.delegate_calls; }
  // Every delegate of the plan, its subgraphs' included, by the index its calls name.
  const std::vector<const LoweredDelegate*>& delegates() const { return t_.delegates; }
  // Per instruction emit() wrote, where it comes from.
  const std::vector<InstructionOrigin>& origins() const { return origins_; }

 private:
  MethodEmitter(flatbuffers::FlatBufferBuilder& b, const MethodToEmit& m, ConstantTable& constants,
                MutableTable& mutables, uint32_t first_segment, PlanTables& tables);

  // ---- Values (method_emitter.cpp) ----------------------------------------------------------
  int32_t add(fb::KernelTypes type, Offset<void> payload);
  int32_t add_int(int64_t v);  // a value of its own, which instructions may write
  // Literal arguments are read-only, so equal ones share one value: a loaded method keeps an
  // EValue (16 bytes on a 32-bit device) per value, and convolutions repeat the same strides,
  // paddings, zero points and activation bounds. Never for the prologue's Int slots (prim ops
  // write them) or anything a kernel writes.
  int32_t literal_int(int64_t v);
  int32_t literal_double(double v);
  int32_t literal_bool(bool v);
  int32_t literal_int_list(const std::vector<int64_t>& list);
  int32_t none();
  int32_t tensor_value(ir::ValueId id);
  int32_t argument(const ir::Argument& a, const ir::Node& node, const std::string& name);
  int32_t output_value(const ir::Node& node, size_t i);
  int32_t slot_value(int slot);

  // ---- Instructions (method_emitter.cpp) ----------------------------------------------------
  // Appends this method's (or subgraph's) instructions to `out`, whose size is the index the
  // first of them gets.
  void emit_instructions(std::vector<Offset<fb::Instruction>>& out);
  Offset<fb::Instruction> kernel_call(const ir::Node& node);
  Offset<fb::Instruction> delegate_call(int index);
  Offset<fb::Instruction> sym_call(const SymCall& call);
  Offset<fb::Instruction> call(const std::string& name, const std::string& overload,
                               const std::vector<int32_t>& args);
  // An ExecuTorch prim op on ints: a (op) b into out.
  Offset<fb::Instruction> prim_call(const std::string& name, int32_t a, int32_t b, int32_t out);
  Offset<fb::Instruction> jump_false(int32_t cond_value, size_t destination);
  // aten::clone.out(src, memory_format=None, out=dst): resizes dst to src's sizes.
  Offset<fb::Instruction> copy_call(int32_t src, int32_t dst);
  int32_t operator_index(const std::string& name, const std::string& overload);

  // ---- Control flow (method_emitter_control_flow.cpp) ----------------------------------------
  // The `count` compiled subgraphs of control-flow node `node`, each taking `inputs` values.
  const std::vector<MethodToEmit>& subgraphs(const ir::Node& node, size_t count,
                                             size_t inputs) const;
  [[noreturn]] void does_not_fit(const ir::Node& node) const;
  // Appends `sub`'s instructions to `out`, its inputs bound to this plan's values `inputs`;
  // returns its emitter, which knows the values of its outputs.
  std::unique_ptr<MethodEmitter> inline_graph(const MethodToEmit& sub,
                                              const std::vector<int32_t>& inputs,
                                              std::vector<Offset<fb::Instruction>>& out);
  std::vector<int32_t> tensor_values(const std::vector<ir::ValueId>& ids);
  // torch.cond as ExecuTorch's emitter writes it: JumpFalse(pred) to the false branch, the true
  // branch, JumpFalse(false) past the false branch, the false branch. Each branch ends copying
  // its results into the node's outputs (clone.out), so the outputs' memory is the node's own
  // whichever branch ran.
  void cond(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out);
  // while_loop(cond, body, carried, additional): the node's outputs hold the carried values
  // (copied in from the carried inputs first); cond runs on them, JumpFalse(its result) leaves
  // the loop, body runs and its results are copied into the outputs (after the whole body, which
  // may still read the old values), JumpFalse(false) goes back to cond.
  void while_loop(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out);
  // scan / map as ExecuTorch's emitter writes them: the node's first outputs hold the carry
  // (copied in from init), a counter over the rows; per row, select_copy of each input's row
  // into its buffer (the node's last outputs), the function's instructions, its carry results
  // copied into the carry, its other results into their row of the stacked outputs
  // (et_copy_index), the counter advanced and compared with the number of rows (the node's `rows`
  // argument: a literal, or a size read each call), JumpFalse back. At least one row: the loader
  // refuses zero, and puts a check_size before a dynamic count's loop.
  void scan(const ir::Node& node, std::vector<Offset<fb::Instruction>>& out);

  flatbuffers::FlatBufferBuilder& b_;
  const MethodToEmit& m_;
  const ir::Graph& g_;
  ConstantTable& constants_;
  MutableTable& mutables_;
  PlanTables own_tables_;  // the plan's, in the emitter of the method itself
  PlanTables& t_;
  std::unordered_map<ir::ValueId, int32_t> tensor_index_;
  // Static values a kernel resizes all the same: a scan's stacked outputs, which ExecuTorch's
  // et_copy_index resizes to the rows written so far (emitted DYNAMIC_BOUND, as ExecuTorch does).
  std::set<ir::ValueId> resized_;
  size_t delegate_base_ = 0;  // the plan's index of this method's (branch's) first delegate
  size_t instructions_ = 0;
  uint32_t first_segment_ = 1;
  std::unique_ptr<SymPrologue> prologue_;
  std::vector<int32_t> slot_value_;
  std::vector<InstructionOrigin> origins_;
};

}  // namespace pteron::compiler::detail
