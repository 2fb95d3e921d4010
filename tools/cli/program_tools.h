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

// Where a command's inputs come from: an .npz (input_0, input_1, ... or archive order), or
// seeded random data valid for any consumer. Throws UserError naming what is missing.
struct InputSource {
  std::string program;  // for messages
  std::string method;
  std::string npz;  // empty: random (if allowed)
  bool random = false;
  uint64_t seed = 0;
};
std::vector<NpyArray> gather_inputs(const InputSource& source, const MethodMeta& meta);
// Copies `inputs` into the method's inputs; errors name `context`.
void set_inputs(Method& method, std::vector<NpyArray>& inputs, const std::string& context);

std::string shape_string(Span<const int32_t> sizes);
NpyArray tensor_to_npy(const std::string& name, const Tensor& t);

}  // namespace pteron::cli
