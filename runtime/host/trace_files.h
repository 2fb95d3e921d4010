// Turns an event tracer's events into files people and tools open: ETDump (ExecuTorch's
// profiling flatbuffer, read by its Inspector) and Chrome trace JSON (Perfetto,
// chrome://tracing). Hosted builds only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/trace/event_tracer.h"

namespace pteron {

// Size-prefixed ETDump (identifier ED00): one RunData per execute() with its profile events
// in nanoseconds (Method::execute, one per instruction — named by op, DELEGATE_CALL for delegate
// calls — and the backends' own events with their delegate debug ids). Allocation events are left
// out: ExecuTorch's Inspector cannot read runs that contain them; the Chrome trace has them.
std::vector<uint8_t> etdump_bytes(const EventTracer& tracer);

// Chrome trace JSON ("traceEvents", complete events in microseconds): one row for the method,
// kernels and delegate calls nested under it, delegate-internal events nested under those.
std::string chrome_trace_json(const EventTracer& tracer);

}  // namespace pteron
