// MethodEmitter (method_emitter.h): values, literals, kernel, delegate and prologue calls.
#include "compiler/emit/method_emitter.h"

#include <bit>

#include "compiler/compile_error.h"
#include "compiler/ir/kernel_call_form.h"
#include "compiler/ir/op_names.h"
#include "compiler/ir/queries.h"

namespace pteron::compiler::detail {

Offset<fb::ExecutionPlan> MethodEmitter::emit() {
  std::vector<int32_t> inputs, outputs;
  for (ir::ValueId v : g_.inputs()) inputs.push_back(tensor_value(v));
  std::vector<Offset<fb::Instruction>> instructions;
  emit_instructions(instructions);
  for (ir::ValueId v : g_.outputs()) outputs.push_back(tensor_value(v));
  auto chain = fb::CreateChain(b_, b_.CreateVector(inputs), b_.CreateVector(outputs),
                               b_.CreateVector(instructions));
  std::vector<Offset<fb::Chain>> chains = {chain};
  std::vector<Offset<fb::Operator>> ops;
  for (const auto& [name, overload] : t_.operators) {
    ops.push_back(fb::CreateOperator(b_, b_.CreateString(name), b_.CreateString(overload)));
  }
  std::vector<int64_t> buffer_sizes = {0};
  buffer_sizes.insert(buffer_sizes.end(), m_.arena_sizes.begin(), m_.arena_sizes.end());
  instructions_ = instructions.size();
  std::vector<Offset<fb::BackendDelegate>> delegates;
  for (size_t d = 0; d < t_.delegates.size(); ++d) {
    const LoweredDelegate& del = *t_.delegates[d];
    std::vector<Offset<fb::CompileSpec>> specs;
    for (const auto& [key, value] : del.compile_specs) {
      specs.push_back(fb::CreateCompileSpec(b_, b_.CreateString(key), b_.CreateVector(value)));
    }
    auto processed = fb::CreateBackendDelegateDataReference(
        b_, fb::DataLocation::SEGMENT, first_segment_ + static_cast<uint32_t>(d));
    delegates.push_back(fb::CreateBackendDelegate(b_, b_.CreateString(del.backend_id), processed,
                                                  b_.CreateVector(specs)));
  }
  Offset<fb::ContainerMetadata> container = 0;
  if (!m_.input_spec.empty() || !m_.output_spec.empty()) {
    container = fb::CreateContainerMetadata(b_, b_.CreateString(m_.input_spec),
                                            b_.CreateString(m_.output_spec));
  }
  return fb::CreateExecutionPlan(
      b_, b_.CreateString(m_.name), container, b_.CreateVector(t_.values), b_.CreateVector(inputs),
      b_.CreateVector(outputs), b_.CreateVector(chains), b_.CreateVector(ops),
      b_.CreateVector(delegates), b_.CreateVector(buffer_sizes));
}

void MethodEmitter::emit_instructions(std::vector<Offset<fb::Instruction>>& out) {
  delegate_base_ = t_.delegates.size();
  for (const LoweredDelegate& d : m_.delegates) t_.delegates.push_back(&d);
  // Symbolic ints first, as far as they read the inputs; one read from a data-dependent
  // output (nonzero's length) right after the instruction that produces it.
  prologue_ = std::make_unique<SymPrologue>(g_, kernel_nodes(m_));
  slot_value_.assign(prologue_->slots().size(), -1);
  SymSchedule schedule(g_, *prologue_, m_.view_sources);
  origins_.clear();
  auto flush = [&] {
    for (const SymCall* call : schedule.ready()) {
      out.push_back(sym_call(*call));
      origins_.push_back({ir::kNoNode, -1, call->op + "." + call->overload});
    }
  };
  flush();
  auto kernel_step = [&](ir::NodeId n) {
    schedule.check_ready(g_.node(n));
    const size_t first = out.size();
    if (ir::is_op(g_.node(n), ops::pteron::cond)) {
      cond(g_.node(n), out);
    } else if (ir::is_op(g_.node(n), ops::pteron::while_loop)) {
      while_loop(g_.node(n), out);
    } else if (ir::is_op(g_.node(n), ops::pteron::scan)) {
      scan(g_.node(n), out);
    } else {
      out.push_back(kernel_call(g_.node(n)));
    }
    origins_.resize(origins_.size() + (out.size() - first), InstructionOrigin{n});
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
      out.push_back(delegate_call(step.delegate));
      origins_.push_back({ir::kNoNode, step.delegate, ""});
      for (ir::ValueId v : m_.delegates[static_cast<size_t>(step.delegate)].outputs)
        schedule.produced(v);
      flush();
    }
  }
  schedule.check_all_emitted();
}

