// pteron compile MODEL.pt2 -o OUT.pte [--target T] [--memory-report] [--json]
#include <nlohmann/json.hpp>

#include <cstdio>

#include "compiler/compile.h"
#include "compiler/compile_error.h"
#include "tools/cli/commands.h"

namespace pteron::cli {
namespace {

struct CompileCliOptions {
  std::string model;
  std::string output;
  std::string target = "host";
  std::vector<std::string> backends;
  bool memory_report = false;
  bool json = false;
};

nlohmann::json report_json(const compiler::CompileReport& r, const CompileCliOptions& o) {
  nlohmann::json j;
  j["model"] = o.model;
  j["output"] = o.output;
  j["target"] = r.target.name;
  j["nodes_in"] = r.nodes_in;
  j["kernel_calls"] = r.nodes_out;
  j["passes"] = r.passes.lines;
  j["constants"] = {{"tensors", r.emit.constants}, {"bytes", r.emit.constant_bytes},
                    {"deduplicated", r.emit.deduplicated}};
  j["file_bytes"] = r.emit.file_bytes;
  nlohmann::json regions = nlohmann::json::array();
  for (const auto& region : r.memory.regions) {
    regions.push_back({{"name", region.name}, {"memory_id", region.mem_id}, {"bytes", region.used},
                       {"capacity", region.capacity}});
  }
  j["memory"] = {{"arenas", regions},
                 {"total_bytes", r.memory.total_arena_bytes},
                 {"lower_bound_bytes", r.memory.peak_live_bytes},
                 {"efficiency", r.memory.efficiency()}};
  j["seconds"] = {{"load", r.seconds_load}, {"passes", r.seconds_passes}, {"plan", r.seconds_plan},
                  {"emit", r.seconds_emit},
                  {"total", r.seconds_load + r.seconds_passes + r.seconds_plan + r.seconds_emit}};
  return j;
}

void run(const CompileCliOptions& o) {
  compiler::CompileResult result;
  compiler::CompileOptions options;
  options.target = o.target;
  options.backends = o.backends;
  options.output_path = o.output;
  try {
    result = compiler::compile_pt2(o.model, options);
  } catch (const compiler::CompileError& e) {
    const std::string what = e.what();
    throw UserError(what.rfind(o.model, 0) == 0 ? what : o.model + ": " + what);  // name the file once
  }
  const compiler::CompileReport& r = result.report;
  const nlohmann::json j = report_json(r, o);
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("%s -> %s (target %s): %zu nodes -> %zu kernel calls, %.2f s\n", o.model.c_str(),
              o.output.c_str(), r.target.name.c_str(), r.nodes_in, r.nodes_out, j["seconds"]["total"].get<double>());
  std::printf("  constants: %zu tensors, %.1f KiB (%zu deduplicated); file %.1f KiB\n", r.emit.constants,
              r.emit.constant_bytes / 1024.0, r.emit.deduplicated, r.emit.file_bytes / 1024.0);
  std::printf("  planned memory: %.1f KiB (lower bound %.1f KiB, efficiency %.1f%%)\n",
              r.memory.total_arena_bytes / 1024.0, r.memory.peak_live_bytes / 1024.0, 100 * r.memory.efficiency());
  if (o.memory_report) {
    std::printf("memory plan:\n%s", compiler::describe_memory_plan(r.memory).c_str());
    std::printf("passes:\n");
    for (const auto& line : r.passes.lines) std::printf("  %s\n", line.c_str());
  }
}

}  // namespace

void add_compile_command(CLI::App& app) {
  auto opts = std::make_shared<CompileCliOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a torch.export archive (.pt2) into a program (.pte)");
  cmd->add_option("model", opts->model, "exported model (torch.export.save)")->required();
  cmd->add_option("-o,--output", opts->output, "program file to write")->required();
  cmd->add_option("--target", opts->target, "target name (targets/NAME.toml) or file")->capture_default_str();
  cmd->add_option("--backends", opts->backends,
                  "backends then kernel libraries, in order (e.g. xnnpack,optimized,portable); "
                  "default: the target's")
      ->delimiter(',');
  cmd->add_flag("--memory-report", opts->memory_report, "print the memory plan and pass summary");
  cmd->add_flag("--json", opts->json, "machine-readable report");
  cmd->callback([opts] { run(*opts); });
}

}  // namespace pteron::cli
