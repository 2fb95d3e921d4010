// Inputs for a method run from the command line (`run`, `bench`): an .npz file or seeded
// random data, bound to the method's input tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executor/method.h"
#include "tools/cli/npz.h"

namespace pteron::cli {

struct InputSource {
  std::string program;  // for messages
  std::string method = "forward";
  std::string inputs;  // .npz path; empty means random inputs when `random` is set
  bool random_inputs = false;
  uint64_t seed = 0;
};

// The method's inputs: arrays named input_0, input_1, ... (or in archive order) from the .npz,
// or random data valid for any consumer. Throws UserError naming what is missing.
std::vector<NpyArray> gather_inputs(const InputSource& source, const MethodMeta& meta);

// Shapes and dim orders for the tensors handed to Method::set_input; keeps them alive as long
// as the method may read them.
class BoundInputs {
 public:
  // Throws UserError with the runtime's message when an input does not fit.
  void bind(Method& method, std::vector<NpyArray>& arrays, const std::string& context);

 private:
  std::vector<std::vector<int32_t>> sizes_;
  std::vector<std::vector<uint8_t>> orders_;
  std::vector<std::vector<int32_t>> strides_;
};

}  // namespace pteron::cli
