#include "backends/ethos_u/aot/vela.h"

#include <toml++/toml.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "compiler/compile_error.h"
#include "runtime/host/process.h"
#include "runtime/host/self_location.h"
#include "runtime/host/temp_files.h"

namespace pteron::ethos_u {

using compiler::CompileError;
namespace fs = std::filesystem;

NpuConfig npu_config_of(const compiler::Target& target) {
  toml::table root;
  try {
    root = toml::parse_file(target.path);
  } catch (const toml::parse_error& e) {
    throw CompileError(target.path + ": " + std::string(e.description()));
  }
  const toml::table* npu = root["npu"].as_table();
  if (npu == nullptr) {
    throw CompileError("target '" + target.name + "' (" + target.path +
                       ") has no [npu] table: the ethos-u backend needs an Ethos-U target such "
                       "as --target ethos-u55-128");
  }
  NpuConfig c;
  auto str = [&](const char* key, bool required) {
    auto v = (*npu)[key].value<std::string>();
    if (!v && required) throw CompileError(target.path + ": [npu] needs " + key);
    return v.value_or("");
  };
  c.accelerator = str("accelerator", true);
  c.system_config = str("system_config", true);
  c.memory_mode = str("memory_mode", true);
  std::string file = str("config_file", false);
  if (!file.empty()) {
    fs::path p(file);
    if (p.is_relative()) p = fs::path(target.path).parent_path() / p;
    c.config_file = p.lexically_normal().string();
  }
  if (const toml::array* extra = (*npu)["vela_args"].as_array()) {
    for (const toml::node& n : *extra) {
      if (auto s = n.value<std::string>()) c.extra_args.push_back(*s);
    }
  }
  return c;
}

NpuConfig npu_config_of(const std::string& target_name_or_path) {
  return npu_config_of(compiler::load_target(target_name_or_path));
}

std::string vela_path() {
  // $PTERON_VELA as given (a wrong one fails naming it), else the Arm tools venv next to pteron
  // or in the user's data folder, then $PATH.
  const std::string set = host::env_or_empty("PTERON_VELA");
  if (!set.empty()) return set;
  std::string found = host::find_arm_tool("PTERON_VELA", "vela");
  return found.empty() ? "vela" : found;  // run_vela's "not found" error names what was looked for
}

namespace {

// Runs argv with stdout and stderr into `log`; returns the exit status (127: not executable).
int run_process(const std::vector<std::string>& args, const fs::path& log) {
  return host::run_process(args, log.string());
}

// Vela's error: the last line that says "Error" (its exceptions print one), else the last line.
std::string vela_error_line(const std::string& log) {
  std::istringstream in(log);
  std::string line, last, error;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    last = line;
    if (line.find("Error") != std::string::npos || line.find("error") != std::string::npos) {
      error = line;
    }
  }
  std::string s = error.empty() ? last : error;
  size_t b = s.find_first_not_of(" \t");
  return b == std::string::npos ? s : s.substr(b);
}

struct NpyArray {
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
};

NpyArray parse_npy(const std::string& name, const std::vector<uint8_t>& bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    throw CompileError("ethos-u: Vela's .npz entry " + name + " is not a .npy array");
  }
  size_t header_len, at;
  if (bytes[6] == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    at = 10;
  } else {
    header_len = bytes[8] | (bytes[9] << 8) | (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    at = 12;
  }
  if (at + header_len > bytes.size()) throw CompileError("ethos-u: truncated .npy " + name);
  std::string header(reinterpret_cast<const char*>(bytes.data() + at), header_len);
  NpyArray a;
  size_t d = header.find("'descr':");
  if (d != std::string::npos) {
    size_t q1 = header.find('\'', d + 8), q2 = header.find('\'', q1 + 1);
    a.descr = header.substr(q1 + 1, q2 - q1 - 1);
  }
  size_t s = header.find("'shape':");
  if (s != std::string::npos) {
    size_t p1 = header.find('(', s), p2 = header.find(')', p1);
    std::string dims = header.substr(p1 + 1, p2 - p1 - 1);
    std::istringstream in(dims);
    std::string tok;
    while (std::getline(in, tok, ',')) {
      if (tok.find_first_of("0123456789") != std::string::npos) a.shape.push_back(std::stoll(tok));
    }
  }
  a.data.assign(bytes.begin() + at + header_len, bytes.end());
  return a;
}

std::map<std::string, NpyArray> read_npz(const fs::path& path) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &err);
  if (z == nullptr) throw CompileError("ethos-u: cannot open Vela's output " + path.string());
  std::map<std::string, NpyArray> out;
  zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, i, 0, &st) != 0) continue;
    std::string name = st.name;
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") name.resize(name.size() - 4);
    std::vector<uint8_t> bytes(st.size);
    zip_file_t* f = zip_fopen_index(z, i, 0);
    if (f == nullptr) continue;
    zip_int64_t got = zip_fread(f, bytes.data(), st.size);
    zip_fclose(f);
    if (got != zip_int64_t(st.size)) continue;
    out[name] = parse_npy(name, bytes);
  }
  zip_close(z);
  return out;
}

