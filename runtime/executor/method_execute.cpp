// Running a method: its instructions in order (kernel and delegate calls, moves, jumps, frees),
// and what a profiler or debugger asks of them.
#include <cstdio>
#include <cstring>

#include "runtime/executor/method.h"
#include "schema/program_generated.h"

namespace pteron {
namespace {

// A JumpFalse's condition: a Bool, or a bool tensor that holds when every element is true
// (ExecuTorch's parse_cond_value; torch.cond's predicate). The verifier admits no other value.
// Elements are read as bytes, non-zero true, as every bool tensor is: the memory may hold any
// byte (a file's data, or an arena a damaged program never wrote), and reading 2-255 as `bool`
// is undefined.
bool jump_condition(const EValue& v) {
  if (!v.is_tensor()) return v.b;
  const uint8_t* data = static_cast<const uint8_t*>(v.tensor->const_data());
  for (int64_t i = 0; i < v.tensor->numel(); ++i) {
    if (!data[i]) return false;
  }
  return true;
}

}  // namespace

const char* Method::instruction_name(size_t index) const {
  if (index >= num_instructions_) return "";
  const Instruction& ins = instructions_[index];
  switch (ins.kind) {
    case Kind::Kernel:
      return kernel_names_[ins.target];
    case Kind::Delegate:
      return delegates_[ins.target].id;
    case Kind::Move:
      return "move";
    case Kind::JumpFalse:
      return "jump_false";
    case Kind::Free:
      return "free";
  }
  return "";
}

bool Method::instruction_is_delegate(size_t index) const {
  return index < num_instructions_ && instructions_[index].kind == Kind::Delegate;
}

int32_t Method::last_arg_value(const Instruction& ins) const {
  return ins.gathered ? ins.arg_values[ins.num_args - 1]
                      : static_cast<int32_t>(ins.args[ins.num_args - 1] - values_);
}

Span<EValue*> Method::gather_args(const Instruction& ins, EValue** buffer) const {
  if (!ins.gathered) return {ins.args, ins.num_args};
  for (uint32_t a = 0; a < ins.num_args; ++a) buffer[a] = &values_[ins.arg_values[a]];
  return {buffer, ins.num_args};
}

Span<EValue* const> Method::instruction_args(size_t index, Span<EValue*> buffer) const {
  if (index >= num_instructions_) return {};
  const Instruction& ins = instructions_[index];
  if (ins.kind != Kind::Kernel && ins.kind != Kind::Delegate) return {};
  if (ins.gathered && buffer.size() < ins.num_args) return {};
  const Span<EValue*> args = gather_args(ins, buffer.data());
  return {args.data(), args.size()};
}

Error Method::reset_state() {
  for (size_t k = 0; k < num_states_; ++k) {
    if (states_[k].nbytes > 0) std::memcpy(states_[k].data, states_[k].initial, states_[k].nbytes);
  }
  return Error::Ok;
}

Error Method::execute() {
#if PTERON_EVENT_TRACER
  if (observer_ == nullptr) return run_instructions(true);
  observer_->begin_execute();
  const Error err = run_instructions(true);
  observer_->end_execute();
  return err;
#else
  return run_instructions(true);
#endif
}

Error Method::execute_each_instruction_once() { return run_instructions(false); }

Error Method::run_instructions(bool follow_jumps) {
  for (size_t i = 0; i < num_inputs(); ++i) {
    const EValue& v = input(i);
    if (v.tag == Tag::Tensor && v.tensor->mutable_data() == nullptr && v.tensor->nbytes() > 0) {
      return fail(Error::InvalidArgument, "method '%s': input %zu was not set", name(), i);
    }
  }
  size_t pc = 0;
  uint64_t steps = 0;
  // Loops (while_loop, scan, map) jump back: a bound on the steps keeps a malicious jump loop
  // from hanging the caller, while letting a loop run 65536 times its whole method.
  const uint64_t max_steps = (uint64_t{num_instructions_} + 1) << 16;
  while (pc < num_instructions_) {
    if (++steps > max_steps)
      return fail(Error::InvalidProgram, "method '%s' does not terminate", name());
    const Instruction& ins = instructions_[pc];
#if PTERON_EVENT_TRACER
    if (observer_) observer_->begin_instruction(pc);
#endif
    Error err = Error::Ok;
    size_t next = pc + 1;
    switch (ins.kind) {
      case Kind::Kernel: {
        if (scratch_) scratch_->reset();
        KernelContext ctx{scratch_};
        // Int lists are re-read once after a run of prim ops, before the kernel that reads them.
        if (int_lists_stale_ && !ins.writes_sym_int) {
          refresh_int_lists();
          int_lists_stale_ = false;
        }
        EValue* gathered[kMaxGatheredArgs];
        err = call_kernel(*kernels_[ins.target], ctx, gather_args(ins, gathered));
        int_lists_stale_ = int_lists_stale_ || ins.writes_sym_int;
        break;
      }
      case Kind::Delegate: {
        if (int_lists_stale_) {
          refresh_int_lists();
          int_lists_stale_ = false;
        }
        if (scratch_) scratch_->reset();
        BackendExecuteContext ctx{scratch_, ins.target, observer_};
        Delegate& d = delegates_[ins.target];
        err = d.backend->execute(ctx, d.handle, Span<EValue*>(ins.args, ins.num_args));
        break;
      }
      case Kind::Move:
        values_[ins.value] = values_[ins.target];
        int_lists_stale_ = num_int_lists_ > 0;
        break;
      case Kind::JumpFalse:
        if (follow_jumps && !jump_condition(values_[ins.value]))
          next = static_cast<size_t>(ins.target);
        break;
      case Kind::Free:
        break;
    }
#if PTERON_EVENT_TRACER
    if (observer_) {
      observer_->end_instruction(pc);
      if (scratch_ && scratch_->used() > 0) observer_->record_allocation(0, scratch_->used());
    }
#endif
    if (err != Error::Ok) {
      char detail[200];
      snprintf(detail, sizeof(detail), "%s", last_error_message());
      return fail(err, "instruction %zu (%s) failed: %s", pc, instruction_name(pc), detail);
    }
    pc = next;
  }
  return Error::Ok;
}

}  // namespace pteron
