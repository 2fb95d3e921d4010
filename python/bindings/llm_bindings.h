// Python access to runtime/llm: a Generator over one method of a loaded program.
#pragma once

#include <nanobind/nanobind.h>

#include <memory>
#include <string>

#include "runtime/host/host_method.h"

namespace pteron::py {

// A native Generator (bound in llm_bindings.cpp) over `method` of `program`, which it keeps
// alive. Raises RuntimeError with the runtime's one-line message when the method is no decoder.
nanobind::object make_generator(std::shared_ptr<HostProgram> program, const std::string& method);

void bind_llm(nanobind::module_& m);

}  // namespace pteron::py
