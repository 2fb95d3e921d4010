// pteron run PROGRAM.pte [--inputs in.npz | --random-inputs] [--outputs out.npz] [--threads N]
// [--kernels LIBS] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "runtime/threads/threadpool.h"
#include "tools/cli/commands.h"
#include "tools/cli/method_inputs.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/runtime_options.h"

namespace pteron::cli {
namespace {

struct RunOptions {
  std::string program;
  std::string method = "forward";
  std::string inputs;
  std::string outputs;
  bool random_inputs = false;
  uint64_t seed = 0;
  int iters = 1;
  bool reset_state = false;
  bool json = false;
  RuntimeOptions runtime;
};

void run(const RunOptions& o) {
  apply_runtime_options(o.runtime);
  auto program = open_program(o.program);
  auto host = load_method(*program, o.program, o.method);
  Method& method = host->method();
  std::vector<NpyArray> inputs =
      gather_inputs({o.program, o.method, o.inputs, o.random_inputs, o.seed}, method.meta());
  BoundInputs bound;
  bound.bind(method, inputs, o.inputs.empty() ? o.program : o.inputs);

  std::vector<double> times_ms;
  for (int it = 0; it < std::max(1, o.iters); ++it) {
    // Inputs planned into the arena are overwritten once dead: set them again for every run.
    if (it > 0) bound.bind(method, inputs, o.inputs.empty() ? o.program : o.inputs);
    // State (mutable buffers) carries over between runs unless each starts from the initial.
    if (it > 0 && o.reset_state) {
      const Error r = method.reset_state();
      if (r != Error::Ok) throw_runtime_error(o.program, r);
    }
    const auto start = std::chrono::steady_clock::now();
    const Error e = method.execute();
    const auto end = std::chrono::steady_clock::now();
    if (e != Error::Ok) throw_runtime_error(o.program, e);
    times_ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::vector<double> sorted = times_ms;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];

  std::vector<NpyArray> outputs;
  nlohmann::json j;
  j["program"] = o.program;
  j["method"] = o.method;
  j["iterations"] = times_ms.size();
  j["state_tensors"] = method.num_state_tensors();
  j["median_ms"] = median;
  j["min_ms"] = sorted.front();
  j["threads"] = num_threads();
  j["kernel_libraries"] = kernel_libraries_used(method);
  j["planned_bytes"] = host->planned_bytes();
  // Weights the kernels packed for their micro-kernels on the first call, kept with the program.
  j["packed_constant_bytes"] = program->constant_cache().bytes();
  for (size_t i = 0; i < method.num_outputs(); ++i) {
    const EValue& v = method.output(i);
    nlohmann::json jo;
    if (v.tag == Tag::Tensor) {
      const Tensor& t = *v.tensor;
      outputs.push_back(tensor_to_npy("output_" + std::to_string(i), t));
      jo["dtype"] = scalar_type_name(t.dtype());
      jo["shape"] = std::vector<int32_t>(t.sizes().begin(), t.sizes().end());
      if (t.dtype() == ScalarType::Float && t.numel() > 0) {
        const float* p = reinterpret_cast<const float*>(outputs.back().data.data());
        std::vector<float> head(p, p + std::min<int64_t>(t.numel(), 6));
        jo["head"] = head;
      }
    } else if (v.tag == Tag::Int) {
      jo["int"] = v.i;
    } else if (v.tag == Tag::Double) {
      jo["double"] = v.d;
    } else if (v.tag == Tag::Bool) {
      jo["bool"] = v.b;
    } else if (v.tag == Tag::String) {
      jo["string"] = std::string(v.string.data(), v.string.size());
    } else {
      jo["type"] = tag_name(v.tag);
    }
    j["outputs"].push_back(jo);
  }
  if (!o.outputs.empty()) write_npz(o.outputs, outputs);

  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s: method '%s', %zu instruction(s)\n", o.program.c_str(), o.method.c_str(),
              method.num_instructions());
  for (size_t i = 0; i < j["outputs"].size(); ++i) {
    const auto& jo = j["outputs"][i];
    std::printf("  output %zu: %s\n", i, jo.dump().c_str());
  }
  std::printf("  time: median %.3f ms, min %.3f ms over %zu run(s)\n", median, sorted.front(),
              times_ms.size());
  if (!o.outputs.empty()) std::printf("  outputs written to %s\n", o.outputs.c_str());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto opts = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Run a method of a program on the host");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option("--method", opts->method, "method to run")->capture_default_str();
  cmd->add_option("--inputs", opts->inputs, "inputs as .npz (input_0, input_1, ...)");
  cmd->add_option("--outputs", opts->outputs, "write outputs to this .npz (output_0, ...)");
  cmd->add_flag("--random-inputs", opts->random_inputs, "feed seeded random inputs");
  cmd->add_option("--seed", opts->seed, "seed for --random-inputs")->capture_default_str();
  cmd->add_option("--iters", opts->iters, "times to execute (reports the median)")
      ->capture_default_str();
  cmd->add_flag("--reset-state", opts->reset_state,
                "start every iteration from the program's initial state (mutable buffers such as a "
                "KV cache otherwise carry over from one iteration to the next)");
  add_runtime_options(cmd, opts->runtime);
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace pteron::cli
