#include "compiler/emit/program_emitter.h"

#include <bit>
#include <map>
#include <memory>

#include "compiler/compile_error.h"
#include "compiler/emit/constant_table.h"
#include "compiler/emit/pte_writer.h"
#include "compiler/emit/sym_prologue.h"
#include "compiler/ir/kernel_call_form.h"
#include "schema/program_generated.h"

namespace pteron::compiler {
namespace {

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

}  // namespace

std::vector<ir::NodeId> kernel_nodes(const MethodToEmit& m) {
  std::vector<ir::NodeId> out;
  if (m.steps.empty()) return m.graph->nodes();
  for (const Step& s : m.steps) {
    if (s.delegate < 0) out.push_back(s.node);
  }
  return out;
}

namespace {

// Builds one ExecutionPlan; values are created on first use, in execution order.
class MethodEmitter {
 public:
  // `first_segment`: the program segment index this method's first delegate payload gets.
  MethodEmitter(flatbuffers::FlatBufferBuilder& b, const MethodToEmit& m, ConstantTable& constants,
                MutableTable& mutables, uint32_t first_segment)
      : b_(b),
        m_(m),
        g_(*m.graph),
        constants_(constants),
        mutables_(mutables),
        first_segment_(first_segment) {}

  Offset<fb::ExecutionPlan> emit() {
    std::vector<int32_t> inputs, outputs;
    for (ir::ValueId v : g_.inputs()) inputs.push_back(tensor_value(v));
    std::vector<Offset<fb::Instruction>> instructions;
    // Symbolic ints first, as far as they read the inputs; one read from a data-dependent
    // output (nonzero's length) right after the instruction that produces it.
    prologue_ = std::make_unique<SymPrologue>(g_, kernel_nodes(m_));
    slot_value_.assign(prologue_->slots().size(), -1);
    SymSchedule schedule(g_, *prologue_, m_.view_sources);
    auto flush = [&] {
      for (const SymCall* call : schedule.ready()) instructions.push_back(sym_call(*call));
    };
    flush();
    auto kernel_step = [&](ir::NodeId n) {
      schedule.check_ready(g_.node(n));
      instructions.push_back(kernel_call(g_.node(n)));
      for (ir::ValueId v : g_.node(n).outputs) schedule.produced(v);
      flush();
    };
    if (m_.steps.empty()) {
      for (ir::NodeId n : g_.nodes()) kernel_step(n);
    } else {
      for (const Step& step : m_.steps) {
        if (step.delegate < 0) {
          kernel_step(step.node);
          continue;
        }
        instructions.push_back(delegate_call(step.delegate));
        for (ir::ValueId v : m_.delegates[static_cast<size_t>(step.delegate)].outputs)
          schedule.produced(v);
        flush();
      }
    }
    schedule.check_all_emitted();
    for (ir::ValueId v : g_.outputs()) outputs.push_back(tensor_value(v));
    auto chain = fb::CreateChain(b_, b_.CreateVector(inputs), b_.CreateVector(outputs),
                                 b_.CreateVector(instructions));
    std::vector<Offset<fb::Chain>> chains = {chain};
    std::vector<Offset<fb::Operator>> ops;
    for (const auto& [name, overload] : operators_) {
      ops.push_back(fb::CreateOperator(b_, b_.CreateString(name), b_.CreateString(overload)));
    }
    std::vector<int64_t> buffer_sizes = {0};
    buffer_sizes.insert(buffer_sizes.end(), m_.arena_sizes.begin(), m_.arena_sizes.end());
    instructions_ = instructions.size();
    std::vector<Offset<fb::BackendDelegate>> delegates;
    for (size_t d = 0; d < m_.delegates.size(); ++d) {
      const LoweredDelegate& del = m_.delegates[d];
      std::vector<Offset<fb::CompileSpec>> specs;
      for (const auto& [key, value] : del.compile_specs) {
        specs.push_back(fb::CreateCompileSpec(b_, b_.CreateString(key), b_.CreateVector(value)));
      }
      auto processed = fb::CreateBackendDelegateDataReference(
          b_, fb::DataLocation::SEGMENT, first_segment_ + static_cast<uint32_t>(d));
      delegates.push_back(fb::CreateBackendDelegate(b_, b_.CreateString(del.backend_id), processed,
                                                    b_.CreateVector(specs)));
    }
    return fb::CreateExecutionPlan(b_, b_.CreateString(m_.name), 0, b_.CreateVector(values_),
                                   b_.CreateVector(inputs), b_.CreateVector(outputs),
                                   b_.CreateVector(chains), b_.CreateVector(ops),
                                   b_.CreateVector(delegates), b_.CreateVector(buffer_sizes));
  }

