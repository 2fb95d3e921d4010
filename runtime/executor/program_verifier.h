// Cross-reference checks a flatbuffer verifier cannot do: every index, offset and size in a
// program is checked against what it points into, once, at load time.
#pragma once

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/executor/program.h"

namespace pteron {

Error verify_program(const fb::Program& program, const ExtendedHeader& header, size_t file_size);

}  // namespace pteron
