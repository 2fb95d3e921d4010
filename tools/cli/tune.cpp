#include "tools/cli/tune.h"

#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "compiler/partition/registry.h"
#include "runtime/host/process.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/commands.h"

namespace pteron::cli {

std::vector<std::vector<std::string>> tune_candidates(const std::vector<std::string>& backends,
                                                      bool int8) {
  constexpr const char* kInt8Library = "cortex-m";
  std::vector<std::vector<std::string>> candidates = {backends};
  std::vector<std::string> kernels_only;
  bool has_int8_library = false;
  for (const std::string& b : backends) {
    const std::string name = b.substr(0, b.find(':'));
    if (compiler::is_kernel_library(name)) kernels_only.push_back(b);
    has_int8_library = has_int8_library || name == kInt8Library;
  }
  if (!kernels_only.empty() && kernels_only.size() < backends.size())
    candidates.push_back(kernels_only);
  if (int8 && !has_int8_library && compiler::is_kernel_library(kInt8Library)) {
    std::vector<std::string> with_int8 = {kInt8Library};
    with_int8.insert(with_int8.end(), kernels_only.begin(), kernels_only.end());
    candidates.push_back(with_int8);
  }
  return candidates;
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// This executable, to run `pteron bench` in a child process.
std::string self_executable() {
  std::vector<char> buf(4096);
  const ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw UserError("cannot find this executable (/proc/self/exe) to time programs");
  return std::string(buf.data(), static_cast<size_t>(n));
}

// `pteron bench PATH --json` in its own process: the median of `iterations` runs after
// `warmup`, on random inputs (seed 0), with `threads` threads.
double bench_in_child(const std::string& self, const std::string& path, int warmup, int iterations,
                      int threads) {
  std::string output, error;
  const int status = host::run_process_captured(
      {self, "bench", path, "--json", "--warmup", std::to_string(warmup), "--iters",
       std::to_string(iterations), "--threads", std::to_string(threads)},
      &output, &error);
  const size_t json_start = output.find("{\n");
  if (status != 0 || json_start == std::string::npos) {
    std::string why = error;                                                     // it did not start
    if (why.empty()) why = output.substr(0, output.find_last_not_of('\n') + 1);  // its error
    if (why.empty()) why = "exit status " + std::to_string(status);
    throw UserError(path + " did not run: " + why);
  }
  return nlohmann::json::parse(output.substr(json_start)).at("median_ms").get<double>();
}

}  // namespace

std::vector<TunedProgram> time_programs(const std::vector<std::string>& paths, int rounds,
                                        double round_ms) {
  const std::string self = self_executable();
  const int threads = num_threads();
  std::vector<TunedProgram> out(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    // A short probe sets how many runs a round takes.
    const double probe = bench_in_child(self, paths[i], 1, 3, threads);
    out[i].path = paths[i];
    out[i].iterations = static_cast<int>(std::clamp(round_ms / std::max(probe, 1e-3), 3.0, 50.0));
  }
  for (int round = 0; round < rounds; ++round) {
    for (size_t j = 0; j < paths.size(); ++j) {
      // Every other round in reverse: no program always follows the same one.
      const size_t i = round % 2 == 0 ? j : paths.size() - 1 - j;
      out[i].round_medians_ms.push_back(
          bench_in_child(self, paths[i], 3, out[i].iterations, threads));
    }
  }
  for (TunedProgram& t : out) t.median_ms = median(t.round_medians_ms);
  return out;
}

size_t fastest(const std::vector<TunedProgram>& programs) {
  size_t best = 0;
  for (size_t i = 1; i < programs.size(); ++i)
    if (programs[i].median_ms < programs[best].median_ms) best = i;
  return best;
}

}  // namespace pteron::cli