  Offset<fb::Instruction> delegate_call(int index) {
    const LoweredDelegate& d = m_.delegates[static_cast<size_t>(index)];
    std::vector<int32_t> args;
    for (ir::ValueId v : d.inputs) args.push_back(tensor_value(v));
    for (ir::ValueId v : d.outputs) args.push_back(tensor_value(v));
    ++delegate_calls_;
    auto call = fb::CreateDelegateCall(b_, index, b_.CreateVector(args));
    return fb::CreateInstruction(b_, fb::InstructionArguments::DelegateCall, call.Union());
  }

  Offset<fb::Instruction> sym_call(const SymCall& call) {
    std::vector<int32_t> args;
    if (call.tensor != ir::kNoValue) args.push_back(tensor_value(call.tensor));
    for (int slot : call.operands) args.push_back(slot_value(slot));
    args.push_back(slot_value(call.out));
    const auto key = std::make_pair(call.op, call.overload);
    auto [it, inserted] = operator_index_.try_emplace(key, static_cast<int32_t>(operators_.size()));
    if (inserted) operators_.push_back(key);
    auto kc = fb::CreateKernelCall(b_, it->second, b_.CreateVector(args));
    return fb::CreateInstruction(b_, fb::InstructionArguments::KernelCall, kc.Union());
  }

  int32_t slot_value(int slot) {
    int32_t& index = slot_value_[static_cast<size_t>(slot)];
    if (index < 0) index = add_int(prologue_->slots()[static_cast<size_t>(slot)].value);
    return index;
  }

  size_t values() const { return values_.size(); }
  size_t instructions() const { return instructions_; }
  size_t constants_used() const { return constants_used_; }
  size_t delegate_calls() const { return delegate_calls_; }

 private:
  int32_t add(fb::KernelTypes type, Offset<void> payload) {
    values_.push_back(fb::CreateEValue(b_, type, payload));
    return static_cast<int32_t>(values_.size() - 1);
  }
  int32_t add_int(int64_t v) { return add(fb::KernelTypes::Int, fb::CreateInt(b_, v).Union()); }
  // Literal arguments are read-only, so equal ones share one value: a loaded method keeps an
  // EValue (16 bytes on a 32-bit device) per value, and convolutions repeat the same strides,
  // paddings, zero points and activation bounds. Never for the prologue's Int slots (prim ops
  // write them) or anything a kernel writes.
  int32_t literal_int(int64_t v) {
    auto [it, inserted] = literal_ints_.try_emplace(v, 0);
    if (inserted) it->second = add_int(v);
    return it->second;
  }
  int32_t literal_double(double v) {
    const auto key = std::bit_cast<uint64_t>(v);  // NaN payloads and -0.0 stay apart
    auto [it, inserted] = literal_doubles_.try_emplace(key, 0);
    if (inserted) it->second = add(fb::KernelTypes::Double, fb::CreateDouble(b_, v).Union());
    return it->second;
  }
  int32_t literal_bool(bool v) {
    int32_t& index = literal_bools_[v ? 1 : 0];
    if (index < 0) index = add(fb::KernelTypes::Bool, fb::CreateBool(b_, v).Union());
    return index;
  }
  int32_t literal_int_list(const std::vector<int64_t>& list) {
    auto [it, inserted] = literal_int_lists_.try_emplace(list, 0);
    if (inserted) {
      std::vector<int64_t> items;
      for (int64_t x : list) items.push_back(literal_int(x));
      it->second =
          add(fb::KernelTypes::IntList, fb::CreateIntList(b_, b_.CreateVector(items)).Union());
    }
    return it->second;
  }
  int32_t none() {
    if (none_ < 0) none_ = add(fb::KernelTypes::Null, fb::CreateNull(b_).Union());
    return none_;
  }

