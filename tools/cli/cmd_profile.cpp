// pteron profile PROGRAM.pte [--inputs in.npz] [--iters N] [--warmup W] -o PREFIX [--json]
// Runs a method with the event tracer attached and writes PREFIX.etdp (ETDump) and
// PREFIX.json (Chrome trace, opens in Perfetto), then prints where the time went.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/host/trace_files.h"
#include "runtime/trace/event_tracer.h"
#include "tools/cli/commands.h"
#include "tools/cli/method_inputs.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/runtime_options.h"
#include "tools/cli/trace_table.h"

namespace pteron::cli {
namespace {

struct ProfileOptions {
  std::string program;
  std::string method = "forward";
  std::string inputs;
  uint64_t seed = 0;
  int iters = 10;
  int warmup = 2;
  std::string output;
  size_t top = 20;
  int module_depth = 0;
  RuntimeOptions runtime;
  bool json = false;
};

void write_file(const std::string& path, const void* data, size_t size) {
  std::ofstream f(path, std::ios::binary);
  if (!f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size))) {
    throw UserError(path + ": cannot write");
  }
}

void profile(const ProfileOptions& o) {
  if (o.iters < 1) throw UserError("--iters must be at least 1");
  apply_runtime_options(o.runtime);
  auto program = open_program(o.program);
  auto host = load_method(*program, o.program, o.method);
  Method& method = host->method();
  std::vector<NpyArray> inputs =
      gather_inputs({o.program, o.method, o.inputs, true, o.seed}, method.meta());
  BoundInputs bound;
  // Inputs planned into the arena are overwritten once dead, so every run sets them again
  // (outside the traced execute()).
  const std::string context = o.inputs.empty() ? o.program : o.inputs;
  for (int i = 0; i < o.warmup; ++i) {
    bound.bind(method, inputs, context);
    if (Error e = method.execute(); e != Error::Ok) throw_runtime_error(o.program, e);
  }

  // One traced run first (not reported) counts the events a run makes: delegates may report
  // one per internal node (a Vulkan region: one per dispatch), far more than the
  // instructions. The buffer then holds every traced run; the tracer counts what does not fit.
  std::vector<TraceEvent> buffer(std::max<size_t>(method.num_instructions() * 4 + 8, 1 << 16));
  EventTracer tracer({buffer.data(), buffer.size()});
  tracer.attach(method);
  method.set_observer(&tracer);
  bound.bind(method, inputs, context);
  if (Error e = method.execute(); e != Error::Ok) throw_runtime_error(o.program, e);
  const size_t per_run = std::max(tracer.events().size(), method.num_instructions() * 4);
  buffer.assign((per_run + 8) * static_cast<size_t>(o.iters), TraceEvent{});
  tracer = EventTracer({buffer.data(), buffer.size()});
  tracer.attach(method);
  for (int i = 0; i < o.iters; ++i) {
    bound.bind(method, inputs, context);
    if (Error e = method.execute(); e != Error::Ok) throw_runtime_error(o.program, e);
  }
  method.set_observer(nullptr);

  const std::vector<uint8_t> etdump = etdump_bytes(tracer);
  const std::string chrome = chrome_trace_json(tracer);
  write_file(o.output + ".etdp", etdump.data(), etdump.size());
  write_file(o.output + ".json", chrome.data(), chrome.size());

  const std::vector<TraceRow> rows = rows_from_tracer(tracer);
  nlohmann::json summary = summarize_trace(rows);
  add_module_breakdown(summary, rows, program_graph_info(*program), o.module_depth);
  summary["program"] = o.program;
  summary["etdump"] = o.output + ".etdp";
  summary["chrome_trace"] = o.output + ".json";
  summary["dropped_events"] = tracer.dropped();
  if (o.json) {
    std::printf("%s\n", summary.dump(2).c_str());
    return;
  }
  std::printf("%s: method '%s', %zu instruction(s), %d warmup + %d traced run(s)\n",
              o.program.c_str(), o.method.c_str(), method.num_instructions(), o.warmup, o.iters);
  print_trace_summary(summary, o.top);
  std::printf("\nwrote %s.etdp (ETDump) and %s.json (Chrome trace: open in ui.perfetto.dev)\n",
              o.output.c_str(), o.output.c_str());
}

}  // namespace

void add_profile_command(CLI::App& app) {
  auto opts = std::make_shared<ProfileOptions>();
  CLI::App* cmd =
      app.add_subcommand("profile", "Run a method with the event tracer and show where time goes");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option("--method", opts->method, "method to run")->capture_default_str();
  cmd->add_option("--inputs", opts->inputs, "inputs as .npz (default: seeded random inputs)");
  cmd->add_option("--seed", opts->seed, "seed for random inputs")->capture_default_str();
  cmd->add_option("--iters", opts->iters, "traced runs")->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "untraced runs first")->capture_default_str();
  cmd->add_option("-o,--output", opts->output, "writes OUTPUT.etdp and OUTPUT.json")->required();
  cmd->add_option("--top", opts->top, "rows of the per-op table")->capture_default_str();
  cmd->add_option("--module-depth", opts->module_depth,
                  "module path components for the per-module table (0: full path less the leaf)")
      ->capture_default_str();
  add_runtime_options(cmd, opts->runtime);
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->callback([opts] { profile(*opts); });
}

}  // namespace pteron::cli
