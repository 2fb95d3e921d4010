// Event tracer: per-instruction timing, events from inside delegates and allocation events,
// recorded into a caller-provided buffer (no heap, so it also runs bare metal). Attach it with
// Method::set_observer(); the clock is pluggable (default: platform_ticks, which a bare-metal
// port maps to its timer). Compile the hooks out with -DPTERON_EVENT_TRACER=0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/executor/method.h"
#include "runtime/platform/platform.h"

namespace pteron {

struct TraceClock {
  uint64_t (*now)();
  uint64_t ticks_per_second;
};
// The platform's clock (platform_ticks: a hosted build's steady clock, a bare-metal port's timer).
inline TraceClock platform_clock() {
  return TraceClock{&platform_ticks, platform_ticks_per_second()};
}

struct TraceEvent {
  // Execute: one execute() call. Kernel / DelegateCall: one instruction. DelegateNode: a
  // backend's own node inside a delegate call. Allocation: scratch an instruction used.
  enum class Kind : uint8_t { Execute, Kernel, DelegateCall, DelegateNode, Allocation };
  Kind kind;
  int32_t instruction = -1;        // the instruction the event belongs to (-1: none)
  int32_t delegate_debug_id = -1;  // inside a delegate: the backend's node id, if it has one
  const char* name = nullptr;      // static string: op name, backend id, or delegate node name
  uint32_t run = 0;                // which execute() (ETDump's chain index is per program run)
  uint64_t start = 0, end = 0;     // clock ticks
  uint64_t bytes = 0;              // allocation events
  int32_t allocator = -1;
};

class EventTracer : public ExecutionObserver {
 public:
  EventTracer(Span<TraceEvent> buffer, TraceClock clock = platform_clock())
      : events_(buffer), clock_(clock) {}

  // Names of instructions come from the method (op name or backend id).
  void attach(const Method& method) { method_ = &method; }

  void begin_execute() override;
  void end_execute() override;
  void begin_instruction(size_t index) override;
  void end_instruction(size_t index) override;
  // Delegates time their own nodes with these (handle -1 when the buffer is full).
  int32_t begin_delegate_event(const char* name, int32_t debug_id) override;
  void end_delegate_event(int32_t handle) override;
  int32_t add_timed_delegate_event(const char* name, int32_t debug_id, int32_t within,
                                   uint64_t offset_ns, uint64_t duration_ns) override;
  void record_allocation(int32_t allocator, uint64_t bytes) override;

  Span<const TraceEvent> events() const { return {events_.data(), count_}; }
  size_t dropped() const { return dropped_; }  // events that did not fit in the buffer
  const TraceClock& clock() const { return clock_; }
  void clear();

 private:
  TraceEvent* push(TraceEvent::Kind kind);

  Span<TraceEvent> events_;
  TraceClock clock_;
  const Method* method_ = nullptr;
  size_t count_ = 0;
  size_t dropped_ = 0;
  uint32_t run_ = 0;
  int32_t open_execute_ = -1;
  int32_t open_instruction_ = -1;
  int32_t current_instruction_ = -1;
};

}  // namespace pteron
