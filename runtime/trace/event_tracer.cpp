#include "runtime/trace/event_tracer.h"

namespace pteron {

TraceEvent* EventTracer::push(TraceEvent::Kind kind) {
  if (count_ == events_.size()) {
    ++dropped_;
    return nullptr;
  }
  TraceEvent& e = events_[count_++];
  e = TraceEvent{};
  e.kind = kind;
  e.run = run_;
  e.instruction = current_instruction_;
  return &e;
}

void EventTracer::begin_execute() {
  TraceEvent* e = push(TraceEvent::Kind::Execute);
  open_execute_ = e ? static_cast<int32_t>(count_ - 1) : -1;
  if (e) {
    e->name = method_ ? method_->name() : "execute";
    e->start = clock_.now();
  }
}

void EventTracer::end_execute() {
  const uint64_t t = clock_.now();
  if (open_execute_ >= 0) events_[open_execute_].end = t;
  open_execute_ = -1;
  ++run_;
}

void EventTracer::begin_instruction(size_t index) {
  current_instruction_ = static_cast<int32_t>(index);
  const bool delegate = method_ != nullptr && method_->instruction_is_delegate(index);
  TraceEvent* e = push(delegate ? TraceEvent::Kind::DelegateCall : TraceEvent::Kind::Kernel);
  open_instruction_ = e ? static_cast<int32_t>(count_ - 1) : -1;
  if (e) {
    e->name = method_ ? method_->instruction_name(index) : "instruction";
    e->start = clock_.now();  // last, so the bookkeeping above is not timed
  }
}

void EventTracer::end_instruction(size_t) {
  const uint64_t t = clock_.now();
  if (open_instruction_ >= 0) events_[open_instruction_].end = t;
  open_instruction_ = -1;
  current_instruction_ = -1;
}

int32_t EventTracer::begin_delegate_event(const char* name, int32_t debug_id) {
  TraceEvent* e = push(TraceEvent::Kind::DelegateNode);
  if (e == nullptr) return -1;
  e->name = name;
  e->delegate_debug_id = debug_id;
  e->start = clock_.now();
  return static_cast<int32_t>(count_ - 1);
}

void EventTracer::end_delegate_event(int32_t handle) {
  const uint64_t t = clock_.now();
  if (handle >= 0 && static_cast<size_t>(handle) < count_) events_[handle].end = t;
}

int32_t EventTracer::add_timed_delegate_event(const char* name, int32_t debug_id, int32_t within,
                                              uint64_t offset_ns, uint64_t duration_ns) {
  if (within < 0 || static_cast<size_t>(within) >= count_) return -1;
  const uint64_t lo = events_[within].start, hi = events_[within].end;
  TraceEvent* e = push(TraceEvent::Kind::DelegateNode);
  if (e == nullptr) return -1;
  // ns -> ticks without overflow for any realistic interval (offsets are below an hour).
  const auto ticks = [this](uint64_t ns) {
    return static_cast<uint64_t>(static_cast<double>(ns) *
                                 static_cast<double>(clock_.ticks_per_second) * 1e-9);
  };
  e->name = name;
  e->delegate_debug_id = debug_id;
  e->start = lo + ticks(offset_ns);
  e->end = e->start + ticks(duration_ns);
  if (e->start > hi) e->start = hi;  // clocks that disagree still nest inside `within`
  if (e->end > hi) e->end = hi;
  return static_cast<int32_t>(count_ - 1);
}

void EventTracer::record_allocation(int32_t allocator, uint64_t bytes) {
  TraceEvent* e = push(TraceEvent::Kind::Allocation);
  if (e == nullptr) return;
  e->allocator = allocator;
  e->bytes = bytes;
  e->start = e->end = clock_.now();
}

void EventTracer::clear() {
  count_ = 0;
  dropped_ = 0;
  run_ = 0;
}

}  // namespace pteron
