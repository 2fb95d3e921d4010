#include "runtime/host/trace_files.h"

#include <flatbuffers/flatbuffers.h>

#include <nlohmann/json.hpp>

#include "schema/etdump_generated.h"

namespace pteron {
namespace {

namespace ed = pteron::etdump;

double ticks_to_us(const TraceClock& clock, uint64_t ticks) {
  return static_cast<double>(ticks) * 1e6 / static_cast<double>(clock.ticks_per_second);
}

// ETDump times are nanoseconds (what ExecuTorch's Inspector assumes by default).
uint64_t ticks_to_ns(const TraceClock& clock, uint64_t ticks) {
  if (clock.ticks_per_second == 1000000000ull) return ticks;
  return static_cast<uint64_t>(static_cast<long double>(ticks) * 1e9L / clock.ticks_per_second);
}

// Kernel events carry the op name; delegate calls use ExecuTorch's DELEGATE_CALL so its
// Inspector treats them as it treats its own.
const char* etdump_name(const TraceEvent& e) {
  switch (e.kind) {
    case TraceEvent::Kind::Execute:
      return "Method::execute";
    case TraceEvent::Kind::Kernel:
      return e.name ? e.name : "OPERATOR_CALL";
    case TraceEvent::Kind::DelegateCall:
      return "DELEGATE_CALL";
    default:
      return e.name ? e.name : "";
  }
}

}  // namespace

std::vector<uint8_t> etdump_bytes(const EventTracer& tracer) {
  flatbuffers::FlatBufferBuilder fbb;
  const Span<const TraceEvent> events = tracer.events();
  std::vector<flatbuffers::Offset<ed::RunData>> runs;
  size_t i = 0;
  while (i < events.size()) {
    const uint32_t run = events[i].run;
    std::vector<flatbuffers::Offset<ed::Event>> out;
    for (; i < events.size() && events[i].run == run; ++i) {
      const TraceEvent& e = events[i];
      // ExecuTorch's Inspector rejects runs holding allocation events (it expects a profile or
      // debug event in each), so scratch use goes to the Chrome trace only.
      if (e.kind == TraceEvent::Kind::Allocation) continue;
      auto name = fbb.CreateString(etdump_name(e));
      auto profile = ed::CreateProfileEvent(
          fbb, name, /*chain_index=*/0, e.instruction, e.delegate_debug_id, 0, 0,
          ticks_to_ns(tracer.clock(), e.start), ticks_to_ns(tracer.clock(), e.end));
      out.push_back(ed::CreateEvent(fbb, profile, 0, 0));
    }
    auto allocator = ed::CreateAllocator(fbb, fbb.CreateString("scratch"));
    runs.push_back(ed::CreateRunData(fbb, fbb.CreateString("forward"), -1,
                                     fbb.CreateVector(&allocator, 1), fbb.CreateVector(out)));
  }
  auto root = ed::CreateETDump(fbb, /*version=*/0, fbb.CreateVector(runs));
  fbb.FinishSizePrefixed(root, ed::ETDumpIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()};
}

std::string chrome_trace_json(const EventTracer& tracer) {
  nlohmann::json events = nlohmann::json::array();
  const TraceClock& clock = tracer.clock();
  const Span<const TraceEvent> all = tracer.events();
  const uint64_t origin = all.size() ? all[0].start : 0;
  for (const TraceEvent& e : all) {
    nlohmann::json j;
    j["pid"] = 1;
    j["tid"] = 1;
    j["ts"] = ticks_to_us(clock, e.start - origin);
    if (e.kind == TraceEvent::Kind::Allocation) {
      j["ph"] = "C";
      j["name"] = "scratch bytes";
      j["args"] = {{"bytes", e.bytes}};
    } else {
      j["ph"] = "X";
      j["dur"] = ticks_to_us(clock, e.end - e.start);
      // Chrome shows delegate calls by backend id (more telling than DELEGATE_CALL).
      j["name"] = e.kind == TraceEvent::Kind::DelegateCall && e.name ? e.name : etdump_name(e);
      j["cat"] = e.kind == TraceEvent::Kind::Execute        ? "method"
                 : e.kind == TraceEvent::Kind::Kernel       ? "kernel"
                 : e.kind == TraceEvent::Kind::DelegateCall ? "delegate call"
                                                            : "delegate node";
      j["args"] = {{"run", e.run}, {"instruction", e.instruction}};
      if (e.delegate_debug_id >= 0) j["args"]["delegate_debug_id"] = e.delegate_debug_id;
    }
    events.push_back(std::move(j));
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
}

}  // namespace pteron
