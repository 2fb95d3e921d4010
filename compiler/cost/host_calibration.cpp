#include "compiler/cost/host_calibration.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/compile_error.h"
#include "compiler/version.h"
#include "runtime/host/temp_files.h"
#include "runtime/platform/cpu_isa.h"

namespace pteron::compiler::cost {
namespace {

// FNV-1a: a cache file name that stays the same across builds (std::hash need not).
uint64_t stable_hash(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    for (const char* key : {"model name", "Model"}) {  // x86; some aarch64 kernels
      if (line.rfind(key, 0) == 0 && line.find(':') != std::string::npos) {
        std::string v = line.substr(line.find(':') + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        if (!v.empty()) return v;
      }
    }
  }
  return "unknown CPU";
}

}  // namespace

std::string machine_description(int threads) {
  return cpu_model() + ", " + cpu_isa_name() + ", " + std::to_string(threads) +
         (threads == 1 ? " thread" : " threads");
}

std::string calibration_cache_path(const std::string& machine) {
  std::string dir;
  if (const char* d = std::getenv("PTERON_CACHE_DIR"); d && *d) {
    dir = d;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = std::string(x) + "/pteron";
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home && *home ? home : "/tmp") + "/.cache/pteron";
  }
  char name[48];
  std::snprintf(name, sizeof name, "calibration-%016llx.json",
                static_cast<unsigned long long>(stable_hash(machine)));
  return dir + "/" + name;
}

HostCalibration host_calibration(int threads) {
  std::string path, cache_path;
  if (const char* env = std::getenv("PTERON_CALIBRATION"); env && *env) {
    if (std::strcmp(env, "off") == 0) return {};
    path = env;
  } else {
    path = cache_path = calibration_cache_path(machine_description(threads));
    if (!std::filesystem::exists(path)) return {std::nullopt, cache_path, {}};
  }
  bool read = false;
  const std::string text = host::read_text_file(path, &read);
  Calibration calibration;
  try {
    if (!read) throw CompileError("calibration: cannot read the file");
    calibration = Calibration::from_json(text);
  } catch (const CompileError& e) {
    // A file the user named is their error; the cache is ours, and a damaged one is measured
    // again like a missing one.
    if (cache_path.empty()) throw CompileError(path + ": " + e.what());
    return {std::nullopt, cache_path, path + ": " + e.what() + ": not used"};
  }
  if (calibration.pteron != compiler::pteron_version()) {
    return {
        std::nullopt, cache_path,
        path + ": calibration of pteron " +
            (calibration.pteron.empty() ? std::string("(unknown version)") : calibration.pteron) +
            ", this is pteron " + std::string(compiler::pteron_version()) +
            ": not used, its kernels may have changed (run `pteron tune` again)"};
  }
  return {LoadedCalibration{std::move(calibration), path}, cache_path, {}};
}

}  // namespace pteron::compiler::cost
