// A C++ application running a pteron program (docs/RUNTIME_API.md):
//   cpp_app model.pte [input0.bin ...]
// Each input file holds the raw bytes of that input (the program's dtype and shape, contiguous);
// inputs without a file are zeros. Prints every output's values, one per line, as float32.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/host/host_method.h"

using namespace pteron;

static int fail_with(const char* what) {
  std::fprintf(stderr, "cpp_app: %s: %s\n", what, last_error_message());
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: cpp_app model.pte [input0.bin ...]\n");
    return 2;
  }
  auto program = HostProgram::open(argv[1]);  // mmaps and verifies the whole file
  if (!program.ok()) return fail_with(argv[1]);
  auto method = HostMethod::load(**program, "forward");  // arenas sized from the program
  if (!method.ok()) return fail_with("forward");
  Method& forward = (*method)->method();
  // Input bytes are copied in by set_input (the memory plan may reuse an input's bytes once it is
  // dead, so set inputs again before every execute()).
  for (size_t i = 0; i < forward.num_inputs(); ++i) {
    const EValue& in = forward.input(i);
    if (!in.is_tensor()) return fail_with("input is not a tensor");
    std::vector<char> bytes(in.tensor->nbytes(), 0);
    if (static_cast<int>(i) + 2 < argc) {
      std::ifstream f(argv[i + 2], std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      if (bytes.size() != in.tensor->nbytes()) {
        std::fprintf(stderr, "cpp_app: %s: %zu bytes, input %zu needs %zu\n", argv[i + 2],
                     bytes.size(), i, in.tensor->nbytes());
        return 1;
      }
    }
    std::vector<int32_t> sizes(in.tensor->sizes().begin(), in.tensor->sizes().end());
    std::vector<uint8_t> order(sizes.size());
    for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<uint8_t>(d);
    std::vector<int32_t> strides(sizes.size());
    Tensor t(in.tensor->dtype(), in.tensor->dim(), sizes.data(), order.data(), strides.data(),
             bytes.data());
    if (forward.set_input(i, t) != Error::Ok) return fail_with("set_input");
  }
  if (forward.execute() != Error::Ok) return fail_with("execute");
  for (size_t i = 0; i < forward.num_outputs(); ++i) {
    const EValue& out = forward.output(i);
    if (!out.is_tensor() || out.tensor->dtype() != ScalarType::Float) continue;
    const float* values = out.tensor->data<float>();
    for (int64_t k = 0; k < out.tensor->numel(); ++k) std::printf("%.9g\n", values[k]);
  }
  return 0;
}
