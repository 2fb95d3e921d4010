#include "tools/cli/tune.h"

#include <algorithm>
#include <chrono>

#include "compiler/partition/registry.h"
#include "tools/cli/commands.h"
#include "tools/cli/method_inputs.h"
#include "tools/cli/program_tools.h"

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

// One loaded program with its inputs bound anew before every run (the arena may reuse them).
struct Runner {
  std::unique_ptr<HostProgram> program;
  std::unique_ptr<HostMethod> host;
  std::vector<NpyArray> inputs;
  BoundInputs bound;
  std::string path;

  double run_ms() {
    bound.bind(host->method(), inputs, path);
    const auto start = std::chrono::steady_clock::now();
    const Error e = host->method().execute();
    if (e != Error::Ok) throw_runtime_error(path, e);
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  }
};

}  // namespace

std::vector<TunedProgram> time_programs(const std::vector<std::string>& paths, int rounds,
                                        double round_ms) {
  std::vector<Runner> runners(paths.size());
  std::vector<TunedProgram> out(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    Runner& r = runners[i];
    r.path = paths[i];
    r.program = open_program(r.path);
    r.host = load_method(*r.program, r.path, "forward");
    r.inputs =
        gather_inputs({r.path, "forward", "", /*random_inputs=*/true, 0}, r.host->method().meta());
    // The first run packs weights and sets delegates up; the second's time sets how many runs a
    // round takes.
    r.run_ms();
    const double probe = r.run_ms();
    out[i].path = r.path;
    out[i].iterations = static_cast<int>(std::clamp(round_ms / std::max(probe, 1e-3), 3.0, 50.0));
  }
  for (int round = 0; round < rounds; ++round) {
    for (size_t j = 0; j < runners.size(); ++j) {
      // Every other round in reverse: no program always follows the same one.
      const size_t i = round % 2 == 0 ? j : runners.size() - 1 - j;
      runners[i].run_ms();  // warm-up after the other programs ran
      std::vector<double> times;
      for (int it = 0; it < out[i].iterations; ++it) times.push_back(runners[i].run_ms());
      out[i].round_medians_ms.push_back(median(times));
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
