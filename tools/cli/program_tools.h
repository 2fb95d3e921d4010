// Helpers shared by CLI commands: open programs with one-line errors, tensor conversions.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "tools/cli/npz.h"

namespace pteron::cli {

// Throws UserError("PATH: reason") when the file cannot be opened or verified.
std::unique_ptr<HostProgram> open_program(const std::string& path);
std::unique_ptr<HostMethod> load_method(const HostProgram& program, const std::string& path,
                                        const std::string& method);

// Turns a runtime Error into a UserError carrying the runtime's last message.
[[noreturn]] void throw_runtime_error(const std::string& context, Error error);

std::string shape_string(Span<const int32_t> sizes);
NpyArray tensor_to_npy(const std::string& name, const Tensor& t);

}  // namespace pteron::cli
