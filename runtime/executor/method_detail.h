// Helpers shared by the files that implement Method (method.cpp: loading; method_values.cpp:
// the value table; method_inputs.cpp: inputs; method_execute.cpp: running). Not part of the API.
#pragma once

#include <cstddef>

#include "runtime/core/error.h"

namespace pteron::method_detail {

// The error for a method allocator that cannot hold `what`.
inline Error out_of_memory(const char* what, size_t bytes) {
  return fail(Error::OutOfMemory, "method allocator exhausted allocating %s (%zu bytes)", what,
              bytes);
}

}  // namespace pteron::method_detail
