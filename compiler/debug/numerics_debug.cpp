#include "compiler/debug/numerics_debug.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "compiler/compile_error.h"
#include "compiler/frontend/pt2_loader.h"
#include "compiler/passes/passes.h"
#include "runtime/host/host_method.h"
#include "runtime/kernel/kernel.h"

namespace pteron::compiler {
namespace {

using Reference = std::unordered_map<std::string, std::vector<float>>;

// Every float value of the graph, run on the portable kernels only (the reference).
Reference run_reference(const std::string& pt2_path, const CalibrationData& inputs) {
  ir::Graph graph = frontend::load_pt2(pt2_path);
  run_default_passes(graph);
  check_calibration_data(graph, inputs);
  std::vector<bool> wanted(graph.value_capacity(), false);
  for (ir::NodeId n : graph.nodes()) {
    for (ir::ValueId v : graph.node(n).outputs) {
      if (v != ir::kNoValue && graph.value(v).spec.dtype == ScalarType::Float) wanted[v] = true;
    }
  }
  Reference ref;
  const char* portable[] = {"portable"};
  set_kernel_libraries({portable, 1});
  try {
    run_calibration(graph, inputs, wanted, [&](ir::ValueId v, std::span<const float> x) {
      ref[graph.value(v).name].assign(x.begin(), x.end());
    });
  } catch (...) {
    set_kernel_libraries({});
    throw;
  }
  set_kernel_libraries({});
  return ref;
}

// A float tensor's elements in logical (contiguous) order, whatever its dim order.
std::vector<float> logical_elements(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  const float* base = static_cast<const float*>(t.const_data());
  std::vector<int32_t> index(static_cast<size_t>(t.dim()), 0);
  for (size_t k = 0; k < out.size(); ++k) {
    int64_t offset = 0;
    for (int32_t d = 0; d < t.dim(); ++d) offset += static_cast<int64_t>(index[d]) * t.stride(d);
    out[k] = base[offset];
    for (int32_t d = t.dim() - 1; d >= 0; --d) {
      if (++index[d] < t.size(d)) break;
      index[d] = 0;
    }
  }
  return out;
}

class Comparer : public ExecutionObserver {
 public:
  Comparer(const Method& method, const nlohmann::json& info, const Reference& ref,
           const NumericsTolerance& tol, NumericsReport& report)
      : method_(method), info_(info), ref_(ref), tol_(tol), report_(report) {}

  void end_instruction(size_t index) override {
    const auto& instructions = info_["instructions"];
    if (index >= instructions.size()) return;
    const auto& ins = instructions[index];
    EValue* buffer[Method::kMaxGatheredArgs];
    Span<EValue* const> args = method_.instruction_args(index, {buffer, Method::kMaxGatheredArgs});
    if (ins.contains("region")) {
      // Delegate call: its arguments are the region's inputs, then its outputs.
      const auto& outputs = info_["regions"][ins["region"].get<size_t>()]["outputs"];
      const size_t first = args.size() >= outputs.size() ? args.size() - outputs.size() : 0;
      for (size_t k = 0; k < outputs.size() && first + k < args.size(); ++k) {
        check(index, outputs[k]["name"].get<std::string>(), args[first + k], ins);
      }
      return;
    }
    if (args.size() == 0 || ins["nodes"].empty()) return;
    // Kernel call: the out tensor is the last argument (ExecuTorch's convention repeats it).
    const size_t node = ins["nodes"].back().get<size_t>();
    check(index, info_["nodes"][node]["name"].get<std::string>(), args[args.size() - 1], ins);
  }

 private:
  const nlohmann::json* node_named(const std::string& name) {
    if (by_name_.empty()) {
      for (const auto& n : info_["nodes"]) by_name_[n["name"].get<std::string>()] = &n;
    }
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }

  void check(size_t index, const std::string& name, const EValue* value,
             const nlohmann::json& ins) {
    if (value == nullptr || value->tag != Tag::Tensor ||
        value->tensor->dtype() != ScalarType::Float) {
      ++report_.not_compared;
      return;
    }
    const nlohmann::json* node = node_named(name);
    auto it = ref_.find(name);
    if (it == ref_.end() && node != nullptr && node->contains("from"))
      it = ref_.find((*node)["from"].get<std::string>());
    if (it == ref_.end() || static_cast<int64_t>(it->second.size()) != value->tensor->numel()) {
      ++report_.not_compared;
      return;
    }
    const std::vector<float> got = logical_elements(*value->tensor);
    IntermediateCheck c;
    c.instruction = index;
    c.node = name;
    if (node != nullptr) {
      c.op = node->value("op", "");
      c.source = node->value("source", "");
      c.runs_on = node->value("runs_on", "");
    }
    for (size_t k = 0; k < got.size(); ++k) {
      const double ref = it->second[k];
      c.reference_max_abs = std::max(c.reference_max_abs, std::fabs(ref));
      const double err = std::isnan(got[k]) != std::isnan(ref) ? INFINITY : std::fabs(got[k] - ref);
      if (!std::isnan(err)) c.max_abs_error = std::max(c.max_abs_error, err);
    }
    c.within = c.max_abs_error <= tol_.atol + tol_.rtol * c.reference_max_abs;
    if (!c.within && report_.first_beyond < 0)
      report_.first_beyond = static_cast<int>(report_.checks.size());
    report_.checks.push_back(std::move(c));
    (void)ins;
  }

  const Method& method_;
  const nlohmann::json& info_;
  const Reference& ref_;
  NumericsTolerance tol_;
  NumericsReport& report_;
  std::unordered_map<std::string, const nlohmann::json*> by_name_;
};

}  // namespace

NumericsReport debug_numerics(const std::vector<uint8_t>& program_bytes,
                              const std::string& graph_info_json, const std::string& pt2_path,
                              const CalibrationData& inputs, const NumericsTolerance& tolerance) {
  nlohmann::json info = nlohmann::json::parse(graph_info_json, nullptr, /*allow_exceptions=*/false);
  if (info.is_discarded() || !info.contains("instructions") || !info.contains("nodes")) {
    throw CompileError(
        "the program's graph info is missing or unreadable (compiled with --strip-debug-info?)");
  }
  const Reference ref = run_reference(pt2_path, inputs);

  auto program = HostProgram::from_bytes(program_bytes.data(), program_bytes.size());
  if (!program.ok()) throw CompileError(std::string("program: ") + last_error_message());
  auto method = HostMethod::load(**program, "forward");
  if (!method.ok()) throw CompileError(std::string("program: ") + last_error_message());
  Method& m = (*method)->method();
  if (m.num_inputs() != inputs.size()) {
    throw CompileError("the program takes " + std::to_string(m.num_inputs()) +
                       " inputs, the .pt2 graph " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const CalibrationInput& in = inputs[i];
    std::vector<int32_t> sizes(in.shape.begin() + 1, in.shape.end());
    std::vector<uint8_t> order(sizes.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint8_t>(d);
    std::vector<int32_t> strides(sizes.size());
    Tensor t(in.dtype, static_cast<int32_t>(sizes.size()), sizes.data(), order.data(),
             strides.data(), const_cast<uint8_t*>(in.data.data()));
    if (m.set_input(i, t) != Error::Ok)
      throw CompileError(std::string("input: ") + last_error_message());
  }
  NumericsReport report;
  Comparer comparer(m, info, ref, tolerance, report);
  m.set_observer(&comparer);
  const Error e = m.execute();
  m.set_observer(nullptr);
  if (e != Error::Ok) throw CompileError(std::string("program: ") + last_error_message());
  return report;
}

}  // namespace pteron::compiler
