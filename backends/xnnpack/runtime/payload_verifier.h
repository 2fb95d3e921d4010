// Verification of an untrusted XNNPACK payload. XNNPACK itself checks little (this snapshot
// trusts shapes completely: a filter smaller than its kernel or an output smaller than the
// computed result is read or written out of bounds), so everything XNNPACK will rely on is
// checked here first: the flatbuffer, ids, dtypes, quantisation, every node's shapes against
// its attributes, constant ranges, argument indices, and the graph's data flow.
#pragma once

#include <cstdint>

#include "backends/xnnpack/runtime/payload_format.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace pteron {
namespace xnnpack {

// Returns Ok and the root table when `payload` is a complete, consistent version-1 payload;
// otherwise InvalidProgram (or NotSupported for valid but unsupported content) with a message
// naming the tensor or node at fault. Reads only inside `payload`.
Error verify_payload(Span<const uint8_t> payload, const fb::Payload** root);

}  // namespace xnnpack
}  // namespace pteron
