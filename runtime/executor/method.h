// Method: one loaded entry point of a Program (e.g. "forward"). Load resolves every kernel and
// delegate up front (reporting all missing ones together) and lays tensors into the caller's
// planned arenas; execute() then runs the instruction list without allocating.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/backend/backend.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/executor/program.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

// Observes execution; the event tracer (runtime/trace) implements it. All callbacks are
// optional. Builds with -DPTERON_EVENT_TRACER=0 compile the calls out of execute().
#ifndef PTERON_EVENT_TRACER
#define PTERON_EVENT_TRACER 1
#endif
class ExecutionObserver {
 public:
  virtual ~ExecutionObserver() = default;
  virtual void begin_execute() {}
  virtual void end_execute() {}
  virtual void begin_instruction(size_t index) {}
  virtual void end_instruction(size_t index) {}
  // Scratch memory an instruction used (allocator 0 is the per-call scratch allocator).
  virtual void record_allocation(int32_t allocator, uint64_t bytes) {}
  // Events inside a delegate call (a backend's own nodes); `name` must be a static string.
  // Returns a handle for end_delegate_event, or -1.
  virtual int32_t begin_delegate_event(const char* name, int32_t debug_id) { return -1; }
  virtual void end_delegate_event(int32_t handle) {}
  // An event the backend timed itself (e.g. GPU timestamps read after the work finished):
  // it starts `offset_ns` after the start of the finished event `within` (a handle from
  // begin_delegate_event) and lasts `duration_ns`, kept inside `within`. Returns a handle, or -1.
  virtual int32_t add_timed_delegate_event(const char* name, int32_t debug_id, int32_t within,
                                           uint64_t offset_ns, uint64_t duration_ns) {
    return -1;
  }
};

class Method {
 public:
  static Result<Method> load(const Program& program, const char* name, MemoryManager* memory);

  Method(Method&& other) noexcept;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  ~Method();

  const char* name() const { return meta_.name(); }
  const MethodMeta& meta() const { return meta_; }
  size_t num_inputs() const { return meta_.num_inputs(); }
  size_t num_outputs() const { return meta_.num_outputs(); }
  size_t num_instructions() const { return num_instructions_; }

  // Copies `src` into input `i` (dtype and shape must match; dynamic inputs are resized to
  // any shape within their bounds: the program's sizes are the upper bounds, the lower bounds
  // come from the program's "pteron.min_sizes.<method>" named data, 0 without it; a size of
  // a torch.export derived dim must be its minimum plus a multiple of its step, from
  // "pteron.size_steps.<method>").
  Error set_input(size_t i, const Tensor& src);
  // Points input `i` at caller memory without copying (only for inputs the program does not
  // plan into an arena). `data` must stay valid through execute().
  Error set_input_pointer(size_t i, void* data, size_t nbytes);
  EValue& input(size_t i);
  const EValue& output(size_t i) const;
  // Whether the program writes a new value into input `i` (a model changing its input in place,
  // `x.add_(1)`: torch.export's user input mutation; from the program's
  // "pteron.written_inputs.<method>" named data). After execute() input(i) holds that value,
  // which a caller that set the input from its own tensor copies back, as eager changes it.
  bool input_written(size_t i) const {
    return input_written_ != nullptr && i < num_inputs() && input_written_[i];
  }

  Error execute();
  // Runs every instruction once in program order, a JumpFalse falling through: both branches of
  // a torch.cond, each loop body once. For measuring what the kernels need (the firmware
  // budget's scratch), never for results: a run on placeholder inputs must cover every kernel,
  // and cannot wait on a loop whose exit depends on the data.
  Error execute_each_instruction_once();

  // State (mutable buffers, e.g. a KV cache) lives in the planned arenas and persists across
  // execute() calls. Load sets it to its initial values (from the program's mutable data
  // segment); reset_state() sets it back. Methods sharing a state arena (a host giving them
  // the same memory) share the state, so resetting one resets it for all.
  Error reset_state();
  size_t num_state_tensors() const { return num_states_; }
  // State tensor `k` (< num_state_tensors()): its dtype and sizes, e.g. a KV cache's
  // [batch, heads, max_seq_len, head_dim]; nullptr past the end.
  const Tensor* state_tensor(size_t k) const {
    return k < num_states_ ? states_[k].tensor : nullptr;
  }
  // The sizes set_input accepts in dim `d` of input `i` (both the program's size for static
  // inputs). False when input `i` is not a tensor or has no dim `d`.
  bool input_size_bounds(size_t i, int32_t d, int32_t* lo, int32_t* hi) const;

  void set_observer(ExecutionObserver* observer) { observer_ = observer; }
  // Operator name ("aten::add.out") of instruction `index`, or the backend id for delegate calls.
  const char* instruction_name(size_t index) const;
  bool instruction_is_delegate(size_t index) const;
  // The values a kernel or delegate call passes (inputs, then outputs; empty for other
  // instructions), gathered into `buffer` when the call keeps no pointer list (empty when the
  // buffer is too small: kMaxGatheredArgs always fits). For debugging tools that read
  // intermediates after an instruction ran.
  static constexpr size_t kMaxGatheredArgs = 16;
  Span<EValue* const> instruction_args(size_t index, Span<EValue*> buffer) const;

