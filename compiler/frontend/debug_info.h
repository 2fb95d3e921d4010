// Source locations from export node metadata (nn_module_stack, stack_trace).
#pragma once

#include <string>
#include <string_view>

namespace pteron::compiler::frontend {

// The innermost module's path from nn_module_stack ("L__self__,,Model;L__self__fc1,fc1,
// torch.nn.Linear" -> "fc1"); "" for the root module or when absent.
std::string module_path_from_stack(std::string_view nn_module_stack);

// "file:line" of the innermost frame of a Python stack trace that is not inside torch itself
// (the user's own code); the innermost frame if all are torch's; "" if there is none.
std::string source_from_stack_trace(std::string_view stack_trace);

}  // namespace pteron::compiler::frontend
