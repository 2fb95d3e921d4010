// libFuzzer target: any bytes as a program whose PteronVulkanBackend delegates are verified and,
// for bounded dynamic regions, resized as execute() resizes them (the private payload copy, its
// size expressions at the symbols' bounds and at values taken from the input, the verifier run
// again on every resized copy): none of it may crash or trip a sanitizer. No Vulkan device is
// used (the fuzz machine has none to trust; dispatch planning needs its limits).
#include <cstddef>
#include <cstdint>

#include "backends/vulkan/runtime/payload_verifier.h"
#include "backends/vulkan/runtime/sized_payload.h"
#include "runtime/host/host_method.h"
#include "tests/fuzz/delegate_payloads.h"

namespace {

using namespace pteron;

// Every tensor's bytes at the copy's current sizes (what the delegate plans from).
uint64_t all_bytes(const vulkan::fb::Payload& p) {
  uint64_t total = 0;
  for (const vulkan::fb::Tensor* t : *p.tensors()) total += vulkan::tensor_bytes(*t);
  return total;
}

void resize_at(vulkan::SizedPayload& sized, const uint8_t* data, size_t size) {
  const auto& symbols = *sized.payload().symbols();
  if (symbols.size() > vulkan::kMaxSymbols) return;  // the verifier refuses these
  vulkan::SizeRange values[vulkan::kMaxSymbols];
  // Round 0: every symbol at its minimum; 1: at its maximum; then values read from the input
  // (sometimes outside the bounds: resize must refuse those, not write them).
  for (uint32_t round = 0; round < 4; ++round) {
    for (uint32_t k = 0; k < symbols.size(); ++k) {
      const int64_t lo = symbols.Get(k)->min(), hi = symbols.Get(k)->max();
      int64_t v = round == 0 ? lo : hi;
      if (round >= 2) {
        const uint8_t b = size > 0 ? data[(round * 7 + k * 13) % size] : 0;
        v = b == 255 ? hi + 1 : lo + int64_t(b) % (hi - lo + 1);
      }
      values[k] = vulkan::SizeRange{v, v};
    }
    if (sized.resize(Span<const vulkan::SizeRange>(values, symbols.size())) == Error::Ok) {
      volatile uint64_t bytes = all_bytes(sized.payload());
      (void)bytes;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto program = HostProgram::from_bytes(data, size);
  if (!program.ok()) return 0;
  const Program& p = (*program)->program();
  fuzz::for_each_delegate_payload(p, vulkan::kBackendId, [&](Span<const uint8_t> payload) {
    const vulkan::fb::Payload* root = nullptr;
    if (vulkan::verify_payload(payload, &root) != Error::Ok) return;
    volatile uint64_t bytes = all_bytes(*root);
    (void)bytes;
    if (root->symbols() == nullptr || root->symbols()->size() == 0) return;
    vulkan::SizedPayload sized;
    if (sized.init(payload, *root) != Error::Ok) return;
    resize_at(sized, data, size);
  });
  return 0;
}
