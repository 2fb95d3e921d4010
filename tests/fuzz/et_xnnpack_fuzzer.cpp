// libFuzzer target: any bytes as a program whose XnnpackBackend delegates (ExecuTorch's XNNPACK
// payloads, backends/xnnpack/runtime/et_payload.h) are read and checked: the payload reader and
// the named-data lookups of its weights must neither crash nor trip a sanitizer. XNNPACK itself
// is not run (its allocations would follow the fuzzed sizes).
#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/runtime/et_payload.h"
#include "runtime/host/host_method.h"
#include "tests/fuzz/delegate_payloads.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pteron;
  auto program = HostProgram::from_bytes(data, size);
  if (!program.ok()) return 0;
  const Program& p = (*program)->program();
  fuzz::for_each_delegate_payload(p, "XnnpackBackend", [&](Span<const uint8_t> payload) {
    xnnpack::et::Graph graph;
    if (xnnpack::et::read_payload(payload, graph) != Error::Ok) return;
    for (const xnnpack::et::Value& v : graph.values) {
      if (v.named_key.empty()) continue;
      auto named = p.named_data(v.named_key.c_str());
      if (named.ok() && named->size() >= v.nbytes && v.nbytes > 0) {
        volatile uint8_t last = static_cast<const uint8_t*>(named->data())[v.nbytes - 1];
        (void)last;  // the whole tensor must be readable
      }
    }
  });
  return 0;
}