Offset<fb::Instruction> MethodEmitter::call(const std::string& name, const std::string& overload,
                                            const std::vector<int32_t>& args) {
  return fb::CreateInstruction(
      b_, fb::InstructionArguments::KernelCall,
      fb::CreateKernelCall(b_, operator_index(name, overload), b_.CreateVector(args)).Union());
}

Offset<fb::Instruction> MethodEmitter::prim_call(const std::string& name, int32_t a, int32_t b,
                                                 int32_t out) {
  return call(name, "Scalar", {a, b, out});
}

Offset<fb::Instruction> MethodEmitter::jump_false(int32_t cond_value, size_t destination) {
  auto jf = fb::CreateJumpFalseCall(b_, cond_value, static_cast<int32_t>(destination));
  return fb::CreateInstruction(b_, fb::InstructionArguments::JumpFalseCall, jf.Union());
}

Offset<fb::Instruction> MethodEmitter::copy_call(int32_t src, int32_t dst) {
  return call("aten::clone", "out", {src, none(), dst, dst});
}

int32_t MethodEmitter::operator_index(const std::string& name, const std::string& overload) {
  const auto key = std::make_pair(name, overload);
  auto [it, inserted] =
      t_.operator_index.try_emplace(key, static_cast<int32_t>(t_.operators.size()));
  if (inserted) t_.operators.push_back(key);
  return it->second;
}

Offset<fb::Instruction> MethodEmitter::delegate_call(int index) {
  const LoweredDelegate& d = m_.delegates[static_cast<size_t>(index)];
  std::vector<int32_t> args;
  for (ir::ValueId v : d.inputs) args.push_back(tensor_value(v));
  for (ir::ValueId v : d.outputs) args.push_back(tensor_value(v));
  ++t_.delegate_calls;
  auto call = fb::CreateDelegateCall(b_, static_cast<int32_t>(delegate_base_) + index,
                                     b_.CreateVector(args));
  return fb::CreateInstruction(b_, fb::InstructionArguments::DelegateCall, call.Union());
}

Offset<fb::Instruction> MethodEmitter::sym_call(const SymCall& call) {
  std::vector<int32_t> args;
  if (call.tensor != ir::kNoValue) args.push_back(tensor_value(call.tensor));
  for (int slot : call.operands) args.push_back(slot_value(slot));
  args.push_back(slot_value(call.out));
  auto kc = fb::CreateKernelCall(b_, operator_index(call.op, call.overload), b_.CreateVector(args));
  return fb::CreateInstruction(b_, fb::InstructionArguments::KernelCall, kc.Union());
}

int32_t MethodEmitter::slot_value(int slot) {
  int32_t& index = slot_value_[static_cast<size_t>(slot)];
  if (index < 0) index = add_int(prologue_->slots()[static_cast<size_t>(slot)].value);
  return index;
}

MethodEmitter::MethodEmitter(flatbuffers::FlatBufferBuilder& b, const MethodToEmit& m,
                             ConstantTable& constants, MutableTable& mutables,
                             uint32_t first_segment, PlanTables& tables)
    : b_(b),
      m_(m),
      g_(*m.graph),
      constants_(constants),
      mutables_(mutables),
      t_(tables),
      first_segment_(first_segment) {}

int32_t MethodEmitter::add(fb::KernelTypes type, Offset<void> payload) {
  t_.values.push_back(fb::CreateEValue(b_, type, payload));
  return static_cast<int32_t>(t_.values.size() - 1);
}

