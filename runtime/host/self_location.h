// Where pteron's own files are, found from the binary that is running (hosted builds only).
//
// Nothing pteron builds or installs names a path of the machine that built it: tools find the
// targets, the Vulkan emulation layers, the QEMU plugin, Vela and the model converter relative
// to the executable or shared object that contains this code (`/proc/self/exe` for a program,
// the `.so` for the Python module), after the PTERON_* variable that names the file directly.
// The same relative names serve the build tree (build/share/pteron/...) and an install
// (<prefix>/bin/pteron, <prefix>/share/pteron/..., the wheel's site-packages/pteron/...).
#pragma once

#include <initializer_list>
#include <string>

namespace pteron::host {

// The executable or shared object this code is linked into, symlinks resolved; "" if unknown.
std::string self_module_path();

// The first existing `<ancestor>/<relative>`, over the ancestors of the module's directory
// (the directory itself first, then outwards) and, for each, `relatives` in order; "" if none.
// `looked` (optional) receives a one-line description of what was searched, for error messages.
std::string find_near_self(std::initializer_list<const char*> relatives,
                           std::string* looked = nullptr);

// The value of an environment variable, or "" when it is unset or empty.
std::string env_or_empty(const char* name);

// An executable file named `name` in a directory of $PATH, or "".
std::string find_on_path(const char* name);

// Tools from Arm's venv (vela, model-converter): $<env_var>, then next to pteron (the build
// tree's share/pteron/arm-venv link, a checkout's .venv-arm, the bin/ of the Python environment
// pteron is installed in), then the venv `python -m pteron.arm_tools` makes
// ($XDG_DATA_HOME or ~/.local/share, /pteron/venv-arm), then $PATH. "" if none; `looked`
// receives what was searched.
std::string find_arm_tool(const char* env_var, const char* name, std::string* looked = nullptr);

}  // namespace pteron::host