  int32_t tensor_value(ir::ValueId id) {
    if (auto it = tensor_index_.find(id); it != tensor_index_.end()) return it->second;
    const ir::Value& v = g_.value(id);
    const ir::TensorSpec& spec = v.spec;
    if (element_size(spec.dtype) == 0) {
      throw CompileError("value '" + v.name + "' has dtype " + ir::dtype_name(spec.dtype) +
                         ", which the runtime does not support");
    }
    std::vector<int32_t> sizes;
    for (int64_t s : spec.sizes) {
      if (s < 0 || s > INT32_MAX)
        throw CompileError("value '" + v.name + "' has a size beyond int32");
      sizes.push_back(static_cast<int32_t>(s));
    }
    uint32_t data_buffer_idx = 0;
    Offset<fb::AllocationDetails> alloc = 0;
    Offset<fb::ExtraTensorInfo> extra = 0;
    if (v.is_state()) {
      // Planned in the state arena and initialised from the mutable data segment at load.
      auto p = m_.placements.find(id);
      if (p == m_.placements.end())
        throw CompileError("internal: buffer '" + v.name + "' has no memory plan");
      alloc =
          fb::CreateAllocationDetails(b_, p->second.mem_id, static_cast<uint32_t>(p->second.offset),
                                      static_cast<uint32_t>(p->second.offset >> 32));
      data_buffer_idx = mutables_.add(v.initial->fqn, v.initial->bytes);
      extra = fb::CreateExtraTensorInfo(b_, 0, b_.CreateString(v.initial->fqn));
    } else if (v.is_constant()) {
      data_buffer_idx = constants_.add(v.constant->bytes);
      ++constants_used_;
    } else if (auto p = m_.placements.find(id); p != m_.placements.end()) {
      alloc =
          fb::CreateAllocationDetails(b_, p->second.mem_id, static_cast<uint32_t>(p->second.offset),
                                      static_cast<uint32_t>(p->second.offset >> 32));
    } else if (v.is_intermediate()) {
      throw CompileError("internal: value '" + v.name + "' has no memory plan");
    }
    // Dynamic tensors: sizes are the upper bounds; kernels resize them on every call.
    const auto dynamism = spec.is_dynamic() ? fb::TensorShapeDynamism::DYNAMIC_BOUND
                                            : fb::TensorShapeDynamism::STATIC;
    auto t = fb::CreateTensor(b_, static_cast<fb::ScalarType>(spec.dtype), 0,
                              b_.CreateVector(sizes), b_.CreateVector(spec.dim_order), false,
                              data_buffer_idx, alloc, 0, dynamism, extra);
    const int32_t index = add(fb::KernelTypes::Tensor, t.Union());
    tensor_index_[id] = index;
    return index;
  }

