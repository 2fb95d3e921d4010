// pteron tune [--threads N] [--rounds R] [--output FILE] [--json]: measures this machine's
// calibration for the compiler's cost model (tools/cli/calibrate.h) and caches it, so that
// `pteron compile` for the host chooses per region between XNNPACK and pteron's kernels.

#include <cstdio>
#include <nlohmann/json.hpp>

#include "compiler/cost/host_calibration.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/calibrate.h"
#include "tools/cli/commands.h"
#include "tools/cli/runtime_options.h"

namespace pteron::cli {
namespace {

struct TuneOptions {
  int threads = 0;
  int rounds = kTuneRounds;
  std::string output;  // default: this machine's cache file
  bool json = false;
};

void tune(const TuneOptions& o) {
  if (o.rounds < 1 || o.rounds > 20) throw UserError("--rounds must be 1 to 20");
  apply_runtime_options({o.threads, ""});
  const int threads = num_threads();
  const std::string machine = compiler::cost::machine_description(threads);
  const std::string path =
      o.output.empty() ? compiler::cost::calibration_cache_path(machine) : o.output;
  if (!o.json)
    std::fprintf(stderr, "[tune] %s: timing each op class on each engine (a minute or less)\n",
                 machine.c_str());
  const compiler::cost::Calibration c = calibrate(threads, o.rounds, [&](const std::string& l) {
    if (!o.json) std::fprintf(stderr, "[tune] %s\n", l.c_str());
  });
  write_calibration(path, c);
  if (o.json) {
    nlohmann::json j = nlohmann::json::parse(c.to_json());
    j["path"] = path;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("calibration written to %s\n", path.c_str());
  }
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto opts = std::make_shared<TuneOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Measure this machine for the compiler's cost model (once per machine)");
  cmd->add_option("--threads", opts->threads,
                  "threads the programs will run with (default: the runtime's)");
  cmd->add_option("--rounds", opts->rounds, "alternating timing rounds")->capture_default_str();
  cmd->add_option("--output", opts->output,
                  "where to write it (default: this machine's cache file, which host compiles "
                  "read)");
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->callback([opts] { tune(*opts); });
}

}  // namespace pteron::cli