 private:
  enum class Kind : uint8_t { Kernel, Delegate, Move, JumpFalse, Free };
  struct Instruction {
    Kind kind = Kind::Free;
    bool writes_sym_int =
        false;  // a prim op (sym_size, executorch_prim::*, item()): int lists follow
    // A call's arguments: value indices in the program (`gathered`: kernel calls of at most
    // kMaxGatheredArgs arguments, gathered on the stack when they run), or pointers (one of
    // the two, so an instruction takes 20 bytes on a 32-bit device).
    bool gathered = false;
    uint32_t num_args = 0;
    int32_t target = 0;  // operator or delegate index, move source, jump destination
    int32_t value = 0;   // move destination or condition value
    union {
      const int32_t* arg_values;
      EValue** args = nullptr;
    };
  };
  // An int list with an item a prim op (or a move) writes (dynamic shapes): its ints are
  // re-read from its items after prim ops, before the next kernel or delegate runs.
  struct DynamicIntList {
    int64_t* ints;
    const int64_t* items;  // value indices, in the (verified, aligned) program
    size_t count;
  };
  struct StateTensor {
    const Tensor* tensor;
    void* data;              // in a planned arena
    const uint8_t* initial;  // in the program's mutable data segment
    size_t nbytes;
  };
  struct Delegate {
    BackendInterface* backend;
    DelegateHandle* handle;
    FreeableBuffer payload;
    const char* id;
  };

  explicit Method(MethodMeta meta) : meta_(meta) {}
  Error init(const Program& program, const fb::ExecutionPlan& plan, MemoryManager* memory);
  Error init_values(const Program& program, const fb::ExecutionPlan& plan, MemoryManager* memory);
  Error init_kernels(const fb::ExecutionPlan& plan, MemoryAllocator* allocator);
  // The strides array of an earlier static tensor (values before `before`) equal to these
  // sizes' and dim order's strides, on a device; nullptr when there is none (or on a host).
  int32_t* shared_strides(size_t before, int32_t dim, const int32_t* sizes,
                          const uint8_t* dim_order) const;
  Error init_delegates(const Program& program, const fb::ExecutionPlan& plan,
                       MemoryManager* memory);
  Error init_instructions(const fb::ExecutionPlan& plan, MemoryAllocator* allocator);
  Error init_int_lists(const fb::ExecutionPlan& plan, MemoryAllocator* allocator);
  Error check_has_memory(const fb::ExecutionPlan& plan, int32_t index, size_t instruction);
  Error input_index(size_t i, Tensor** tensor);
  Error run_instructions(bool follow_jumps);
  // The call's argument pointers: its own list, or gathered into `buffer` (kMaxGatheredArgs).
  Span<EValue*> gather_args(const Instruction& ins, EValue** buffer) const;
  // The value index of a call's last argument (a kernel's out); the call has arguments.
  int32_t last_arg_value(const Instruction& ins) const;
  Error init_input_bounds(const Program& program, MemoryAllocator* alloc);
  Error init_written_inputs(const Program& program, MemoryAllocator* alloc);
  // One optional per-input-dim int32 table of named data `key` ("pteron.min_sizes.<method>":
  // per input its rank, then a word per dim), each word checked by `accept` (input, dim, word),
  // stored into `table`; absent: Ok, the table untouched.
  template <typename Accept>
  Error read_input_dim_table(const Program& program, const char* key, int32_t* table,
                             Accept accept);
  void refresh_int_lists();

  MethodMeta meta_;
  const fb::ExecutionPlan* plan_ = nullptr;
  MemoryAllocator* scratch_ = nullptr;
  EValue* values_ = nullptr;
  size_t num_values_ = 0;
  const KernelEntry** kernels_ = nullptr;
  const char** kernel_names_ = nullptr;
  size_t num_kernels_ = 0;
  Delegate* delegates_ = nullptr;
  size_t num_delegates_ = 0;
  Instruction* instructions_ = nullptr;
  size_t num_instructions_ = 0;
  bool* input_planned_ = nullptr;
  bool* input_written_ = nullptr;  // null: the program writes into no input
  // Per input, per dimension: the sizes set_input accepts ([min, max]; both the program's
  // size for static tensors). Offsets into the arrays: input_dim_offset_[i].
  int32_t* input_min_ = nullptr;
  int32_t* input_max_ = nullptr;
  int32_t* input_step_ = nullptr;  // null: every size in [min, max]
  size_t* input_dim_offset_ = nullptr;
  DynamicIntList* int_lists_ = nullptr;
  size_t num_int_lists_ = 0;
  bool int_lists_stale_ = false;  // a prim op ran since the lists were last re-read
  StateTensor* states_ = nullptr;
  size_t num_states_ = 0;
  ExecutionObserver* observer_ = nullptr;
};

}  // namespace pteron
