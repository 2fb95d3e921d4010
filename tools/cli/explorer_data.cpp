#include "tools/cli/explorer_data.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "schema/program_generated.h"
#include "tools/cli/commands.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/trace_table.h"

namespace pteron::cli {
namespace {

std::string op_name(const fb::Operator& op) {
  std::string name = op.name() ? op.name()->str() : "?";
  if (op.overload() && op.overload()->size()) name += "." + op.overload()->str();
  return name;
}

template <typename Vec>
nlohmann::json list_json(const Vec* v) {
  nlohmann::json out = nlohmann::json::array();
  if (v) {
    for (auto x : *v) out.push_back(x);
  }
  return out;
}

// One value: tensors with dtype, shape, bytes and where they live (arena + offset, constant
// segment, or neither: inputs the caller provides); other kinds with their payload.
nlohmann::json value_json(const fb::EValue& v) {
  nlohmann::json j;
  switch (v.val_type()) {
    case fb::KernelTypes::Tensor: {
      const fb::Tensor& t = *v.val_as_Tensor();
      const auto dtype = static_cast<ScalarType>(t.scalar_type());
      int64_t numel = 1;
      std::vector<int32_t> shape;
      if (t.sizes()) {
        for (int32_t s : *t.sizes()) {
          shape.push_back(s);
          numel *= s;
        }
      }
      j = {{"kind", "tensor"},
           {"dtype", scalar_type_name(dtype)},
           {"shape", shape},
           {"bytes", numel * static_cast<int64_t>(element_size(dtype))}};
      if (const fb::AllocationDetails* a = t.allocation_info()) {
        j["mem_id"] = a->memory_id();
        j["offset"] =
            (static_cast<uint64_t>(a->memory_offset_high()) << 32) | a->memory_offset_low();
      } else if (t.data_buffer_idx() > 0 || t.extra_tensor_info()) {
        j["constant"] = true;
      }
      if (t.shape_dynamism() != fb::TensorShapeDynamism::STATIC) j["dynamic"] = true;
      return j;
    }
    case fb::KernelTypes::Int:
      return {{"kind", "int"}, {"value", v.val_as_Int()->int_val()}};
    case fb::KernelTypes::Bool:
      return {{"kind", "bool"}, {"value", v.val_as_Bool()->bool_val()}};
    case fb::KernelTypes::Double:
      return {{"kind", "double"}, {"value", v.val_as_Double()->double_val()}};
    case fb::KernelTypes::String: {
      const auto* s = v.val_as_String()->string_val();
      return {{"kind", "string"}, {"value", s ? s->str() : ""}};
    }
    case fb::KernelTypes::IntList:
      return {{"kind", "int_list"}, {"value", list_json(v.val_as_IntList()->items())}};
    case fb::KernelTypes::DoubleList:
      return {{"kind", "double_list"}, {"value", list_json(v.val_as_DoubleList()->items())}};
    case fb::KernelTypes::BoolList:
      return {{"kind", "bool_list"}, {"value", list_json(v.val_as_BoolList()->items())}};
    case fb::KernelTypes::TensorList:
      return {{"kind", "tensor_list"}, {"items", list_json(v.val_as_TensorList()->items())}};
    case fb::KernelTypes::OptionalTensorList:
      return {{"kind", "optional_tensor_list"},
              {"items", list_json(v.val_as_OptionalTensorList()->items())}};
    default:
      return {{"kind", "none"}};
  }
}

// The tensor value indices an instruction touches (lists expanded), in argument order.
std::vector<int> tensor_args(const nlohmann::json& values, const std::vector<int>& args) {
  std::vector<int> out;
  for (int a : args) {
    if (a < 0 || static_cast<size_t>(a) >= values.size()) continue;
    const auto& v = values[static_cast<size_t>(a)];
    if (v["kind"] == "tensor") {
      out.push_back(a);
    } else if (v.contains("items")) {
      for (int item : v["items"]) {
        if (item >= 0 && static_cast<size_t>(item) < values.size() &&
            values[static_cast<size_t>(item)]["kind"] == "tensor") {
          out.push_back(item);
        }
      }
    }
  }
  return out;
}

nlohmann::json method_json(const Program& program, const fb::ExecutionPlan& plan) {
  const fb::Program& p = *program.flatbuffer();
  nlohmann::json m;
  m["name"] = plan.name() ? plan.name()->str() : "";
  nlohmann::json values = nlohmann::json::array();
  if (plan.values()) {
    for (const fb::EValue* v : *plan.values()) values.push_back(value_json(*v));
  }
  m["inputs"] = list_json(plan.inputs());
  m["outputs"] = list_json(plan.outputs());

  nlohmann::json delegates = nlohmann::json::array();
  if (plan.delegates()) {
    for (const fb::BackendDelegate* del : *plan.delegates()) {
      size_t bytes = 0;
      const bool inline_data = del->processed()->location() == fb::DataLocation::INLINE;
      const uint32_t index = del->processed()->index();
      if (inline_data && p.backend_delegate_data() && index < p.backend_delegate_data()->size()) {
        bytes = p.backend_delegate_data()->Get(index)->data()->size();
      } else if (!inline_data && p.segments() && index < p.segments()->size()) {
        bytes = p.segments()->Get(index)->size();
      }
      delegates.push_back({{"backend", del->id() ? del->id()->str() : "?"},
                           {"payload_bytes", bytes},
                           {"payload_location", inline_data ? "inline" : "segment"}});
    }
  }

  // Instructions in execution order (chains flattened, as the runtime and its traces number
  // them). A tensor's producer is the first instruction that touches it, unless it is a method
  // input or a constant: out-variant kernels and delegate calls write each planned tensor
  // before anything reads it.
  nlohmann::json instructions = nlohmann::json::array();
  std::map<int, int> first_use, last_use;
  const size_t num_chains = plan.chains() ? plan.chains()->size() : 0;  // verified: at least 1
  for (size_t c = 0; c < num_chains; ++c) {
    const fb::Chain* chain = plan.chains()->Get(static_cast<flatbuffers::uoffset_t>(c));
    if (!chain->instructions()) continue;
    for (const fb::Instruction* ins : *chain->instructions()) {
      nlohmann::json ji;
      std::vector<int> args;
      switch (ins->instr_args_type()) {
        case fb::InstructionArguments::KernelCall: {
          const auto* call = ins->instr_args_as_KernelCall();
          ji["kind"] = "kernel";
          const int op = call->op_index();
          ji["op"] =
              plan.operators() && op >= 0 && static_cast<size_t>(op) < plan.operators()->size()
                  ? op_name(*plan.operators()->Get(static_cast<flatbuffers::uoffset_t>(op)))
                  : "?";
          if (call->args()) args.assign(call->args()->begin(), call->args()->end());
          break;
        }
        case fb::InstructionArguments::DelegateCall: {
          const auto* call = ins->instr_args_as_DelegateCall();
          const int d = call->delegate_index();
          ji["kind"] = "delegate";
          ji["delegate"] = d;
          ji["op"] = d >= 0 && static_cast<size_t>(d) < delegates.size()
                         ? delegates[static_cast<size_t>(d)]["backend"].get<std::string>()
                         : "?";
          if (call->args()) args.assign(call->args()->begin(), call->args()->end());
          break;
        }
        case fb::InstructionArguments::MoveCall: {
          const auto* call = ins->instr_args_as_MoveCall();
          ji["kind"] = "move";
          ji["op"] = "move";
          args = {call->move_from(), call->move_to()};
          break;
        }
        case fb::InstructionArguments::JumpFalseCall: {
          const auto* call = ins->instr_args_as_JumpFalseCall();
          ji["kind"] = "jump";
          ji["op"] = "jump_false";
          ji["destination"] = call->destination_instruction();
          args = {call->cond_value_index()};
          break;
        }
        case fb::InstructionArguments::FreeCall:
          ji["kind"] = "free";
          ji["op"] = "free";
          args = {ins->instr_args_as_FreeCall()->value_index()};
          break;
        default:
          ji["kind"] = "unknown";
          ji["op"] = "?";
      }
      const int index = static_cast<int>(instructions.size());
      ji["args"] = args;
      // What a kernel writes: ExecuTorch's convention appends the returned value(s) (the out
      // tensor, or a list of them) as the last argument. Delegate calls have no such marker;
      // the page treats their first-touched tensors as outputs.
      if (ins->instr_args_type() == fb::InstructionArguments::KernelCall && !args.empty()) {
        ji["outs"] = tensor_args(values, {args.back()});
      }
      const std::vector<int> tensors = tensor_args(values, args);
      ji["tensors"] = tensors;
      for (int t : tensors) {
        if (!first_use.count(t)) first_use[t] = index;
        last_use[t] = index;
      }
      instructions.push_back(std::move(ji));
    }
  }
  // Lifetimes of planned tensors: method inputs are live from before the first instruction,
  // outputs until after the last, as the memory planner assumes.
  const int n = static_cast<int>(instructions.size());
  for (int in : m["inputs"]) first_use[in] = -1;
  for (int out : m["outputs"]) last_use[out] = n;
  for (auto& [v, first] : first_use) {
    if (v < 0 || static_cast<size_t>(v) >= values.size()) continue;
    auto& jv = values[static_cast<size_t>(v)];
    if (jv["kind"] != "tensor") continue;
    jv["first"] = first;
    jv["last"] = last_use.count(v) ? last_use[v] : first;
  }
  for (int out : m["outputs"]) {
    if (out >= 0 && static_cast<size_t>(out) < values.size() && !first_use.count(out)) {
      values[static_cast<size_t>(out)]["first"] = n;
      values[static_cast<size_t>(out)]["last"] = n;
    }
  }
  m["values"] = std::move(values);
  m["instructions"] = std::move(instructions);
  m["delegates"] = std::move(delegates);
  nlohmann::json arenas = nlohmann::json::array();
  MethodMeta meta(&plan);
  for (size_t a = 0; a < meta.num_planned_buffers(); ++a)
    arenas.push_back({{"mem_id", a + 1}, {"bytes", meta.planned_buffer_size(a)}});
  m["arenas"] = std::move(arenas);
  return m;
}

// Graph info the compiler stored as named data, parsed; null when absent or unreadable (the
// page then shows what the flatbuffer alone says).
nlohmann::json graph_info(const Program& program) {
  const fb::Program& p = *program.flatbuffer();
  if (!p.named_data()) return nullptr;
  for (const fb::NamedData* nd : *p.named_data()) {
    if (!nd->key() || nd->key()->str() != kExplorerGraphInfoKey) continue;
    auto segment = program.load_segment(nd->segment_index());
    if (!segment.ok()) return nullptr;
    const auto* bytes = static_cast<const char*>(segment->data());
    nlohmann::json j = nlohmann::json::parse(bytes, bytes + segment->size(), nullptr,
                                             /*allow_exceptions=*/false);
    return j.is_discarded() ? nlohmann::json(nullptr) : j;
  }
  return nullptr;
}

// Per-instruction median time over runs (ms), and the trace summary `inspect --trace` prints.
nlohmann::json timing_json(const std::string& trace_path, nlohmann::json& method) {
  std::ifstream f(trace_path, std::ios::binary);
  if (!f) throw UserError(trace_path + ": cannot open");
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());
  std::vector<TraceRow> rows = rows_from_etdump(bytes, trace_path);
  const auto& instructions = method["instructions"];
  std::map<int, std::map<int, double>> per_instruction;  // instruction -> run -> ns
  std::map<std::string, std::map<int, double>> inside;   // name -> run -> ns
  std::set<int> runs;
  for (TraceRow& r : rows) {
    if (r.kind == TraceRow::Kind::Execute) runs.insert(r.run);
    if (r.kind == TraceRow::Kind::DelegateNode) inside[r.name][r.run] += r.end_ns - r.start_ns;
    if (r.kind != TraceRow::Kind::Kernel && r.kind != TraceRow::Kind::DelegateCall) continue;
    if (r.instruction < 0 || static_cast<size_t>(r.instruction) >= instructions.size()) {
      throw UserError(trace_path + ": instruction " + std::to_string(r.instruction) +
                      " is not in the program (" + std::to_string(instructions.size()) +
                      " instructions): a trace of another program?");
    }
    r.name = instructions[static_cast<size_t>(r.instruction)]["op"].get<std::string>();
    per_instruction[r.instruction][r.run] += r.end_ns - r.start_ns;
  }
  auto median_ms = [&](const std::map<int, double>& by_run) {
    std::vector<double> v;
    for (int run : runs) v.push_back(by_run.count(run) ? by_run.at(run) : 0.0);
    if (v.empty()) {
      for (const auto& [run, ns] : by_run) v.push_back(ns);
    }
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2] / 1e6;
  };
  nlohmann::json ms = nlohmann::json::array();
  for (size_t i = 0; i < instructions.size(); ++i) {
    const auto it = per_instruction.find(static_cast<int>(i));
    ms.push_back(it == per_instruction.end() ? nlohmann::json(nullptr)
                                             : nlohmann::json(median_ms(it->second)));
  }
  nlohmann::json inside_ms = nlohmann::json::object();
  for (const auto& [name, by_run] : inside) inside_ms[name] = median_ms(by_run);
  nlohmann::json summary = summarize_trace(rows);
  summary.erase("ops");
  summary.erase("inside_delegates");
  return {{"file", trace_path},
          {"instruction_ms", ms},
          {"inside_delegate_ms", inside_ms},
          {"summary", summary}};
}

}  // namespace

nlohmann::json explorer_data(const HostProgram& hp, const std::string& program_path,
                             const std::string& trace_path) {
  const Program& program = hp.program();
  const fb::Program& p = *program.flatbuffer();
  nlohmann::json j;
  j["file"] = program_path;
  j["file_bytes"] = program.file_size();
  j["constant_bytes"] = program.constant_segment().size();
  j["methods"] = nlohmann::json::array();
  if (p.execution_plan()) {
    for (const fb::ExecutionPlan* plan : *p.execution_plan())
      j["methods"].push_back(method_json(program, *plan));
  }
  if (j["methods"].empty()) throw UserError(program_path + ": the program has no methods");
  j["graph_info"] = graph_info(program);
  if (!trace_path.empty()) {
    // Traces are of one method: `forward` when the program has it, else the first.
    nlohmann::json* target = &j["methods"][0];
    for (auto& m : j["methods"]) {
      if (m["name"] == "forward") target = &m;
    }
    (*target)["timing"] = timing_json(trace_path, *target);
  }
  return j;
}

}  // namespace pteron::cli