const NpyArray& entry(const std::map<std::string, NpyArray>& npz, const std::string& key) {
  auto it = npz.find(key);
  if (it == npz.end()) throw CompileError("ethos-u: Vela's .npz has no '" + key + "'");
  return it->second;
}

// Integer arrays Vela writes as int64 ('<i8'); empty lists come as float64 with no elements.
std::vector<int64_t> ints(const std::map<std::string, NpyArray>& npz, const std::string& key) {
  const NpyArray& a = entry(npz, key);
  std::vector<int64_t> v;
  if (a.descr == "<i8") {
    v.resize(a.data.size() / 8);
    std::memcpy(v.data(), a.data.data(), v.size() * 8);
  } else if (a.descr == "<i4") {
    for (size_t i = 0; i + 4 <= a.data.size(); i += 4) {
      int32_t x;
      std::memcpy(&x, a.data.data() + i, 4);
      v.push_back(x);
    }
  } else if (!a.data.empty()) {
    throw CompileError("ethos-u: Vela's .npz '" + key + "' has dtype " + a.descr);
  }
  return v;
}

int64_t scalar(const std::map<std::string, NpyArray>& npz, const std::string& key) {
  std::vector<int64_t> v = ints(npz, key);
  if (v.empty()) throw CompileError("ethos-u: Vela's .npz '" + key + "' is empty");
  return v[0];
}

// Byte strings ('|S<n>', or uint8 arrays).
std::vector<uint8_t> bytes_of(const std::map<std::string, NpyArray>& npz, const std::string& key) {
  return entry(npz, key).data;
}

std::vector<VelaIo> io_list(const std::map<std::string, NpyArray>& npz, const std::string& prefix) {
  std::vector<int64_t> es = ints(npz, prefix + "_elem_size"), rg = ints(npz, prefix + "_region"),
                       off = ints(npz, prefix + "_offset");
  if (es.size() != rg.size() || es.size() != off.size()) {
    throw CompileError("ethos-u: Vela's .npz " + prefix + " lists differ in length");
  }
  std::vector<VelaIo> v(es.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = {uint32_t(es[i]), int32_t(rg[i]), off[i]};
  return v;
}

// The summary CSV: a header line and one line of values.
std::map<std::string, std::string> read_csv(const fs::path& path) {
  std::ifstream f(path);
  std::string header, values;
  std::getline(f, header);
  std::getline(f, values);
  for (std::string* line : {&header, &values}) {  // Python's csv module ends lines with \r\n
    while (!line->empty() && (line->back() == '\r' || line->back() == '\n')) line->pop_back();
  }
  std::map<std::string, std::string> out;
  std::istringstream h(header), v(values);
  std::string k, x;
  while (std::getline(h, k, ',') && std::getline(v, x, ',')) out[k] = x;
  return out;
}

double num(const std::map<std::string, std::string>& csv, const std::string& key) {
  auto it = csv.find(key);
  if (it == csv.end() || it->second.empty()) return 0;
  try {
    return std::stod(it->second);
  } catch (...) {
    return 0;
  }
}

std::string vela_version(const std::string& vela) {
  static std::map<std::string, std::string> cache;
  auto it = cache.find(vela);
  if (it != cache.end()) return it->second;
  fs::path log = fs::temp_directory_path() / ("pteron-vela-version-" + std::to_string(getpid()));
  std::string v = run_process({vela, "--version"}, log) == 0 ? host::read_text_file(log) : "";
  fs::remove(log);
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
  return cache[vela] = v;
}

}  // namespace