  int32_t argument(const ir::Argument& a, const ir::Node& node, const std::string& name) {
    switch (a.kind()) {
      case ir::ArgKind::None:
      case ir::ArgKind::Device:
        return none();
      case ir::ArgKind::Int:
        return literal_int(a.get<int64_t>());
      case ir::ArgKind::Float:
        return literal_double(a.get<double>());
      case ir::ArgKind::Bool:
        return literal_bool(a.get<bool>());
      case ir::ArgKind::String:
        return add(fb::KernelTypes::String,
                   fb::CreateString(b_, b_.CreateString(a.get<std::string>())).Union());
      case ir::ArgKind::ScalarType:
        return literal_int(static_cast<int64_t>(a.get<ir::ScalarType>()));
      case ir::ArgKind::MemoryFormat:
        return literal_int(static_cast<int64_t>(a.get<ir::MemoryFormat>()));
      case ir::ArgKind::Layout:
        return literal_int(static_cast<int64_t>(a.get<ir::Layout>()));
      case ir::ArgKind::Scalar: {
        const auto& s = a.get<ir::Scalar>().value;
        if (const auto* i = std::get_if<int64_t>(&s)) return literal_int(*i);
        if (const auto* d = std::get_if<double>(&s)) return literal_double(*d);
        return literal_bool(std::get<bool>(s));
      }
      case ir::ArgKind::IntList:
        // Int lists hold indices of Int values (ExecuTorch's encoding, for symbolic ints).
        return literal_int_list(a.get<std::vector<int64_t>>());
      case ir::ArgKind::SymInt:
        return slot_value(prologue_->slot(*a.get<ir::SymInt>().expr));
      case ir::ArgKind::SymIntList: {
        // Literal entries are Int values of their own; symbolic ones the prologue's results.
        std::vector<int64_t> items;
        for (const ir::SymIntItem& x : a.get<ir::SymIntList>().items)
          items.push_back(x.expr ? slot_value(prologue_->slot(*x.expr)) : literal_int(x.value));
        return add(fb::KernelTypes::IntList, fb::CreateIntList(b_, b_.CreateVector(items)).Union());
      }
      case ir::ArgKind::FloatList:
        return add(fb::KernelTypes::DoubleList,
                   fb::CreateDoubleList(b_, b_.CreateVector(a.get<std::vector<double>>())).Union());
      case ir::ArgKind::BoolList: {
        const auto& bools = a.get<std::vector<bool>>();
        std::vector<uint8_t> items(bools.begin(), bools.end());
        return add(fb::KernelTypes::BoolList,
                   fb::CreateBoolList(b_, b_.CreateVector(items)).Union());
      }
      case ir::ArgKind::Tensor:
        return tensor_value(a.tensor());
      case ir::ArgKind::TensorList: {
        std::vector<int32_t> items;
        for (ir::ValueId v : a.get<ir::TensorList>().ids) items.push_back(tensor_value(v));
        return add(fb::KernelTypes::TensorList,
                   fb::CreateTensorList(b_, b_.CreateVector(items)).Union());
      }
      case ir::ArgKind::OptionalTensorList: {
        std::vector<int32_t> items;
        for (ir::ValueId v : a.get<ir::OptionalTensorList>().ids) {
          items.push_back(v == ir::kNoValue ? -1 : tensor_value(v));
        }
        return add(fb::KernelTypes::OptionalTensorList,
                   fb::CreateOptionalTensorList(b_, b_.CreateVector(items)).Union());
      }
    }
    throw CompileError(node.describe() + ": argument '" + name + "' cannot be encoded");
  }

  Offset<fb::Instruction> kernel_call(const ir::Node& node) {
    const KernelCallForm form = kernel_call_form(node);
    std::vector<int32_t> args;
    for (const KernelArgSlot& slot : form.args) {
      switch (slot.source) {
        case KernelArgSlot::Source::NodeArg:
        case KernelArgSlot::Source::Default:
          args.push_back(argument(*slot.value, node, form.schema->op.str()));
          break;
        case KernelArgSlot::Source::Output:
          args.push_back(output_value(node, slot.output));
          break;
        case KernelArgSlot::Source::OutputList: {
          std::vector<int32_t> items;
          for (size_t i = 0; i < node.outputs.size(); ++i) items.push_back(output_value(node, i));
          args.push_back(add(fb::KernelTypes::TensorList,
                             fb::CreateTensorList(b_, b_.CreateVector(items)).Union()));
          break;
        }
      }
    }
    if (form.return_form == ReturnForm::RepeatArg) {
      args.push_back(args[form.return_arg]);
    } else if (form.return_form == ReturnForm::OutputTuple) {
      std::vector<int32_t> items;
      for (size_t i = 0; i < node.outputs.size(); ++i) items.push_back(output_value(node, i));
      args.push_back(add(fb::KernelTypes::TensorList,
                         fb::CreateTensorList(b_, b_.CreateVector(items)).Union()));
    }
    const ir::OpSchema* out = form.schema;
    const auto key = std::make_pair(out->op.ns + "::" + out->op.name, out->op.overload);
    auto [it, inserted] = operator_index_.try_emplace(key, static_cast<int32_t>(operators_.size()));
    if (inserted) operators_.push_back(key);
    auto call = fb::CreateKernelCall(b_, it->second, b_.CreateVector(args));
    return fb::CreateInstruction(b_, fb::InstructionArguments::KernelCall, call.Union());
  }

