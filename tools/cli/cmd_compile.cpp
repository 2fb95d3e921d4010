// pteron compile MODEL.pt2 -o OUT.pte [--target T] [--memory-report] [--json]
//     [--quantize cortex-m|xnnpack|ethos-u --calibration DATA.npz [--int8-io]
//      [--observer minmax|percentile] [--percentile P]]
//     [--constant-method NAME=VALUE ...] [--no-llm-metadata] [--last-token-logits]
//     [--tune [--threads N]]
//
// Calibration data (.npz): one array per model input holding N samples on a leading axis
// (shape [N, *input shape], the input's dtype), named input_0, input_1, ... or, when not so
// named, taken in archive order (np.savez(path, x) works for a one-input model).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "compiler/cost/host_calibration.h"
#include "compiler/partition/registry.h"
#include "runtime/platform/cpu_isa.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/calibrate.h"
#include "tools/cli/commands.h"
#include "tools/cli/npz.h"
#include "tools/cli/runtime_options.h"
#include "tools/cli/tune.h"
#include "tools/firmware/firmware_target.h"

namespace pteron::cli {
namespace {

struct CompileCliOptions {
  std::string model;
  std::string output;
  std::string target = "host";
  std::vector<std::string> backends;  // empty: the target's
  std::vector<std::string> fallback;  // CPU fallback plan's backends; empty: none
  bool memory_report = false;
  bool json = false;
  std::string quantize;    // scheme; empty = float program
  int64_t group_size = 0;  // llm-* schemes: weights per scale (0: the scheme's default)
  std::string calibration;
  bool int8_io = false;
  std::string observer;
  double percentile = 99.99;
  bool strip_debug_info = false;
  std::vector<std::string> constant_methods;  // NAME=VALUE
  bool no_llm_metadata = false;
  bool last_token_logits = false;
  bool tune = false;
  int threads = 0;  // --tune's runs; 0: the runtime's default
};

// Calibration arrays in model-input order (see the file comment).
compiler::CalibrationData read_calibration(const std::string& path) {
  std::vector<NpyArray> arrays;
  try {
    arrays = read_npz(path);
  } catch (const std::exception& e) {
    throw UserError(std::string("--calibration: ") + e.what());
  }
  if (arrays.empty())
    throw UserError(path + ": no arrays (one per model input, samples on axis 0)");
  auto index = [](const NpyArray& a) -> long {
    if (a.name.rfind("input_", 0) != 0) return -1;
    try {
      return std::stol(a.name.substr(6));
    } catch (...) {
      return -1;
    }
  };
  if (std::all_of(arrays.begin(), arrays.end(), [&](const NpyArray& a) { return index(a) >= 0; })) {
    std::stable_sort(arrays.begin(), arrays.end(),
                     [&](const NpyArray& a, const NpyArray& b) { return index(a) < index(b); });
  }
  compiler::CalibrationData data;
  for (NpyArray& a : arrays) data.push_back({a.dtype, a.shape, std::move(a.data)});
  return data;
}

void print_progress(int pass, int passes, size_t done, size_t total) {
  static const bool tty = isatty(2) != 0;
  if (tty) {
    std::fprintf(stderr, "\rcalibrating (pass %d/%d): %zu/%zu samples", pass, passes, done, total);
    if (done == total && pass == passes) std::fprintf(stderr, "\n");
  } else if (done == total || done % std::max<size_t>(1, total / 4) == 0) {
    std::fprintf(stderr, "calibrating (pass %d/%d): %zu/%zu samples\n", pass, passes, done, total);
  }
}

nlohmann::json report_json(const compiler::CompileReport& r, const CompileCliOptions& o) {
  nlohmann::json j;
  j["model"] = o.model;
  j["output"] = o.output;
  j["target"] = r.target.name;
  j["nodes_in"] = r.nodes_in;
  j["kernel_calls"] = r.nodes_out;
  j["passes"] = r.passes.lines;
  j["constants"] = {{"tensors", r.emit.constants},
                    {"bytes", r.emit.constant_bytes},
                    {"deduplicated", r.emit.deduplicated},
                    {"delegate_named_bytes", r.emit.delegate_named_bytes},
                    {"delegate_named_shared", r.emit.named_shared}};
  j["file_bytes"] = r.emit.file_bytes;
  j["graph_info_bytes"] = r.graph_info_bytes;
  j["constant_methods"] = r.constant_methods;
  j["backends"] = r.backends;
  j["default_backends"] = r.default_backends;
  j["backends_left_out"] = r.backends_left_out;
  j["notes"] = r.notes;
  nlohmann::json delegated = nlohmann::json::array();
  for (const auto& d : r.regions) {
    delegated.push_back(
        {{"backend", d.backend}, {"nodes", d.nodes}, {"inputs", d.inputs}, {"outputs", d.outputs}});
    if (!d.report_json.empty()) delegated.back()["report"] = nlohmann::json::parse(d.report_json);
  }
  j["delegated_regions"] = delegated;
  nlohmann::json fallback = nlohmann::json::array();
  for (const auto& d : r.fallback_regions) {
    fallback.push_back({{"backend", d.backend}, {"nodes", d.nodes}});
  }
  j["fallback_regions"] = fallback;
  j["refusals"] = r.refusals;
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : r.memory.arenas) {
    regions.push_back({{"name", region.name},
                       {"memory_id", region.mem_id},
                       {"bytes", region.used},
                       {"capacity", region.capacity}});
  }
  j["memory"] = {{"arenas", regions},
                 {"total_bytes", r.memory.total_arena_bytes},
                 {"lower_bound_bytes", r.memory.peak_live_bytes},
                 {"in_place_outputs", r.memory.in_place_outputs},
                 {"efficiency", r.memory.efficiency()}};
  j["seconds"] = {{"load", r.seconds_load},
                  {"passes", r.seconds_passes},
                  {"plan", r.seconds_plan},
                  {"emit", r.seconds_emit},
                  {"total", r.seconds_load + r.seconds_passes + r.seconds_plan + r.seconds_emit}};
  return j;
}

// Targets with a [budget] (microcontrollers): estimate RAM and flash from the written program
// and refuse it, removing the file, when it does not fit.
std::string check_budget(const CompileCliOptions& o, const std::string& target_path,
                         nlohmann::json& j) {
  firmware::FirmwareTarget target;
  firmware::BudgetEstimate b;
  try {
    target = firmware::load_firmware_target(target_path);
    if (!target.has_budget) return "";
    b = firmware::estimate_budget(
        target, firmware::measure_program(o.output, "forward", target.target.kernels));
  } catch (const std::exception& e) {
    throw UserError(o.output + ": cannot estimate the budget: " + e.what());
  }
  if (!b.over.empty()) {
    std::remove(o.output.c_str());
    throw UserError(o.model + ": over budget for " + target.target.name + ": " + b.over);
  }
  j["budget"] = {{"ram", b.ram()},      {"ram_budget", target.ram_budget},
                 {"flash", b.flash()},  {"flash_budget", target.flash_budget},
                 {"arenas", b.arenas},  {"scratch", b.scratch},
                 {"method", b.method},  {"stack", b.stack},
                 {"state", b.state},    {"code", b.code},
                 {"program", b.program}};
  return firmware::describe_budget(target, b);
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// A statically quantized int8 program: every --quantize scheme but the LLM weight schemes.
bool statically_quantized(const CompileCliOptions& o) {
  return !o.quantize.empty() && !compiler::is_llm_scheme(o.quantize);
}

// --tune: compiles the other candidate backend lists next to `first` (already at o.output),
// times them all on this machine and keeps the fastest at o.output. Returns its result; the
// measurements go to `report`.
compiler::CompileResult tune_backends(const CompileCliOptions& o, compiler::CompileOptions options,
                                      compiler::CompileResult first, nlohmann::json& report) {
  if (first.report.target.name != "host") {
    std::remove(o.output.c_str());
    throw UserError(
        "--tune runs the candidate programs on this machine: it needs the host "
        "target (got " +
        first.report.target.name + ")");
  }
  const std::vector<std::vector<std::string>> candidates =
      tune_candidates(first.report.backends, statically_quantized(o));
  std::vector<compiler::CompileResult> results;
  std::vector<std::string> paths = {o.output};
  results.push_back(std::move(first));
  for (size_t i = 1; i < candidates.size(); ++i) {
    options.backends = candidates[i];
    options.output_path = o.output + ".tune" + std::to_string(i) + ".pte";
    try {
      results.push_back(compiler::compile_pt2(o.model, options));
      paths.push_back(options.output_path);
    } catch (const compiler::CompileError& e) {
      results.front().report.notes.push_back("--tune: " + joined(candidates[i]) +
                                             " did not compile: " + e.what());
    }
  }
  std::vector<TunedProgram> timed;
  try {
    timed = time_programs(paths);
  } catch (const UserError& e) {
    for (size_t i = 1; i < paths.size(); ++i) std::remove(paths[i].c_str());
    throw UserError(std::string("--tune: ") + e.what());
  } catch (...) {
    for (size_t i = 1; i < paths.size(); ++i) std::remove(paths[i].c_str());
    throw;
  }
  const size_t best = fastest(timed);
  if (best != 0 && std::rename(paths[best].c_str(), o.output.c_str()) != 0)
    throw UserError(o.output + ": cannot replace it with the tuned program");
  for (size_t i = 1; i < paths.size(); ++i)
    if (i != best) std::remove(paths[i].c_str());
  nlohmann::json measured = nlohmann::json::array();
  for (size_t i = 0; i < timed.size(); ++i) {
    measured.push_back({{"backends", joined(results[i].report.backends)},
                        {"median_ms", timed[i].median_ms},
                        {"round_medians_ms", timed[i].round_medians_ms},
                        {"iterations", timed[i].iterations}});
  }
  report = {{"candidates", measured},
            {"chosen", joined(results[best].report.backends)},
            {"threads", num_threads()},
            {"isa", cpu_isa_name()},
            {"rounds", timed.front().round_medians_ms.size()}};
  return std::move(results[best]);
}

void run(const CompileCliOptions& o) {
  if (o.threads != 0 && !o.tune) throw UserError("--threads is for --tune's measurements");
  if (o.tune) apply_runtime_options({o.threads, ""});  // range-checked before any compile
  compiler::CompileResult result;
  compiler::CompileOptions options;
  options.target = o.target;
  options.output_path = o.output;
  options.strip_debug_info = o.strip_debug_info;
  options.backends = o.backends;
  options.fallback = o.fallback;
  options.llm_metadata = !o.no_llm_metadata;
  options.last_token_logits = o.last_token_logits;
  try {
    for (const std::string& text : o.constant_methods)
      options.constant_methods.push_back(compiler::parse_constant_method(text));
  } catch (const compiler::CompileError& e) {
    throw UserError(e.what());
  }
  compiler::QuantizeOptions quantize;
  compiler::LlmQuantizeOptions llm;
  if (o.group_size != 0 && !compiler::is_llm_scheme(o.quantize)) {
    throw UserError("--group-size needs --quantize llm-8da4w, llm-int8 or llm-int4");
  }
  if (compiler::is_llm_scheme(o.quantize)) {
    if (!o.calibration.empty() || o.int8_io) {
      throw UserError("--quantize " + o.quantize + " takes no --calibration or --int8-io");
    }
    if (o.group_size < 0) throw UserError("--group-size must be positive");
    llm.scheme = compiler::parse_llm_scheme(o.quantize);
    llm.group_size = o.group_size;
    options.llm_quantize = &llm;
    // The quantized ops are the optimized library's: use it unless backends are named.
    if (options.backends.empty()) options.backends = {"optimized", "portable"};
  } else if (!o.quantize.empty()) {
    try {
      quantize.scheme = compiler::parse_quant_scheme(o.quantize);
      if (!o.observer.empty()) quantize.observer = compiler::parse_quant_observer(o.observer);
    } catch (const compiler::CompileError& e) {
      throw UserError(e.what());
    }
    if (o.calibration.empty())
      throw UserError("--quantize needs --calibration DATA.npz (samples of each input)");
    quantize.calibration = read_calibration(o.calibration);
    quantize.int8_io = o.int8_io;
    quantize.percentile = o.percentile;
    if (!o.json) quantize.progress = print_progress;
    options.quantize = &quantize;
  } else if (!o.calibration.empty() || o.int8_io) {
    throw UserError("--calibration and --int8-io need --quantize SCHEME");
  }
  // The cost model's rates are this machine's: only a program for the host may use them.
  compiler::cost::HostCalibration host;
  try {
    if (o.target == "host") host = compiler::cost::host_calibration(num_threads());
    // The default program is the measured choice from the first compile on: a machine without
    // a calibration is measured now (once; --tune times this model's candidates instead).
    if (!host.loaded && !host.cache_path.empty() && options.backends.empty() && !o.tune)
      host = calibrate_on_first_use(std::move(host), num_threads(), o.json);
  } catch (const compiler::CompileError& e) {
    throw UserError(e.what());
  }
  const std::optional<compiler::cost::LoadedCalibration>& calibration = host.loaded;
  if (calibration) options.calibration = &calibration->calibration;
  options.calibration_note = host.note;
  try {
    result = compiler::compile_pt2(o.model, options);
  } catch (const compiler::CompileError& e) {
    const std::string what = e.what();
    throw UserError(what.rfind(o.model, 0) == 0 ? what
                                                : o.model + ": " + what);  // name the file once
  }
  nlohmann::json tuned;
  if (o.tune) result = tune_backends(o, options, std::move(result), tuned);
  if (!calibration && statically_quantized(o) && !o.tune && result.report.default_backends &&
      result.report.target.name == "host") {
    // Without a calibration XNNPACK takes every int8 region it can; pteron's int8 kernel
    // library is faster on some models and CPUs, slower on others, and only a measurement says.
    result.report.notes.push_back(
        "int8 program on the host's default backends without a calibration of this machine: "
        "XNNPACK took every int8 region it runs. `pteron tune` measures this machine once, and "
        "compiles then choose per region between XNNPACK and pteron's int8 kernels; --tune "
        "times this model's candidate programs");
  }
  const compiler::CompileReport& r = result.report;
  nlohmann::json j = report_json(r, o);
  if (o.tune) j["tune"] = tuned;
  j["calibration"] = calibration
                         ? nlohmann::json{{"path", calibration->path}, {"machine", r.calibration}}
                         : nlohmann::json(nullptr);
  if (r.quantize) {
    nlohmann::json io = nlohmann::json::array();
    for (const auto* list : {&r.quantize->inputs, &r.quantize->outputs}) {
      for (const auto& q : *list) {
        io.push_back({{"kind", list == &r.quantize->inputs ? "input" : "output"},
                      {"index", q.index},
                      {"name", q.name},
                      {"scale", q.qparams.scale},
                      {"zero_point", q.qparams.zp}});
      }
    }
    j["quantize"] = {{"scheme", r.quantize->scheme},
                     {"observer", r.quantize->observer},
                     {"samples", r.quantize->samples},
                     {"quantized_ops", r.quantize->quantized_ops},
                     {"quantized_activations", r.quantize->quantized_values},
                     {"weight_bytes", r.quantize->weight_bytes},
                     {"int8_io", io}};
  }
  const std::string budget = check_budget(o, r.target.path, j);
  // On stderr, so a script reading --json output still shows them.
  for (const std::string& note : r.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s -> %s (target %s): %zu nodes -> %zu kernel calls, %.2f s\n", o.model.c_str(),
              o.output.c_str(), r.target.name.c_str(), r.nodes_in, r.nodes_out,
              j["seconds"]["total"].get<double>());
  std::printf("  backends: %s%s\n", joined(r.backends).c_str(),
              r.default_backends ? " (the target's default; --backends to choose)" : "");
  if (!r.calibration.empty())
    std::printf("  cost model: this machine's calibration (%s)\n", r.calibration.c_str());
  for (const std::string& b : r.backends_left_out)
    std::printf("  note: the target's backend '%s' is not in this build: left out\n", b.c_str());
  if (o.tune) {
    std::printf("  tuned on this machine (%d threads, %s):", tuned["threads"].get<int>(),
                tuned["isa"].get<std::string>().c_str());
    for (const auto& c : tuned["candidates"])
      std::printf(" %s %.3f ms;", c["backends"].get<std::string>().c_str(),
                  c["median_ms"].get<double>());
    std::printf(" kept %s\n", tuned["chosen"].get<std::string>().c_str());
  }
  std::printf("  constants: %zu tensors, %.1f KiB (%zu deduplicated); file %.1f KiB\n",
              r.emit.constants, r.emit.constant_bytes / 1024.0, r.emit.deduplicated,
              r.emit.file_bytes / 1024.0);
  if (r.emit.delegate_named_bytes > 0) {
    std::printf(
        "  delegate weights: %.1f KiB in the program's named data, %zu reference(s) "
        "shared\n",
        r.emit.delegate_named_bytes / 1024.0, r.emit.named_shared);
  }
  if (r.quantize) {
    for (const auto& line : r.quantize->lines) std::printf("  %s\n", line.c_str());
  }
  std::printf("  planned memory: %.1f KiB (lower bound %.1f KiB, efficiency %.1f%%)\n",
              r.memory.total_arena_bytes / 1024.0, r.memory.peak_live_bytes / 1024.0,
              100 * r.memory.efficiency());
  for (const auto& d : r.regions) {
    std::printf("  delegated to %s: %zu nodes (%zu inputs, %zu outputs)\n", d.backend.c_str(),
                d.nodes, d.inputs, d.outputs);
  }
  if (!o.fallback.empty()) {
    std::printf("  CPU fallback plan 'forward:cpu' (runs when a backend above is absent):");
    for (const auto& d : r.fallback_regions)
      std::printf(" %s %zu nodes;", d.backend.c_str(), d.nodes);
    std::printf(" the rest on kernels\n");
  }
  if (!r.constant_methods.empty()) {
    std::printf("  constant methods:");
    for (size_t i = 0; i < r.constant_methods.size(); ++i)
      std::printf("%s %s", i ? "," : "", r.constant_methods[i].c_str());
    std::printf("\n");
  }
  if (!budget.empty()) std::printf("  budget: %s\n", budget.c_str());
  if (o.memory_report) {
    std::printf("memory plan:\n%s", compiler::describe_memory_plan(r.memory).c_str());
    std::printf("passes:\n");
    for (const auto& line : r.passes.lines) std::printf("  %s\n", line.c_str());
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto opts = std::make_shared<CompileCliOptions>();
  CLI::App* cmd =
      app.add_subcommand("compile", "Compile a torch.export archive (.pt2) into a program (.pte)");
  cmd->add_option("model", opts->model, "exported model (torch.export.save)")->required();
  cmd->add_option("-o,--output", opts->output, "program file to write")->required();
  cmd->add_option("--target", opts->target, "target name (targets/NAME.toml) or file")
      ->capture_default_str();
  std::string backend_help =
      "backends then kernel libraries, in order (e.g. xnnpack,optimized,portable); default: the "
      "target's. A backend's options follow its name, NAME:KEY=VALUE";
  for (const std::string& line : compiler::backend_option_help()) backend_help += "\n  " + line;
  cmd->add_option("--backends", opts->backends, backend_help)->delimiter(',');
  cmd->add_option("--fallback", opts->fallback,
                  "also carry a CPU plan 'forward:cpu' compiled with these backends (e.g. "
                  "xnnpack,portable), run when the device lacks a backend of the main plan")
      ->delimiter(',');
  cmd->add_flag("--memory-report", opts->memory_report, "print the memory plan and pass summary");
  cmd->add_flag("--json", opts->json, "machine-readable report");
  cmd->add_option(
      "--quantize", opts->quantize,
      "post-training int8 quantization for cortex-m, xnnpack or ethos-u; or LLM weights: "
      "llm-8da4w, llm-int8, llm-int4 (no calibration; optimized kernels)");
  cmd->add_option(
      "--group-size", opts->group_size,
      "llm-* schemes: weights per scale (int4: a multiple of 32; default 32, int8 per channel)");
  cmd->add_option(
      "--calibration", opts->calibration,
      "calibration samples (.npz): per input an array [N, *input shape], named input_0, ...");
  cmd->add_flag("--int8-io", opts->int8_io,
                "int8 program inputs and outputs (no float crosses the boundary)");
  cmd->add_option("--observer", opts->observer,
                  "activation ranges: minmax or percentile (default per scheme)");
  cmd->add_option("--percentile", opts->percentile, "percentile kept by the percentile observer")
      ->capture_default_str();
  cmd->add_flag("--strip-debug-info", opts->strip_debug_info,
                "leave out the graph info (inspect --delegation/--graph, profiles use it)");
  cmd->add_option(
      "--constant-method", opts->constant_methods,
      "a method returning a constant, as ExecuTorch's constant_methods (repeatable): "
      "NAME=VALUE with VALUE an int, true/false, a float, a \"string\" or a list [a,b], "
      "e.g. get_max_seq_len=128, get_eos_ids=[2,32000]");
  cmd->add_flag(
      "--no-llm-metadata", opts->no_llm_metadata,
      "do not write the LLM metadata a KV-cache decoder implies (get_max_seq_len from the "
      "cache length, use_kv_cache, get_vocab_size, enable_dynamic_shape, get_n_layers, "
      "get_n_kv_heads, get_head_dim)");
  cmd->add_flag("--last-token-logits", opts->last_token_logits,
                "a decoder's logits [1, T, vocab] for the last token only ([1, 1, vocab]): prefill "
                "runs the vocabulary projection once (generation reads only that row)");
  cmd->add_flag("--tune", opts->tune,
                "host target: compile the candidate backend lists (the target's, and its kernel "
                "libraries alone), time each here and keep the fastest");
  cmd->add_option("--threads", opts->threads,
                  "threads for --tune's runs (0: the runtime's default)");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace pteron::cli
