#include "runtime/host/self_location.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace pteron::host {
namespace {

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

bool is_executable_file(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::string real(const char* p) {
  char buf[PATH_MAX];
  return realpath(p, buf) != nullptr ? std::string(buf) : std::string();
}

std::string parent(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string join(const std::string& dir, const char* rel) {
  return dir == "/" ? "/" + std::string(rel) : dir + "/" + rel;
}

}  // namespace

std::string self_module_path() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&self_module_path), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] != '\0' && strcmp(info.dli_fname, program_invocation_name) != 0) {
    // A shared object (the Python module): dladdr names the file it was loaded from.
    std::string so = real(info.dli_fname);
    if (!so.empty()) return so;
  }
  // The executable itself (dladdr gives argv[0] for it, which may be relative or a bare name).
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "";
  buf[n] = '\0';
  return buf;
}

std::string find_near_self(std::initializer_list<const char*> relatives, std::string* looked) {
  const std::string module = self_module_path();
  std::string names;
  for (const char* rel : relatives) names += (names.empty() ? "" : ", ") + std::string(rel);
  if (looked != nullptr) {
    *looked = module.empty() ? "the running binary's location is unknown"
                             : names + " in the folders above " + module;
  }
  for (std::string dir = parent(module); !dir.empty(); dir = dir == "/" ? "" : parent(dir)) {
    for (const char* rel : relatives) {
      std::string candidate = join(dir, rel);
      if (exists(candidate)) return candidate;
    }
  }
  return "";
}

std::string env_or_empty(const char* name) {
  const char* v = getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

std::string find_on_path(const char* name) {
  const std::string path = env_or_empty("PATH");
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (is_executable_file(candidate)) return candidate;
    }
    start = end + 1;
  }
  return "";
}

std::string find_arm_tool(const char* env_var, const char* name, std::string* looked) {
  const std::string set = env_or_empty(env_var);
  if (!set.empty()) {
    if (looked != nullptr) *looked = std::string("$") + env_var + "=" + set;
    return is_executable_file(set) ? set : std::string();
  }
  const std::string in_arm_venv = std::string("share/pteron/arm-venv/bin/") + name;
  const std::string in_checkout = std::string(".venv-arm/bin/") + name;
  const std::string in_bin = std::string("bin/") + name;
  std::string near_looked;
  std::string found =
      find_near_self({in_arm_venv.c_str(), in_checkout.c_str(), in_bin.c_str()}, &near_looked);
  if (!found.empty() && is_executable_file(found)) return found;
  std::string data = env_or_empty("XDG_DATA_HOME");
  if (data.empty() && !env_or_empty("HOME").empty()) data = env_or_empty("HOME") + "/.local/share";
  const std::string user_venv = data.empty() ? "" : data + "/pteron/venv-arm/bin/" + name;
  if (!user_venv.empty() && is_executable_file(user_venv)) return user_venv;
  found = find_on_path(name);
  if (looked != nullptr) {
    *looked = std::string("$") + env_var + ", " + near_looked +
              (user_venv.empty() ? "" : ", " + user_venv) + ", $PATH";
  }
  return found;
}

}  // namespace pteron::host