int32_t MethodEmitter::add_int(int64_t v) {
  return add(fb::KernelTypes::Int, fb::CreateInt(b_, v).Union());
}

int32_t MethodEmitter::literal_int(int64_t v) {
  auto [it, inserted] = t_.literal_ints.try_emplace(v, 0);
  if (inserted) it->second = add_int(v);
  return it->second;
}

int32_t MethodEmitter::literal_double(double v) {
  const auto key = std::bit_cast<uint64_t>(v);  // NaN payloads and -0.0 stay apart
  auto [it, inserted] = t_.literal_doubles.try_emplace(key, 0);
  if (inserted) it->second = add(fb::KernelTypes::Double, fb::CreateDouble(b_, v).Union());
  return it->second;
}

int32_t MethodEmitter::literal_bool(bool v) {
  int32_t& index = t_.literal_bools[v ? 1 : 0];
  if (index < 0) index = add(fb::KernelTypes::Bool, fb::CreateBool(b_, v).Union());
  return index;
}

int32_t MethodEmitter::literal_int_list(const std::vector<int64_t>& list) {
  auto [it, inserted] = t_.literal_int_lists.try_emplace(list, 0);
  if (inserted) {
    std::vector<int64_t> items;
    for (int64_t x : list) items.push_back(literal_int(x));
    it->second =
        add(fb::KernelTypes::IntList, fb::CreateIntList(b_, b_.CreateVector(items)).Union());
  }
  return it->second;
}

int32_t MethodEmitter::none() {
  if (t_.none < 0) t_.none = add(fb::KernelTypes::Null, fb::CreateNull(b_).Union());
  return t_.none;
}

int32_t MethodEmitter::tensor_value(ir::ValueId id) {
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
    ++t_.constants_used;
  } else if (auto p = m_.placements.find(id); p != m_.placements.end()) {
    alloc =
        fb::CreateAllocationDetails(b_, p->second.mem_id, static_cast<uint32_t>(p->second.offset),
                                    static_cast<uint32_t>(p->second.offset >> 32));
  } else if (v.is_intermediate()) {
    throw CompileError("internal: value '" + v.name + "' has no memory plan");
  }
  // Dynamic tensors: sizes are the upper bounds; kernels resize them on every call.
  const auto dynamism = spec.is_dynamic() || resized_.count(id)
                            ? fb::TensorShapeDynamism::DYNAMIC_BOUND
                            : fb::TensorShapeDynamism::STATIC;
  auto t = fb::CreateTensor(b_, static_cast<fb::ScalarType>(spec.dtype), 0, b_.CreateVector(sizes),
                            b_.CreateVector(spec.dim_order), false, data_buffer_idx, alloc, 0,
                            dynamism, extra);
  const int32_t index = add(fb::KernelTypes::Tensor, t.Union());
  tensor_index_[id] = index;
  return index;
}

int32_t MethodEmitter::argument(const ir::Argument& a, const ir::Node& node,
                                const std::string& name) {
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
      return add(fb::KernelTypes::BoolList, fb::CreateBoolList(b_, b_.CreateVector(items)).Union());
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

Offset<fb::Instruction> MethodEmitter::kernel_call(const ir::Node& node) {
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
    args.push_back(
        add(fb::KernelTypes::TensorList, fb::CreateTensorList(b_, b_.CreateVector(items)).Union()));
  }
  const ir::OpSchema* out = form.schema;
  auto call =
      fb::CreateKernelCall(b_, operator_index(out->op.ns + "::" + out->op.name, out->op.overload),
                           b_.CreateVector(args));
  return fb::CreateInstruction(b_, fb::InstructionArguments::KernelCall, call.Union());
}

int32_t MethodEmitter::output_value(const ir::Node& node, size_t i) {
  if (node.outputs[i] == ir::kNoValue) {
    throw CompileError(node.describe() + ": output " + std::to_string(i) + " is missing");
  }
  return tensor_value(node.outputs[i]);
}

}  // namespace pteron::compiler::detail
