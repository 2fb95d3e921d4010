// pteron debug PROGRAM.pte --pt2 MODEL.pt2 [--inputs in.npz] [--rtol R] [--atol A] [--json]
// Runs MODEL's graph on the portable (reference) kernels and PROGRAM on its own kernels and
// delegates with the same inputs, compares every intermediate both expose, and names the first
// node beyond tolerance with its source line. Exit 0 either way: a mismatch is a finding.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "compiler/debug/numerics_debug.h"
#include "compiler/report/delegation_report.h"
#include "compiler/report/graph_info.h"
#include "tools/cli/commands.h"
#include "tools/cli/method_inputs.h"
#include "tools/cli/program_tools.h"

namespace pteron::cli {
namespace {

struct DebugOptions {
  std::string program;
  std::string pt2;
  std::string inputs;
  uint64_t seed = 0;
  double rtol = 1e-4;
  double atol = 1e-5;
  bool all = false;
  bool json = false;
};

void debug(const DebugOptions& o) {
  auto program = open_program(o.program);
  std::optional<std::string> info;
  try {
    info = compiler::read_named_data(program->program(), compiler::kGraphInfoKey);
  } catch (const std::exception& e) {
    throw UserError(o.program + ": " + e.what());
  }
  if (!info) throw UserError(o.program + ": " + compiler::kNoGraphInfo);
  auto host = load_method(*program, o.program, "forward");
  std::vector<NpyArray> arrays =
      gather_inputs({o.program, "forward", o.inputs, true, o.seed}, host->method().meta());
  compiler::CalibrationData inputs;
  for (const NpyArray& a : arrays) {
    compiler::CalibrationInput in;
    in.dtype = a.dtype;
    in.shape = {1};
    in.shape.insert(in.shape.end(), a.shape.begin(), a.shape.end());
    in.data = a.data;
    inputs.push_back(std::move(in));
  }
  std::ifstream f(o.program, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                   std::istreambuf_iterator<char>());

  compiler::NumericsReport report;
  try {
    report = compiler::debug_numerics(bytes, *info, o.pt2, inputs, {o.rtol, o.atol});
  } catch (const std::exception& e) {
    throw UserError(std::string(e.what()));
  }

  nlohmann::json j;
  j["program"] = o.program;
  j["pt2"] = o.pt2;
  j["tolerance"] = {{"rtol", o.rtol}, {"atol", o.atol}};
  j["compared"] = report.checks.size();
  j["not_compared"] = report.not_compared;
  j["checks"] = nlohmann::json::array();
  for (const auto& c : report.checks) {
    j["checks"].push_back({{"instruction", c.instruction},
                           {"node", c.node},
                           {"op", c.op},
                           {"source", c.source},
                           {"runs_on", c.runs_on},
                           {"max_abs_error", c.max_abs_error},
                           {"reference_max_abs", c.reference_max_abs},
                           {"within", c.within}});
  }
  j["first_beyond"] =
      report.first_beyond < 0 ? nlohmann::json(nullptr) : j["checks"][report.first_beyond];
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf(
      "%s vs %s on the reference kernels: %zu intermediate(s) compared, %zu not comparable\n",
      o.program.c_str(), o.pt2.c_str(), report.checks.size(), report.not_compared);
  std::printf("tolerance: max|program - reference| <= %g + %g * max|reference|\n\n", o.atol,
              o.rtol);
  std::printf("%5s  %-36s %-28s %-12s %12s %12s\n", "instr", "node", "op", "runs on", "max |err|",
              "max |ref|");
  for (size_t i = 0; i < report.checks.size(); ++i) {
    const auto& c = report.checks[i];
    const bool show = o.all || !c.within || i + 3 >= report.checks.size() || i < 3;
    if (!show) continue;
    std::printf("%5zu  %-36.36s %-28.28s %-12.12s %12.3g %12.3g%s\n", c.instruction, c.node.c_str(),
                c.op.c_str(), c.runs_on.c_str(), c.max_abs_error, c.reference_max_abs,
                c.within ? "" : "  BEYOND");
  }
  if (report.first_beyond < 0) {
    std::printf("\nall intermediates within tolerance%s\n",
                o.all ? "" : " (--all lists every one)");
    return;
  }
  const auto& c = report.checks[report.first_beyond];
  std::printf(
      "\nfirst node beyond tolerance: %s (%s) at instruction %zu on %s, max |err| %.3g (max |ref| "
      "%.3g)%s%s\n",
      c.node.c_str(), c.op.c_str(), c.instruction, c.runs_on.c_str(), c.max_abs_error,
      c.reference_max_abs, c.source.empty() ? "" : ", source ", c.source.c_str());
}

}  // namespace

void add_debug_command(CLI::App& app) {
  auto opts = std::make_shared<DebugOptions>();
  CLI::App* cmd = app.add_subcommand(
      "debug", "Compare a program's intermediates with its model on the reference kernels");
  cmd->add_option("program", opts->program, "program file (.pte, compiled with graph info)")
      ->required();
  cmd->add_option("--pt2", opts->pt2, "the model the program was compiled from (.pt2)")->required();
  cmd->add_option("--inputs", opts->inputs, "inputs as .npz (default: seeded random inputs)");
  cmd->add_option("--seed", opts->seed, "seed for random inputs")->capture_default_str();
  cmd->add_option("--rtol", opts->rtol, "relative tolerance (of max|reference|)")
      ->capture_default_str();
  cmd->add_option("--atol", opts->atol, "absolute tolerance")->capture_default_str();
  cmd->add_flag("--all", opts->all, "list every comparison, not just mismatches and the ends");
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->callback([opts] { debug(*opts); });
}

}  // namespace pteron::cli