  int32_t output_value(const ir::Node& node, size_t i) {
    if (node.outputs[i] == ir::kNoValue) {
      throw CompileError(node.describe() + ": output " + std::to_string(i) + " is missing");
    }
    return tensor_value(node.outputs[i]);
  }

  flatbuffers::FlatBufferBuilder& b_;
  const MethodToEmit& m_;
  const ir::Graph& g_;
  ConstantTable& constants_;
  MutableTable& mutables_;
  std::vector<Offset<fb::EValue>> values_;
  std::unordered_map<ir::ValueId, int32_t> tensor_index_;
  std::map<int64_t, int32_t> literal_ints_;
  std::map<uint64_t, int32_t> literal_doubles_;
  int32_t literal_bools_[2] = {-1, -1};
  std::map<std::vector<int64_t>, int32_t> literal_int_lists_;
  std::vector<std::pair<std::string, std::string>> operators_;
  std::map<std::pair<std::string, std::string>, int32_t> operator_index_;
  int32_t none_ = -1;
  size_t instructions_ = 0;
  size_t constants_used_ = 0;
  size_t delegate_calls_ = 0;
  uint32_t first_segment_ = 1;
  std::unique_ptr<SymPrologue> prologue_;
  std::vector<int32_t> slot_value_;
};

// A constant method as ExecuTorch's _emit_prim_getters writes it: the values are the outputs,
// one chain without instructions, no operators or delegates, no planned memory, and the
// value's pytree spec as the output container.
Offset<fb::ExecutionPlan> constant_plan(flatbuffers::FlatBufferBuilder& b,
                                        const ConstantMethod& m) {
  std::vector<Offset<fb::EValue>> values;
  std::vector<int32_t> outputs;
  for (const ConstantScalar& v : m.values) {
    outputs.push_back(static_cast<int32_t>(values.size()));
    if (const auto* i = std::get_if<int64_t>(&v)) {
      values.push_back(fb::CreateEValue(b, fb::KernelTypes::Int, fb::CreateInt(b, *i).Union()));
    } else if (const auto* flag = std::get_if<bool>(&v)) {
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::Bool, fb::CreateBool(b, *flag).Union()));
    } else if (const auto* d = std::get_if<double>(&v)) {
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::Double, fb::CreateDouble(b, *d).Union()));
    } else {
      auto text = b.CreateString(std::get<std::string>(v));
      values.push_back(
          fb::CreateEValue(b, fb::KernelTypes::String, fb::CreateString(b, text).Union()));
    }
  }
  const std::vector<int32_t> none;
  auto chain = fb::CreateChain(b, b.CreateVector(none), b.CreateVector(none),
                               b.CreateVector(std::vector<Offset<fb::Instruction>>{}));
  auto container =
      fb::CreateContainerMetadata(b, b.CreateString(""), b.CreateString(constant_method_spec(m)));
  return fb::CreateExecutionPlan(b, b.CreateString(m.name), container, b.CreateVector(values),
                                 b.CreateVector(none), b.CreateVector(outputs),
                                 b.CreateVector(std::vector<Offset<fb::Chain>>{chain}),
                                 b.CreateVector(std::vector<Offset<fb::Operator>>{}),
                                 b.CreateVector(std::vector<Offset<fb::BackendDelegate>>{}),
                                 b.CreateVector(std::vector<int64_t>{0}));
}

}  // namespace

