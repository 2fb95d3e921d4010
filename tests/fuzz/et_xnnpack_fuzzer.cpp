// libFuzzer target: any bytes as a program whose XnnpackBackend delegates (ExecuTorch's XNNPACK
// payloads, backends/xnnpack/runtime/et_payload.h) are read and checked: the payload reader and
// the named-data lookups of its weights must neither crash nor trip a sanitizer. XNNPACK itself
// is not run (its allocations would follow the fuzzed sizes).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backends/xnnpack/runtime/et_payload.h"
#include "runtime/host/host_method.h"
#include "schema/program_generated.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pteron;
  auto program = HostProgram::from_bytes(data, size);
  if (!program.ok()) return 0;
  const Program& p = (*program)->program();
  const auto* plans = p.flatbuffer()->execution_plan();
  for (size_t m = 0; plans != nullptr && m < plans->size(); ++m) {
    const auto* delegates = plans->Get(static_cast<flatbuffers::uoffset_t>(m))->delegates();
    for (size_t i = 0; delegates != nullptr && i < delegates->size(); ++i) {
      const auto* d = delegates->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (d->id() == nullptr || std::strcmp(d->id()->c_str(), "XnnpackBackend") != 0) continue;
      FreeableBuffer segment;
      Span<const uint8_t> payload;
      if (d->processed()->location() == fb::DataLocation::INLINE) {
        const auto* all = p.flatbuffer()->backend_delegate_data();
        if (all == nullptr || d->processed()->index() >= all->size()) continue;
        const auto* bytes = all->Get(d->processed()->index())->data();
        if (bytes == nullptr) continue;
        payload = Span<const uint8_t>(bytes->data(), bytes->size());
      } else {
        auto loaded = p.load_segment(d->processed()->index());
        if (!loaded.ok()) continue;
        segment = std::move(loaded.get());
        payload = Span<const uint8_t>(segment.bytes(), segment.size());
      }
      xnnpack::et::Graph graph;
      if (xnnpack::et::read_payload(payload, graph) != Error::Ok) continue;
      for (const xnnpack::et::Value& v : graph.values) {
        if (v.named_key.empty()) continue;
        auto named = p.named_data(v.named_key.c_str());
        if (named.ok() && named->size() >= v.nbytes && v.nbytes > 0) {
          volatile uint8_t last = static_cast<const uint8_t*>(named->data())[v.nbytes - 1];
          (void)last;  // the whole tensor must be readable
        }
      }
    }
  }
  return 0;
}