namespace {

// Vela's command line for one region in `dir` (region.tosa in, out/ for its files).
std::vector<std::string> vela_args(const fs::path& dir, const NpuConfig& config) {
  std::vector<std::string> args = {(dir / "region.tosa").string(),
                                   "--output-format",
                                   "raw",
                                   "--output-dir",
                                   (dir / "out").string(),
                                   "--accelerator-config",
                                   config.accelerator,
                                   "--system-config",
                                   config.system_config,
                                   "--memory-mode",
                                   config.memory_mode};
  if (!config.config_file.empty()) {
    args.push_back("--config");
    args.push_back(config.config_file);
  }
  for (const std::string& a : config.extra_args) args.push_back(a);
  return args;
}

// Vela's files go to a fresh temporary directory (host::TempDir("pteron-vela")), removed with
// it unless PTERON_KEEP_VELA is set; this checks that it was made.
void use_as_vela_dir(host::TempDir& dir) {
  if (!dir.ok())
    throw CompileError("ethos-u: cannot make a temporary directory in " + dir.parent().string());
  if (std::getenv("PTERON_KEEP_VELA") != nullptr) dir.keep();
}

void write_bytes(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream f(p, std::ios::binary);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// What Vela left in `dir` after exiting with `rc` (its log in `log`), as run_vela returns it.
VelaOutput read_result(const fs::path& dir, int rc, const std::string& log, const std::string& vela,
                       const NpuConfig& config, const std::string& version) {
  if (rc == 127) {
    std::string looked;
    host::find_arm_tool("PTERON_VELA", "vela", &looked);
    throw CompileError("ethos-u: cannot run Vela '" + vela + "' (looked in " + looked +
                       "; set PTERON_VELA to the vela program, or `python -m pteron.arm_tools`)");
  }
  if (rc != 0) {
    throw CompileError("ethos-u: Vela (" + config.accelerator +
                       ") refused the region: " + vela_error_line(log));
  }
  fs::path npz = dir / "out" / "region_vela.npz";
  if (!fs::exists(npz)) throw CompileError("ethos-u: Vela wrote no " + npz.filename().string());
  auto arrays = read_npz(npz);
  VelaOutput out;
  out.version = version;
  out.command_stream = bytes_of(arrays, "cmd_data");
  out.weights = bytes_of(arrays, "weight_data");
  out.weight_region = int32_t(scalar(arrays, "weight_region"));
  out.scratch_region = int32_t(scalar(arrays, "scratch_region"));
  out.scratch_size = uint64_t(scalar(arrays, "scratch_size"));
  out.fast_scratch_region = int32_t(scalar(arrays, "scratch_fast_region"));
  out.fast_scratch_size = uint64_t(scalar(arrays, "scratch_fast_size"));
  out.inputs = io_list(arrays, "input");
  out.outputs = io_list(arrays, "output");
  for (const auto& e : fs::directory_iterator(dir / "out")) {
    if (e.path().extension() != ".csv") continue;
    auto csv = read_csv(e.path());
    VelaEstimate& est = out.estimate;
    est.npu_cycles = uint64_t(num(csv, "cycles_npu"));
    est.total_cycles = uint64_t(num(csv, "cycles_total"));
    est.macs = uint64_t(num(csv, "nn_macs"));
    est.sram_bytes = uint64_t(num(csv, "sram_memory_used") * 1024);
    est.dram_bytes = uint64_t(num(csv, "dram_memory_used") * 1024);
    est.on_chip_flash_bytes = uint64_t(num(csv, "on_chip_flash_memory_used") * 1024);
    est.off_chip_flash_bytes = uint64_t(num(csv, "off_chip_flash_memory_used") * 1024);
    est.inference_time_s = num(csv, "inference_time");
  }
  // "NPU operators = 5 (100.0%)" / "CPU operators = 0 (0.0%)" from the summary.
  auto count = [&](const std::string& key) -> uint32_t {
    size_t at = log.find(key);
    if (at == std::string::npos) return 0;
    return uint32_t(std::strtoul(log.c_str() + at + key.size(), nullptr, 10));
  };
  out.estimate.npu_ops = count("NPU operators = ");
  out.estimate.cpu_ops = count("CPU operators = ");
  if (out.command_stream.size() < 4 || std::memcmp(out.command_stream.data(), "COP", 3) != 0) {
    throw CompileError("ethos-u: Vela's command stream does not start with a COP header");
  }
  return out;
}

// The program a path names: itself when it has a '/', else the first match on PATH.
fs::path resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string d;
  while (std::getline(dirs, d, ':')) {
    fs::path p = fs::path(d.empty() ? "." : d) / name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return {};
}

// Runs Vela's own main() once per job in one Python process: Python's start-up and Vela's imports
// (about 1 s of the 1.3 s a small region takes) are paid once. Each job directory holds
// region.tosa and `args` (one argument a line); the driver leaves vela.log, out/ and `rc` there,
// as a vela process would, and Vela's version in the first argument's `version`.
constexpr const char* kBatchDriver = R"(import os, sys, traceback
from ethosu.vela import vela
from ethosu.vela._version import __version__
with open(os.path.join(sys.argv[1], "version"), "w") as f:
    f.write(__version__ + "\n")
saved = (os.dup(1), os.dup(2))
for job in sys.argv[2:]:
    with open(os.path.join(job, "args")) as f:
        args = f.read().split("\n")[:-1]
    log = os.open(os.path.join(job, "vela.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(log, 1); os.dup2(log, 2)
    try:
        rc = vela.main(args)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:
        traceback.print_exc()
        rc = 1
    sys.stdout.flush(); sys.stderr.flush()
    os.dup2(saved[0], 1); os.dup2(saved[1], 2); os.close(log)
    with open(os.path.join(job, "rc"), "w") as f:
        f.write(str(rc or 0))
)";

// Results of the last prefetch_vela, by what determines them: Vela, its options, the TOSA bytes.
struct CachedResult {
  bool ok = false;
  VelaOutput output;
  std::string error;  // the CompileError's message when !ok
};
std::mutex g_cache_mutex;
std::map<std::string, CachedResult> g_cache;

std::string cache_key(const std::vector<uint8_t>& tosa, const NpuConfig& config) {
  std::string key = vela_path() + '\n' + vela_python() + '\n' + config.accelerator + '\n' +
                    config.system_config + '\n' + config.memory_mode + '\n' + config.config_file;
  for (const std::string& a : config.extra_args) key += '\n' + a;
  key += '\0';
  key.append(reinterpret_cast<const char*>(tosa.data()), tosa.size());
  return key;
}

VelaOutput run_vela_process(const std::vector<uint8_t>& tosa, const NpuConfig& config) {
  const std::string vela = vela_path();
  host::TempDir dir("pteron-vela");
  use_as_vela_dir(dir);
  write_bytes(dir.path() / "region.tosa", tosa);
  std::vector<std::string> args = vela_args(dir.path(), config);
  args.insert(args.begin(), vela);
  const int rc = run_process(args, dir.path() / "vela.log");
  const std::string log = host::read_text_file(dir.path() / "vela.log");
  return read_result(dir.path(), rc, log, vela, config, rc == 0 ? vela_version(vela) : "");
}

}  // namespace

std::string vela_python() {
  if (const char* env = std::getenv("PTERON_VELA_PYTHON"); env != nullptr && *env) return env;
  const fs::path vela = resolve_program(vela_path());
  if (vela.empty()) return "";
  std::ifstream f(vela);
  std::string line;
  if (!std::getline(f, line) || line.rfind("#!", 0) != 0) return "";
  std::istringstream words(line.substr(2));
  std::string program, arg;
  words >> program;
  if (fs::path(program).filename() == "env") words >> program;
  if (words >> arg) return "";  // interpreter options: not a plain Python to run a driver with
  return fs::path(program).filename().string().rfind("python", 0) == 0 ? program : "";
}

int prefetch_vela(const std::vector<std::vector<uint8_t>>& tosas, const NpuConfig& config) {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_cache.clear();
  const std::string python = vela_python();
  if (python.empty() || tosas.empty()) return 0;
  host::TempDir dir("pteron-vela");
  use_as_vela_dir(dir);
  std::vector<std::string> args = {python, "-c", kBatchDriver, dir.path().string()};
  std::vector<std::string> keys;
  for (size_t i = 0; i < tosas.size(); ++i) {
    std::string key = cache_key(tosas[i], config);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;  // the same region
    const fs::path job = dir.path() / ("region" + std::to_string(keys.size()));
    fs::create_directory(job);
    write_bytes(job / "region.tosa", tosas[i]);
    std::ofstream f(job / "args");
    for (const std::string& a : vela_args(job, config)) f << a << '\n';
    args.push_back(job.string());
    keys.push_back(std::move(key));
  }
  // The driver's own failure (no ethosu module in that Python, ...) leaves jobs without an `rc`:
  // those regions run Vela on their own in run_vela, which reports what is wrong.
  run_process(args, dir.path() / "driver.log");
  std::string version = host::read_text_file(dir.path() / "version");
  while (!version.empty() && (version.back() == '\n' || version.back() == ' ')) version.pop_back();
  int done = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const fs::path job = dir.path() / ("region" + std::to_string(i));
    if (!fs::exists(job / "rc")) continue;
    const int rc = std::atoi(host::read_text_file(job / "rc").c_str());
    CachedResult r;
    try {
      r.output = read_result(job, rc, host::read_text_file(job / "vela.log"), vela_path(), config,
                             version);
      r.ok = true;
    } catch (const CompileError& e) {
      r.error = e.what();
    }
    g_cache.emplace(keys[i], std::move(r));
    ++done;
  }
  return done;
}

VelaOutput run_vela(const std::vector<uint8_t>& tosa, const NpuConfig& config) {
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_cache.find(cache_key(tosa, config));
    if (it != g_cache.end()) {
      if (!it->second.ok) throw CompileError(it->second.error);
      return it->second.output;
    }
  }
  return run_vela_process(tosa, config);
}

}  // namespace pteron::ethos_u
