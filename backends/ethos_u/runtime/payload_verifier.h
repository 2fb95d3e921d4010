// Checks an untrusted Ethos-U payload completely before the driver sees it: flatbuffer
// structure, identifier, version, both forms of the region present, I/O descriptions
// consistent. Every refusal is one line naming the field.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/ethos_u/schema/ethos_u_payload_generated.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron::ethos_u {

constexpr uint32_t kPayloadVersion = 1;
constexpr int kMaxIoRank = 6;

Result<const fb::EthosUPayload*> verify_payload(Span<const uint8_t> processed);

}  // namespace pteron::ethos_u
