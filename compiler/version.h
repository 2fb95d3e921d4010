// This pteron's version, from CMakeLists.txt's project() (the wheel's version is read from the
// same line, pyproject.toml): what `pteron --version` and `pteron.__version__` print and what a
// calibration records as the kernels it measured (compiler/cost/host_calibration.h).
#pragma once

#include <string_view>

namespace pteron::compiler {

std::string_view pteron_version();

}  // namespace pteron::compiler
