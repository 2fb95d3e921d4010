// Loading a method: its plan checked against the memory given, kernels resolved, delegates
// initialised, instructions decoded (the value table: method_values.cpp; inputs:
// method_inputs.cpp; running: method_execute.cpp).
#include "runtime/executor/method.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "runtime/executor/method_detail.h"
#include "schema/program_generated.h"

namespace pteron {
using method_detail::out_of_memory;
namespace {

// Appends `text` to a bounded list in `buffer`, marking truncation with "...".
void append_name(char* buffer, size_t capacity, size_t* used, const char* text) {
  if (*used >= capacity - 4) return;
  const int n = snprintf(buffer + *used, capacity - *used, "%s%s", *used ? ", " : "", text);
  if (n < 0) return;
  if (static_cast<size_t>(n) >= capacity - *used) {
    std::memcpy(buffer + capacity - 4, "...", 4);
    *used = capacity;
  } else {
    *used += static_cast<size_t>(n);
  }
}

}  // namespace

Result<Method> Method::load(const Program& program, const char* name, MemoryManager* memory) {
  if (memory == nullptr || memory->method_allocator == nullptr) {
    return fail(Error::InvalidArgument, "a method needs a memory manager with a method allocator");
  }
  PTERON_ASSIGN_OR_RETURN(const fb::ExecutionPlan* plan, program.plan(name));
  Method method{MethodMeta(plan)};
  PTERON_TRY(method.init(program, *plan, memory));
  return method;
}

Method::Method(Method&& o) noexcept
    : meta_(o.meta_),
      plan_(o.plan_),
      scratch_(o.scratch_),
      values_(o.values_),
      num_values_(o.num_values_),
      kernels_(o.kernels_),
      kernel_names_(o.kernel_names_),
      num_kernels_(o.num_kernels_),
      delegates_(o.delegates_),
      num_delegates_(o.num_delegates_),
      instructions_(o.instructions_),
      num_instructions_(o.num_instructions_),
      input_planned_(o.input_planned_),
      input_written_(o.input_written_),
      input_min_(o.input_min_),
      input_max_(o.input_max_),
      input_step_(o.input_step_),
      input_dim_offset_(o.input_dim_offset_),
      int_lists_(o.int_lists_),
      num_int_lists_(o.num_int_lists_),
      int_lists_stale_(o.int_lists_stale_),
      states_(o.states_),
      num_states_(o.num_states_),
      observer_(o.observer_) {
  o.delegates_ = nullptr;
  o.num_delegates_ = 0;
}

Method::~Method() {
  for (size_t i = 0; i < num_delegates_; ++i) {
    Delegate& d = delegates_[i];
    if (d.backend != nullptr && d.handle != nullptr) d.backend->destroy(d.handle);
    d.payload.~FreeableBuffer();
  }
}

Error Method::init(const Program& program, const fb::ExecutionPlan& plan, MemoryManager* memory) {
  plan_ = &plan;
  scratch_ = memory->scratch_allocator;
  PTERON_TRY(init_values(program, plan, memory));
  PTERON_TRY(init_kernels(plan, memory->method_allocator));
  PTERON_TRY(init_delegates(program, plan, memory));
  PTERON_TRY(init_instructions(plan, memory->method_allocator));
  PTERON_TRY(init_int_lists(plan, memory->method_allocator));
  PTERON_TRY(init_input_bounds(program, memory->method_allocator));
  PTERON_TRY(init_written_inputs(program, memory->method_allocator));
  return Error::Ok;
}

Error Method::init_kernels(const fb::ExecutionPlan& plan, MemoryAllocator* alloc) {
  num_kernels_ = plan.operators() ? plan.operators()->size() : 0;
  kernels_ = alloc->allocate_array<const KernelEntry*>(num_kernels_ ? num_kernels_ : 1);
  kernel_names_ = alloc->allocate_array<const char*>(num_kernels_ ? num_kernels_ : 1);
  if (!kernels_ || !kernel_names_) return out_of_memory("kernel table", num_kernels_ * 16);
  char missing[224];
  size_t used = 0, n_missing = 0;
  for (size_t i = 0; i < num_kernels_; ++i) {
    const fb::Operator* op = plan.operators()->Get(static_cast<flatbuffers::uoffset_t>(i));
    const char* overload = op->overload() ? op->overload()->c_str() : "";
    const KernelEntry* entry = find_kernel(op->name()->c_str(), overload);
    kernels_[i] = entry;
    if (entry != nullptr) {
      kernel_names_[i] = entry->name;
      continue;
    }
    // Keep a readable name for the missing-kernel report and for instruction_name().
    const size_t len = op->name()->size() + 1 + std::strlen(overload) + 1;
    char* full = static_cast<char*>(alloc->allocate(len, 1));
    if (full == nullptr) return out_of_memory("operator name", len);
    snprintf(full, len, overload[0] ? "%s.%s" : "%s", op->name()->c_str(), overload);
    kernel_names_[i] = full;
    ++n_missing;
    append_name(missing, sizeof(missing), &used, full);
  }
  if (n_missing > 0) {
    return fail(Error::NotFound, "method '%s' needs %zu kernel(s) this runtime lacks: %s", name(),
                n_missing, missing);
  }
  return Error::Ok;
}

Error Method::init_delegates(const Program& program, const fb::ExecutionPlan& plan,
                             MemoryManager* memory) {
  MemoryAllocator* alloc = memory->method_allocator;
  const size_t n = plan.delegates() ? plan.delegates()->size() : 0;
  if (n == 0) return Error::Ok;
  delegates_ = alloc->allocate_array<Delegate>(n);
  if (delegates_ == nullptr) return out_of_memory("delegates", n * sizeof(Delegate));
  for (size_t i = 0; i < n; ++i) {
    const fb::BackendDelegate* d = plan.delegates()->Get(static_cast<flatbuffers::uoffset_t>(i));
    new (&delegates_[i])
        Delegate{find_backend(d->id()->c_str()), nullptr, FreeableBuffer(), d->id()->c_str()};
    num_delegates_ = i + 1;
    Delegate& delegate = delegates_[i];
    if (delegate.backend == nullptr) {
      return fail(Error::NotFound,
                  "method '%s' delegate %zu needs backend '%s', which this runtime lacks", name(),
                  i, delegate.id);
    }
    clear_error_message();
    if (!delegate.backend->is_available()) {
      // A backend may say why (fail() in is_available: "no Vulkan 1.1+ device ...").
      char why[200];
      snprintf(why, sizeof(why), "%s", last_error_message());
      return fail(Error::NotSupported, "backend '%s' is not available on this device%s%s",
                  delegate.id, why[0] ? ": " : "", why);
    }
    Span<const uint8_t> payload;
    if (d->processed()->location() == fb::DataLocation::INLINE) {
      const auto* data =
          program.flatbuffer()->backend_delegate_data()->Get(d->processed()->index())->data();
      payload = Span<const uint8_t>(data->data(), data->size());
    } else {
      PTERON_ASSIGN_OR_RETURN(delegate.payload, program.load_segment(d->processed()->index()));
      payload = Span<const uint8_t>(delegate.payload.bytes(), delegate.payload.size());
    }
    const size_t n_specs = d->compile_specs() ? d->compile_specs()->size() : 0;
    CompileSpecView* specs = alloc->allocate_array<CompileSpecView>(n_specs ? n_specs : 1);
    if (specs == nullptr) return out_of_memory("compile specs", n_specs * sizeof(CompileSpecView));
    for (size_t k = 0; k < n_specs; ++k) {
      const fb::CompileSpec* s = d->compile_specs()->Get(static_cast<flatbuffers::uoffset_t>(k));
      specs[k].key = s->key()->c_str();
      specs[k].value = s->value() ? Span<const uint8_t>(s->value()->data(), s->value()->size())
                                  : Span<const uint8_t>();
    }
    BackendInitContext context{alloc, name(), &program};
    Result<DelegateHandle*> handle =
        delegate.backend->init(context, payload, Span<const CompileSpecView>(specs, n_specs));
    if (!handle.ok()) {
      char detail[160];
      snprintf(detail, sizeof(detail), "%s", last_error_message());
      return fail(handle.error(), "backend '%s' failed to initialise delegate %zu: %s", delegate.id,
                  i, detail);
    }
    delegate.handle = *handle;
  }
  return Error::Ok;
}

// A tensor an instruction touches needs memory: planned, constant, or a method input (set
// before execute). Anything else would hand a kernel a null pointer.
Error Method::check_has_memory(const fb::ExecutionPlan& plan, int32_t index, size_t instruction) {
  const EValue& v = values_[index];
  if (v.tag != Tag::Tensor || v.tensor->mutable_data() != nullptr || v.tensor->nbytes() == 0) {
    return Error::Ok;
  }
  for (size_t i = 0; i < num_inputs(); ++i) {
    if (plan.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) == index) return Error::Ok;
  }
  return fail(Error::InvalidProgram,
              "instruction %zu uses tensor value %d, which has no memory (not planned, constant or "
              "an input)",
              instruction, index);
}

