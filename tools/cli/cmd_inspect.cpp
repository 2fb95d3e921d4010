// pteron inspect PROGRAM.pte [--json]: methods, tensors in and out, operators with call
// counts, delegates, planned arena bytes and constant bytes; constant methods' values and the
// LLM metadata they make up (runtime/llm/metadata.h).
// pteron inspect PROGRAM.pte --delegation [--json]: what is delegated where, and why not
// (compiler/report/delegation_report.h). --graph: the lowered graph with its delegate regions.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "runtime/llm/metadata.h"
#include "schema/program_generated.h"
#include "tools/cli/commands.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/trace_table.h"

namespace pteron::cli {
namespace {

struct InspectOptions {
  std::string program;
  std::string trace;
  size_t top = 20;
  bool json = false;
  bool delegation = false;
  bool graph = false;
};

// --delegation / --graph: both read the graph info the compiler stored in the program.
void inspect_graph_info(const HostProgram& hp, const InspectOptions& o) {
  std::optional<std::string> info;
  try {
    info = compiler::read_named_data(hp.program(), compiler::kGraphInfoKey);
  } catch (const std::exception& e) {
    throw UserError(o.program + ": " + e.what());
  }
  if (!info) {
    if (o.json) {
      std::printf("%s\n", nlohmann::json{{"file", o.program},
                                         {"graph_info", false},
                                         {"message", compiler::kNoGraphInfo}}
                              .dump(2)
                              .c_str());
    } else {
      std::printf("%s: %s\n", o.program.c_str(), compiler::kNoGraphInfo);
    }
    return;
  }
  try {
    if (o.graph) {
      std::printf("%s", compiler::graph_view(*info).c_str());
      if (!o.delegation) return;
    }
    const std::string report = compiler::delegation_report(*info);
    if (o.json) {
      nlohmann::json j = nlohmann::json::parse(report);
      j["file"] = o.program;
      j["graph_info"] = true;
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      std::printf("%s", compiler::delegation_summary(report).c_str());
    }
  } catch (const std::exception& e) {
    throw UserError(o.program + ": " + e.what());
  }
}

nlohmann::json tensor_json(const TensorInfo& info) {
  return {{"dtype", scalar_type_name(info.dtype)},
          {"shape", std::vector<int32_t>(info.sizes.begin(), info.sizes.end())},
          {"bytes", info.nbytes}};
}

// A constant method's value (no inputs, no instructions, scalar outputs: ExecuTorch's
// constant_methods), read from the program; null for any other method.
nlohmann::json constant_value(const fb::ExecutionPlan& plan) {
  const size_t n_inputs = plan.inputs() ? plan.inputs()->size() : 0;
  const size_t n_instructions = plan.chains()->Get(0)->instructions()->size();
  if (n_inputs != 0 || n_instructions != 0 || plan.outputs() == nullptr) return nullptr;
  nlohmann::json items = nlohmann::json::array();
  for (int32_t index : *plan.outputs()) {
    const fb::EValue* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
    switch (v->val_type()) {
      case fb::KernelTypes::Int:
        items.push_back(v->val_as_Int()->int_val());
        break;
      case fb::KernelTypes::Bool:
        items.push_back(v->val_as_Bool()->bool_val());
        break;
      case fb::KernelTypes::Double:
        items.push_back(v->val_as_Double()->double_val());
        break;
      case fb::KernelTypes::String:
        items.push_back(v->val_as_String()->string_val()->str());
        break;
      default:
        return nullptr;
    }
  }
  // A scalar's pytree spec is "$" (ExecuTorch's); anything else, or no spec, is a list.
  const fb::ContainerMetadata* c = plan.container_meta_type();
  const bool scalar = items.size() == 1 && c != nullptr && c->encoded_out_str() != nullptr &&
                      c->encoded_out_str()->str() == "$";
  return scalar ? items[0] : items;
}

// The LLM metadata as the runtime reads it (runtime/llm/metadata.h), keyed by method name as
// ExecuTorch's constant_methods are; a malformed value is a user error naming the method.
nlohmann::json llm_metadata_json(const Program& program, const std::string& path) {
  auto read = llm::read_llm_metadata(program);
  if (!read.ok()) throw UserError(path + ": " + last_error_message());
  const llm::LlmMetadata& m = read.get();
  nlohmann::json j = nlohmann::json::object();
  llm::for_each_field(m, [&](const char* key, const auto& field) {
    if constexpr (std::is_same_v<std::decay_t<decltype(field)>, llm::EosIds>) {
      if (field.present) j[key] = std::vector<int64_t>(field.ids, field.ids + field.count);
    } else if (field) {
      j[key] = *field;
    }
  });
  return j;
}

nlohmann::json describe(const HostProgram& hp, const std::string& path) {
  const Program& program = hp.program();
  const fb::Program& p = *program.flatbuffer();
  nlohmann::json j;
  j["file"] = path;
  j["file_bytes"] = program.file_size();
  j["schema_version"] = p.version();
  j["constant_bytes"] = program.constant_segment().size();
  j["segments"] = p.segments() ? p.segments()->size() : 0;
  for (size_t m = 0; m < program.num_methods(); ++m) {
    const fb::ExecutionPlan& plan =
        *p.execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(m));
    MethodMeta meta(&plan);
    nlohmann::json jm;
    jm["name"] = meta.name();
    for (size_t i = 0; i < meta.num_inputs(); ++i) {
      auto t = meta.input_tensor(i);
      jm["inputs"].push_back(t.ok() ? tensor_json(*t) : nlohmann::json{{"type", "non-tensor"}});
    }
    // Dynamic programs: the inputs' lower bounds (the shapes above are the upper bounds).
    const std::string bounds_key = std::string("pteron.min_sizes.") + meta.name();
    if (auto bytes = compiler::read_named_data(program, bounds_key.c_str());
        bytes && bytes->size() % 4 == 0) {
      std::vector<int32_t> words(bytes->size() / 4);
      std::memcpy(words.data(), bytes->data(), bytes->size());
      size_t w = 0;
      for (size_t i = 0; i < meta.num_inputs() && w < words.size(); ++i) {
        const size_t rank = static_cast<size_t>(std::max(words[w++], 0));
        if (words.size() - w < rank) break;
        std::vector<int32_t> mins(words.begin() + w, words.begin() + w + rank);
        w += rank;
        auto& in = jm["inputs"][i];
        if (in.contains("shape") && in["shape"].size() == rank) in["min_shape"] = mins;
      }
    }
    for (size_t i = 0; i < meta.num_outputs(); ++i) {
      auto t = meta.output_tensor(i);
      jm["outputs"].push_back(t.ok() ? tensor_json(*t) : nlohmann::json{{"type", "non-tensor"}});
    }
    std::map<std::string, int> op_calls;
    std::map<int, int> delegate_calls;
    for (const fb::Chain* chain : *plan.chains()) {
      for (const fb::Instruction* ins : *chain->instructions()) {
        if (ins->instr_args_type() == fb::InstructionArguments::KernelCall) {
          const fb::Operator* op =
              plan.operators()->Get(ins->instr_args_as_KernelCall()->op_index());
          std::string name = op->name()->str();
          if (op->overload() && op->overload()->size()) name += "." + op->overload()->str();
          ++op_calls[name];
        } else if (ins->instr_args_type() == fb::InstructionArguments::DelegateCall) {
          ++delegate_calls[ins->instr_args_as_DelegateCall()->delegate_index()];
        }
      }
    }
    jm["instructions"] = meta.num_instructions();
    jm["values"] = plan.values()->size();
    if (nlohmann::json value = constant_value(plan); !value.is_null()) jm["constant"] = value;
    for (const auto& [name, calls] : op_calls)
      jm["operators"].push_back({{"name", name}, {"calls", calls}});
    if (plan.delegates()) {
      for (size_t d = 0; d < plan.delegates()->size(); ++d) {
        const fb::BackendDelegate* del =
            plan.delegates()->Get(static_cast<flatbuffers::uoffset_t>(d));
        size_t bytes = 0;
        const bool inline_data = del->processed()->location() == fb::DataLocation::INLINE;
        if (inline_data) {
          bytes = p.backend_delegate_data()->Get(del->processed()->index())->data()->size();
        } else {
          bytes = p.segments()->Get(del->processed()->index())->size();
        }
        jm["delegates"].push_back({{"backend", del->id()->str()},
                                   {"payload_bytes", bytes},
                                   {"payload_location", inline_data ? "inline" : "segment"},
                                   {"calls", delegate_calls[static_cast<int>(d)]}});
      }
    }
    int64_t planned_total = 0;
    for (size_t a = 0; a < meta.num_planned_buffers(); ++a) {
      jm["planned_arenas"].push_back(
          {{"memory_id", a + 1}, {"bytes", meta.planned_buffer_size(a)}});
      planned_total += meta.planned_buffer_size(a);
    }
    jm["planned_bytes"] = planned_total;
    // State (mutable buffers kept across calls): planned tensors with an initial value.
    for (const fb::EValue* v : *plan.values()) {
      if (v->val_type() != fb::KernelTypes::Tensor) continue;
      const fb::Tensor* t = v->val_as_Tensor();
      if (t->allocation_info() == nullptr || t->data_buffer_idx() == 0) continue;
      const fb::ExtraTensorInfo* extra = t->extra_tensor_info();
      jm["state"].push_back(
          {{"name",
            extra && extra->fully_qualified_name() ? extra->fully_qualified_name()->str() : ""},
           {"memory_id", t->allocation_info()->memory_id()}});
    }
    j["methods"].push_back(jm);
  }
  j["llm_metadata"] = llm_metadata_json(program, path);
  return j;
}

using compiler::human_bytes;

void print_text(const nlohmann::json& j) {
  std::printf("%s: %s, constants %s, %d segment(s)\n", j["file"].get<std::string>().c_str(),
              human_bytes(j["file_bytes"].get<double>()).c_str(),
              human_bytes(j["constant_bytes"].get<double>()).c_str(), j["segments"].get<int>());
  for (const auto& m : j["methods"]) {
    if (m.contains("constant")) {
      std::printf("method '%s': constant %s\n", m["name"].get<std::string>().c_str(),
                  m["constant"].dump().c_str());
      continue;
    }
    std::printf("method '%s': %d instruction(s), %d value(s)\n",
                m["name"].get<std::string>().c_str(), m["instructions"].get<int>(),
                m["values"].get<int>());
    auto io = [](const char* what, const nlohmann::json& list) {
      if (!list.is_array()) return;
      for (size_t i = 0; i < list.size(); ++i) {
        const auto& t = list[i];
        if (t.contains("dtype")) {
          std::printf("  %s %zu: %s %s%s\n", what, i, t["dtype"].get<std::string>().c_str(),
                      t["shape"].dump().c_str(),
                      t.contains("min_shape")
                          ? (" (dynamic: sizes from " + t["min_shape"].dump() + ")").c_str()
                          : "");
        } else {
          std::printf("  %s %zu: %s\n", what, i, t["type"].get<std::string>().c_str());
        }
      }
    };
    io("input", m.value("inputs", nlohmann::json()));
    io("output", m.value("outputs", nlohmann::json()));
    if (m.contains("operators")) {
      std::printf("  operators:\n");
      for (const auto& op : m["operators"]) {
        std::printf("    %5d x %s\n", op["calls"].get<int>(),
                    op["name"].get<std::string>().c_str());
      }
    }
    if (m.contains("delegates")) {
      std::printf("  delegates:\n");
      for (const auto& d : m["delegates"]) {
        std::printf("    %s: %s payload (%s), %d call(s)\n",
                    d["backend"].get<std::string>().c_str(),
                    human_bytes(d["payload_bytes"].get<double>()).c_str(),
                    d["payload_location"].get<std::string>().c_str(), d["calls"].get<int>());
      }
    }
    std::printf("  planned memory: %s", human_bytes(m["planned_bytes"].get<double>()).c_str());
    if (m.contains("planned_arenas")) {
      std::printf(" (");
      bool first = true;
      for (const auto& a : m["planned_arenas"]) {
        std::printf("%sarena %d: %s", first ? "" : ", ", a["memory_id"].get<int>(),
                    human_bytes(a["bytes"].get<double>()).c_str());
        first = false;
      }
      std::printf(")");
    }
    std::printf("\n");
    if (m.contains("state")) {
      std::printf("  state (kept across calls): %zu buffer(s):", m["state"].size());
      for (const auto& st : m["state"])
        std::printf(" %s (arena %d)", st["name"].get<std::string>().c_str(),
                    st["memory_id"].get<int>());
      std::printf("\n");
    }
  }
  if (!j["llm_metadata"].empty()) {
    std::printf("LLM metadata:");
    bool first = true;
    for (const auto& [key, value] : j["llm_metadata"].items()) {
      std::printf("%s %s %s", first ? "" : ",", key.c_str(), value.dump().c_str());
      first = false;
    }
    std::printf("\n");
  }
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Describe a program: methods, operators, memory");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option("--trace", opts->trace,
                  "an ETDump (pteron profile -o T writes T.etdp): where the time went");
  cmd->add_option("--top", opts->top, "rows of the --trace per-op table")->capture_default_str();
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->add_flag(
      "--delegation", opts->delegation,
      "what runs on which backend or kernel library, boundaries, FLOPs, and why not delegated");
  cmd->add_flag("--graph", opts->graph,
                "the lowered graph in execution order with its delegate regions");
  cmd->callback([opts] {
    auto program = open_program(opts->program);
    if (!opts->trace.empty()) {
      inspect_trace(*program, opts->program, opts->trace, opts->top, opts->json);
      return;
    }
    if (opts->delegation || opts->graph) {
      inspect_graph_info(*program, *opts);
      return;
    }
    const nlohmann::json j = describe(*program, opts->program);
    if (opts->json) {
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      print_text(j);
    }
  });
}

}  // namespace pteron::cli
