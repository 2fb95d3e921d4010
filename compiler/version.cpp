#include "compiler/version.h"

namespace pteron::compiler {

std::string_view pteron_version() { return PTERON_VERSION; }

}  // namespace pteron::compiler
