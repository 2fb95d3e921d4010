// The payloads of a program's delegates with a given backend id, inline or in a segment, for
// the fuzz targets that read one backend's payloads without running its device.
#pragma once

#include <cstring>

#include "runtime/executor/program.h"
#include "schema/program_generated.h"

namespace pteron::fuzz {

// Calls `visit(Span<const uint8_t> payload)` for each delegate of `backend_id` in every plan
// of `p` whose processed bytes can be found (others are skipped: the loader refuses them).
template <typename Visit>
void for_each_delegate_payload(const Program& p, const char* backend_id, Visit visit) {
  const auto* plans = p.flatbuffer()->execution_plan();
  for (size_t m = 0; plans != nullptr && m < plans->size(); ++m) {
    const auto* delegates = plans->Get(static_cast<flatbuffers::uoffset_t>(m))->delegates();
    for (size_t i = 0; delegates != nullptr && i < delegates->size(); ++i) {
      const auto* d = delegates->Get(static_cast<flatbuffers::uoffset_t>(i));
      if (d->id() == nullptr || std::strcmp(d->id()->c_str(), backend_id) != 0) continue;
      if (d->processed() == nullptr) continue;
      if (d->processed()->location() == fb::DataLocation::INLINE) {
        const auto* all = p.flatbuffer()->backend_delegate_data();
        if (all == nullptr || d->processed()->index() >= all->size()) continue;
        const auto* bytes = all->Get(d->processed()->index())->data();
        if (bytes == nullptr) continue;
        visit(Span<const uint8_t>(bytes->data(), bytes->size()));
      } else {
        auto loaded = p.load_segment(d->processed()->index());
        if (!loaded.ok()) continue;
        FreeableBuffer segment = std::move(loaded.get());
        visit(Span<const uint8_t>(segment.bytes(), segment.size()));
      }
    }
  }
}

}  // namespace pteron::fuzz