uint64_t emit_program(const std::vector<MethodToEmit>& methods, ByteSink& sink, EmitStats* stats,
                      const std::vector<NamedDataToEmit>& named_data,
                      const std::vector<ConstantMethod>& constant_methods) {
  flatbuffers::FlatBufferBuilder b(1 << 16);
  ConstantTable constants;
  MutableTable mutables;
  EmitStats local;
  std::vector<Offset<fb::ExecutionPlan>> plans;
  // Segment 0 holds the constants (ExecuTorch always lists it, even when empty); delegate
  // payloads follow, one segment each, in method order.
  uint32_t next_segment = 1;
  for (const MethodToEmit& m : methods) {
    MethodEmitter e(b, m, constants, mutables, next_segment);
    plans.push_back(e.emit());
    next_segment += static_cast<uint32_t>(m.delegates.size());
    local.values += e.values();
    local.instructions += e.instructions();
    local.constants += e.constants_used();
    local.delegate_calls += e.delegate_calls();
  }
  for (const ConstantMethod& m : constant_methods) {
    plans.push_back(constant_plan(b, m));
    local.values += m.values.size();
  }
  std::vector<SegmentPieces> segments = {constants.pieces()};
  for (const MethodToEmit& m : methods) {
    for (const LoweredDelegate& d : m.delegates)
      segments.push_back(SegmentPieces::whole(d.payload));
  }
  // Named data follows the delegate payloads, one segment per key: the program's own, then
  // the delegates' (weights several regions share), each key once.
  std::vector<Offset<fb::NamedData>> named;
  std::map<std::string, const std::vector<uint8_t>*> named_bytes;
  auto add_named = [&](const std::string& key, const std::vector<uint8_t>& bytes) {
    auto [it, added] = named_bytes.try_emplace(key, &bytes);
    if (!added) {
      if (*it->second != bytes)
        throw CompileError("two different named data entries '" + key + "'");
      ++local.named_shared;
      return;
    }
    named.push_back(
        fb::CreateNamedData(b, b.CreateString(key), static_cast<uint32_t>(segments.size())));
    segments.push_back(SegmentPieces::whole(bytes));
  };
  for (const NamedDataToEmit& n : named_data) add_named(n.key, n.bytes);
  for (const MethodToEmit& m : methods) {
    for (const LoweredDelegate& d : m.delegates) {
      for (const auto& [key, bytes] : d.named_data) {
        if (!named_bytes.count(key)) local.delegate_named_bytes += bytes.size();
        add_named(key, bytes);
      }
    }
  }
  // The state's initial values come last, in one segment.
  Offset<flatbuffers::Vector<Offset<fb::SubsegmentOffsets>>> mutable_table = 0;
  if (!mutables.empty()) {
    const auto index = static_cast<uint32_t>(segments.size());
    segments.push_back(mutables.pieces());
    mutable_table = b.CreateVector(std::vector<Offset<fb::SubsegmentOffsets>>{
        fb::CreateSubsegmentOffsets(b, index, b.CreateVector(mutables.offsets()))});
  }
  std::vector<uint64_t> sizes;
  for (const SegmentPieces& seg : segments) sizes.push_back(seg.size);
  const std::vector<uint64_t> offsets = segment_offsets(sizes);
  std::vector<Offset<fb::DataSegment>> segment_table;
  for (size_t i = 0; i < sizes.size(); ++i)
    segment_table.push_back(fb::CreateDataSegment(b, offsets[i], sizes[i]));
  auto constant_segment = fb::CreateSubsegmentOffsets(b, 0, b.CreateVector(constants.offsets()));
  flatbuffers::Offset<flatbuffers::Vector<Offset<fb::NamedData>>> named_table = 0;
  if (!named.empty()) named_table = b.CreateVector(named);
  auto program = fb::CreateProgram(b, 0, b.CreateVector(plans), 0, 0, b.CreateVector(segment_table),
                                   constant_segment, mutable_table, named_table);
  fb::FinishProgramBuffer(b, program);
  local.file_bytes =
      write_pte(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()), segments, sink);
  local.constant_bytes = constants.size();
  local.deduplicated = constants.deduplicated();
  if (stats) *stats = local;
  return local.file_bytes;
}

std::vector<uint8_t> emit_program(const std::vector<MethodToEmit>& methods, EmitStats* stats,
                                  const std::vector<NamedDataToEmit>& named_data,
                                  const std::vector<ConstantMethod>& constant_methods) {
  VectorSink sink;
  emit_program(methods, sink, stats, named_data, constant_methods);
  return std::move(sink.bytes);
}

}  // namespace pteron::compiler
