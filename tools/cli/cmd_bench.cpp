// pteron bench PROGRAM.pte [--inputs x.npz] [--warmup 3] [--iters 20] [--threads N]
// [--kernels LIBS] [--json]: load time, latency (median, p90, min, max), peak RSS and planned
// arena bytes of one method, on given or seeded random inputs.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "runtime/host/peak_rss.h"
#include "runtime/platform/cpu_isa.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/commands.h"
#include "tools/cli/method_inputs.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/runtime_options.h"

namespace pteron::cli {
namespace {

struct BenchOptions {
  std::string program;
  std::string method = "forward";
  std::string inputs;
  uint64_t seed = 0;
  int warmup = 3;
  int iters = 20;
  bool json = false;
  RuntimeOptions runtime;
};

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// CPU time of the whole process (every thread), in ms.
double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

// The 1-minute load average (-1 when unknown): a figure taken above the core count is noise.
double load_average_1m() {
  double load[1];
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double p) {
  const size_t rank =
      static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

void bench(const BenchOptions& o) {
  if (o.iters < 1)
    throw UserError("--iters must be at least 1 (got " + std::to_string(o.iters) + ")");
  if (o.warmup < 0)
    throw UserError("--warmup must not be negative (got " + std::to_string(o.warmup) + ")");
  apply_runtime_options(o.runtime);

  auto start = std::chrono::steady_clock::now();
  auto program = open_program(o.program);
  auto host = load_method(*program, o.program, o.method);
  const double load_ms = ms_since(start);
  Method& method = host->method();
  std::vector<NpyArray> inputs =
      gather_inputs({o.program, o.method, o.inputs, /*random_inputs=*/true, o.seed}, method.meta());
  BoundInputs bound;
  const std::string context = o.inputs.empty() ? o.program : o.inputs;

  // Inputs planned into the arena are overwritten once dead, so every run sets them again
  // (outside the timed region).
  for (int i = 0; i < o.warmup; ++i) {
    bound.bind(method, inputs, context);
    const Error e = method.execute();
    if (e != Error::Ok) throw_runtime_error(o.program, e);
  }
  // CPU time next to wall time: threads that spin or lose their cores show up as a gap.
  std::vector<double> times, cpu_times;
  for (int i = 0; i < o.iters; ++i) {
    bound.bind(method, inputs, context);
    const double cpu_start = process_cpu_ms();
    start = std::chrono::steady_clock::now();
    const Error e = method.execute();
    times.push_back(ms_since(start));
    cpu_times.push_back(process_cpu_ms() - cpu_start);
    if (e != Error::Ok) throw_runtime_error(o.program, e);
  }
  std::vector<double> sorted = times, sorted_cpu = cpu_times;
  std::sort(sorted.begin(), sorted.end());
  std::sort(sorted_cpu.begin(), sorted_cpu.end());
  double mean = 0;
  for (double t : times) mean += t / static_cast<double>(times.size());

  nlohmann::json j;
  j["program"] = o.program;
  j["method"] = o.method;
  j["inputs"] = o.inputs.empty() ? "random (seed " + std::to_string(o.seed) + ")" : o.inputs;
  j["threads"] = num_threads();
  j["isa"] = cpu_isa_name();
  j["kernels"] = o.runtime.kernels.empty() ? "default" : o.runtime.kernels;
  j["kernel_libraries"] = kernel_libraries_used(method);
  j["warmup"] = o.warmup;
  j["iterations"] = o.iters;
  j["load_ms"] = load_ms;
  j["median_ms"] = percentile(sorted, 50);
  j["p90_ms"] = percentile(sorted, 90);
  j["min_ms"] = sorted.front();
  j["max_ms"] = sorted.back();
  j["mean_ms"] = mean;
  j["median_cpu_ms"] = percentile(sorted_cpu, 50);
  j["load_average_1m"] = load_average_1m();
  j["peak_rss_bytes"] = host::peak_rss_bytes();
  j["planned_bytes"] = host->planned_bytes();
  // Weights the kernels packed for their micro-kernels on the first call, kept with the program.
  j["packed_constant_bytes"] = program->constant_cache().bytes();
  j["times_ms"] = times;
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::string libs;
  for (const auto& [lib, n] : j["kernel_libraries"].items())
    libs += (libs.empty() ? "" : ", ") + lib + " " + n.dump();
  std::printf("%s: method '%s', %d thread(s), ISA %s, kernels %s (%s), inputs %s\n",
              o.program.c_str(), o.method.c_str(), num_threads(), cpu_isa_name(),
              j["kernels"].get<std::string>().c_str(), libs.c_str(),
              j["inputs"].get<std::string>().c_str());
  std::printf("  %-14s %10.3f ms\n", "load time", load_ms);
  std::printf("  %-14s %10.3f ms   (%d iterations after %d warm-up)\n", "median",
              j["median_ms"].get<double>(), o.iters, o.warmup);
  std::printf("  %-14s %10.3f ms\n", "median CPU", j["median_cpu_ms"].get<double>());
  std::printf("  %-14s %10.3f ms\n", "p90", j["p90_ms"].get<double>());
  std::printf("  %-14s %10.3f ms\n", "min", sorted.front());
  std::printf("  %-14s %10.3f ms\n", "max", sorted.back());
  std::printf("  %-14s %10.1f KiB\n", "peak RSS",
              static_cast<double>(host::peak_rss_bytes()) / 1024);
  std::printf("  %-14s %10.2f\n", "load average", j["load_average_1m"].get<double>());
  std::printf("  %-14s %10.1f KiB\n", "planned arena",
              static_cast<double>(host->planned_bytes()) / 1024);
  std::printf("  %-14s %10.1f KiB\n", "packed weights",
              static_cast<double>(program->constant_cache().bytes()) / 1024);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  CLI::App* cmd =
      app.add_subcommand("bench", "Time a method: load time, latency percentiles, memory");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option("--method", opts->method, "method to run")->capture_default_str();
  cmd->add_option("--inputs", opts->inputs, "inputs as .npz (input_0, ...); random when not given");
  cmd->add_option("--seed", opts->seed, "seed for random inputs")->capture_default_str();
  cmd->add_option("--warmup", opts->warmup, "untimed runs first")->capture_default_str();
  cmd->add_option("--iters", opts->iters, "timed runs")->capture_default_str();
  add_runtime_options(cmd, opts->runtime);
  cmd->add_flag("--json", opts->json, "machine-readable output");
  cmd->callback([opts] { bench(*opts); });
}

}  // namespace pteron::cli