Error Method::init_instructions(const fb::ExecutionPlan& plan, MemoryAllocator* alloc) {
  // Methods run their first chain; ExecuTorch emits exactly one.
  const auto* list = plan.chains()->Get(0)->instructions();
  num_instructions_ = list->size();
  instructions_ = alloc->allocate_array<Instruction>(num_instructions_ ? num_instructions_ : 1);
  if (instructions_ == nullptr)
    return out_of_memory("instructions", num_instructions_ * sizeof(Instruction));
  for (size_t k = 0; k < num_instructions_; ++k) {
    const fb::Instruction* ins = list->Get(static_cast<flatbuffers::uoffset_t>(k));
    Instruction& out = instructions_[k];
    out = Instruction{};
    const flatbuffers::Vector<int32_t>* args = nullptr;
    switch (ins->instr_args_type()) {
      case fb::InstructionArguments::KernelCall: {
        out.kind = Kind::Kernel;
        out.target = ins->instr_args_as_KernelCall()->op_index();
        args = ins->instr_args_as_KernelCall()->args();
        const char* op = kernel_names_[out.target];  // op_index verified
        // A prim op whose result is an Int (not et_view, whose out is a tensor; item() of an
        // integer tensor read as a size); the value indices were verified with the program.
        const bool prim = std::strncmp(op, "executorch_prim::", 17) == 0 ||
                          std::strncmp(op, "aten::sym_", 10) == 0 ||
                          std::strcmp(op, "aten::_local_scalar_dense") == 0;
        const int32_t last = args != nullptr && args->size() > 0 ? args->Get(args->size() - 1) : -1;
        out.writes_sym_int = prim && last >= 0 && values_[last].tag == Tag::Int;
        break;
      }
      case fb::InstructionArguments::DelegateCall:
        out.kind = Kind::Delegate;
        out.target = ins->instr_args_as_DelegateCall()->delegate_index();
        args = ins->instr_args_as_DelegateCall()->args();
        break;
      case fb::InstructionArguments::MoveCall:
        out.kind = Kind::Move;
        out.target = ins->instr_args_as_MoveCall()->move_from();
        out.value = ins->instr_args_as_MoveCall()->move_to();
        break;
      case fb::InstructionArguments::JumpFalseCall:
        out.kind = Kind::JumpFalse;
        out.target = ins->instr_args_as_JumpFalseCall()->destination_instruction();
        out.value = ins->instr_args_as_JumpFalseCall()->cond_value_index();
        break;
      default:
        out.kind = Kind::Free;
        break;
    }
    if (args != nullptr) {
      for (size_t a = 0; a < args->size(); ++a)
        PTERON_TRY(check_has_memory(plan, args->Get(static_cast<flatbuffers::uoffset_t>(a)), k));
      out.num_args = static_cast<uint32_t>(args->size());
      if (out.kind == Kind::Kernel && args->size() <= kMaxGatheredArgs) {
        // Kernel calls read their value indices from the program in place (flash on a device)
        // and gather the EValue pointers on the stack as they run (gather_args).
        out.gathered = true;
        out.arg_values = args->data();
      } else {
        // Delegate calls (any number of region inputs and outputs) keep the pointers.
        EValue** ptrs = alloc->allocate_array<EValue*>(args->size() ? args->size() : 1);
        if (ptrs == nullptr) return out_of_memory("instruction arguments", args->size() * 8);
        for (size_t a = 0; a < args->size(); ++a)
          ptrs[a] = &values_[args->Get(static_cast<flatbuffers::uoffset_t>(a))];
        out.args = ptrs;
      }
    }
  }
  return Error::Ok;
}

}  // namespace pteron
