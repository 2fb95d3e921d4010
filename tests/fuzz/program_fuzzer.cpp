// libFuzzer target: any bytes through Program load, Method init and execute, and the LLM
// metadata reader, must neither crash nor trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/host/host_method.h"
#include "runtime/llm/metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pteron;
  auto program = HostProgram::from_bytes(data, size);
  if (!program.ok()) return 0;
  const Program& p = (*program)->program();
  for (size_t m = 0; m < p.num_methods(); ++m) {
    auto method =
        HostMethod::load(**program, *p.method_name(m), HostMethodOptions{1 << 20, 64 << 20});
    if (!method.ok()) continue;
    Method& run = (*method)->method();
    std::vector<std::vector<uint8_t>> inputs;
    bool ready = true;
    for (size_t i = 0; i < run.num_inputs(); ++i) {
      EValue& in = run.input(i);
      if (in.tag != Tag::Tensor || in.tensor->mutable_data() != nullptr) continue;
      if (in.tensor->nbytes() > (size_t{1} << 24)) {
        ready = false;
        break;
      }
      inputs.emplace_back(in.tensor->nbytes());
      ready = ready &&
              run.set_input_pointer(i, inputs.back().data(), inputs.back().size()) == Error::Ok;
    }
    if (ready) (void)run.execute();
  }
  (void)llm::read_llm_metadata(p);
  return 0;
}
