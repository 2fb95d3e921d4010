#include "backends/vgf/aot/model_converter.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/host/process.h"
#include "runtime/host/self_location.h"
#include "runtime/host/temp_files.h"

namespace pteron {
namespace vgf {
namespace {

bool executable(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

bool read_all(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

// The last non-empty line of a file (the converter's error), trimmed to 300 characters.
std::string last_line(const std::string& path) {
  std::ifstream f(path);
  std::string line, last;
  while (std::getline(f, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  }
  if (last.size() > 300) last = last.substr(0, 300) + "...";
  return last;
}

}  // namespace

std::string find_model_converter(std::string* error) {
  const char* env = getenv("PTERON_MODEL_CONVERTER");
  if (env != nullptr && *env != '\0' && !executable(env)) {
    *error = std::string("VGF: PTERON_MODEL_CONVERTER=") + env + " is not an executable file";
    return "";
  }
  // $PTERON_MODEL_CONVERTER, the Arm tools venv next to pteron or in the user's data folder,
  // then $PATH (runtime/host/self_location.h).
  std::string looked;
  std::string found = host::find_arm_tool("PTERON_MODEL_CONVERTER", "model-converter", &looked);
  if (!found.empty()) return found;
  *error = "VGF: the ML SDK model converter was not found (looked in " + looked +
           "; `python -m pteron.arm_tools`, make venv-arm, or set PTERON_MODEL_CONVERTER)";
  return "";
}

bool convert_tosa_to_vgf(const std::vector<uint8_t>& tosa, std::vector<uint8_t>* vgf,
                         std::string* error) {
  const std::string converter = find_model_converter(error);
  if (converter.empty()) return false;
  host::TempDir dir("pteron-vgf");
  if (!dir.ok()) {
    *error = "VGF: cannot create a temporary directory for the model converter";
    return false;
  }
  const std::string in = (dir.path() / "region.tosa").string(),
                    out = (dir.path() / "region.vgf").string(),
                    log = (dir.path() / "converter.log").string();
  {
    std::ofstream f(in, std::ios::binary);
    f.write(reinterpret_cast<const char*>(tosa.data()), static_cast<std::streamsize>(tosa.size()));
    if (!f) {
      *error = "VGF: cannot write " + in;
      return false;
    }
  }
  std::string why;
  const int status = host::run_process({converter, "--input", in, "--output", out}, log, &why);
  if (status == 127 && !why.empty()) {
    *error = "VGF: " + why;
    return false;
  }
  if (status != 0) {
    *error = "VGF: model-converter failed";
    const std::string why = last_line(log);
    if (!why.empty()) *error += ": " + why;
    return false;
  }
  if (!read_all(out, vgf) || vgf->empty()) {
    *error = "VGF: model-converter wrote no output";
    return false;
  }
  return true;
}

}  // namespace vgf
}  // namespace pteron
