#include "runtime/executor/method.h"

#include <cstdio>
#include <cstring>
#include <new>

#include "schema/program_generated.h"

namespace pteron {
namespace {

// The dim order of tensors whose program gives none: 0, 1, ..., kMaxTensorDim - 1.
constexpr uint8_t kIdentityDimOrder[kMaxTensorDim] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                      8, 9, 10, 11, 12, 13, 14, 15};

Error out_of_memory(const char* what, size_t bytes) {
  return fail(Error::OutOfMemory, "method allocator exhausted allocating %s (%zu bytes)", what,
              bytes);
}

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

// Whether the program carries named data `key` (pteron's optional per-method tables).
bool has_named_data(const Program& program, const char* key) {
  if (program.flatbuffer()->named_data() == nullptr) return false;
  for (const fb::NamedData* nd : *program.flatbuffer()->named_data())
    if (nd->key() && std::strcmp(nd->key()->c_str(), key) == 0) return true;
  return false;
}

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

Error Method::init_written_inputs(const Program& program, MemoryAllocator* alloc) {
  char key[96];
  snprintf(key, sizeof(key), "pteron.written_inputs.%s", name());
  if (!has_named_data(program, key)) return Error::Ok;
  Result<FreeableBuffer> data = program.named_data(key);
  if (!data.ok()) return data.error();
  const uint8_t* bytes = data.get().bytes();
  const size_t size = data.get().size();
  if (size == 0 || size % 4 != 0)
    return fail(Error::InvalidProgram, "%s: %zu bytes, not whole int32s", key, size);
  const size_t n = num_inputs();
  input_written_ = alloc->allocate_array<bool>(n ? n : 1);
  if (input_written_ == nullptr) return out_of_memory("written inputs", n);
  for (size_t i = 0; i < n; ++i) input_written_[i] = false;
  int64_t previous = -1;
  for (size_t w = 0; w < size / 4; ++w) {
    int32_t i;
    std::memcpy(&i, bytes + 4 * w, 4);
    // The program writes the input's planned bytes; one the caller's memory backs is not its.
    if (i <= previous || static_cast<size_t>(i) >= n || !input_planned_[i])
      return fail(Error::InvalidProgram,
                  "%s: entry %zu (%d) is not a planned input after the previous one (%zu inputs)",
                  key, w, i, n);
    input_written_[i] = true;
    previous = i;
  }
  return Error::Ok;
}

void Method::refresh_int_lists() {
  for (size_t l = 0; l < num_int_lists_; ++l) {
    const DynamicIntList& list = int_lists_[l];
    for (size_t k = 0; k < list.count; ++k)
      list.ints[k] = values_[list.items[k]].i;  // verified: an Int value's index
  }
}

Error Method::init_int_lists(const fb::ExecutionPlan& plan, MemoryAllocator* alloc) {
  // The Int values an instruction writes: prim ops' results (dynamic shapes) and moves. Static
  // programs have none and pay nothing per call.
  bool* written = nullptr;
  for (size_t k = 0; k < num_instructions_; ++k) {
    const Instruction& ins = instructions_[k];
    const bool writes = ins.writes_sym_int || ins.kind == Kind::Move;
    if (!writes) continue;
    if (written == nullptr) {
      written = alloc->allocate_array<bool>(num_values_);
      if (written == nullptr) return out_of_memory("int list flags", num_values_);
      for (size_t i = 0; i < num_values_; ++i) written[i] = false;
    }
    const size_t out = ins.kind == Kind::Move ? static_cast<size_t>(ins.value)
                                              : static_cast<size_t>(last_arg_value(ins));
    written[out] = true;
  }
  if (written == nullptr) return Error::Ok;
  // The int lists holding such a value are re-read from their items before the next kernel.
  const auto dynamic = [&](const fb::EValue* v) {
    if (v->val_type() != fb::KernelTypes::IntList) return false;
    for (int32_t item : *v->val_as_IntList()->items())
      if (written[item]) return true;  // verified: a value index
    return false;
  };
  for (size_t i = 0; i < num_values_; ++i)
    num_int_lists_ += dynamic(plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i)));
  if (num_int_lists_ == 0) return Error::Ok;
  int_lists_ = alloc->allocate_array<DynamicIntList>(num_int_lists_);
  if (int_lists_ == nullptr) return out_of_memory("int lists", num_int_lists_ * 24);
  size_t l = 0;
  for (size_t i = 0; i < num_values_; ++i) {
    const fb::EValue* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (!dynamic(v)) continue;
    const auto* items = v->val_as_IntList()->items();
    int_lists_[l++] = DynamicIntList{const_cast<int64_t*>(values_[i].int_list.data()),
                                     items->data(), items->size()};
  }
  return Error::Ok;
}

Error Method::init_input_bounds(const Program& program, MemoryAllocator* alloc) {
  const size_t n = num_inputs();
  bool dynamic = false;
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    dynamic = dynamic || (v.tag == Tag::Tensor && v.tensor->dynamism() != ShapeDynamism::Static);
  }
  if (!dynamic) return Error::Ok;  // set_input compares with the tensors' own sizes
  input_dim_offset_ = alloc->allocate_array<size_t>(n + 1);
  if (input_dim_offset_ == nullptr) return out_of_memory("input bounds", (n + 1) * 8);
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    input_dim_offset_[i] = total;
    const EValue& v = input(i);
    if (v.tag == Tag::Tensor) total += static_cast<size_t>(v.tensor->dim());
  }
  input_dim_offset_[n] = total;
  input_min_ = alloc->allocate_array<int32_t>(total ? total : 1);
  input_max_ = alloc->allocate_array<int32_t>(total ? total : 1);
  if (!input_min_ || !input_max_) return out_of_memory("input bounds", total * 8);
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    if (v.tag != Tag::Tensor) continue;
    const bool dynamic = v.tensor->dynamism() != ShapeDynamism::Static;
    for (int32_t d = 0; d < v.tensor->dim(); ++d) {
      input_max_[input_dim_offset_[i] + d] = v.tensor->size(d);
      input_min_[input_dim_offset_[i] + d] = dynamic ? 0 : v.tensor->size(d);
    }
  }
  // pteron's programs record the lower bounds (ExecuTorch's Tensor has none): int32 little
  // endian, per input its rank then its minimum sizes. Checked against the inputs.
  char key[96];
  snprintf(key, sizeof(key), "pteron.min_sizes.%s", name());
  PTERON_TRY(
      read_input_dim_table(program, key, input_min_, [&](size_t i, int32_t d, int32_t lo) -> Error {
        const int32_t hi = input_max_[input_dim_offset_[i] + d];
        if (lo < 0 || lo > hi)
          return fail(Error::InvalidProgram, "%s: input %zu dim %d minimum %d outside [0, %d]", key,
                      i, d, lo, hi);
        return Error::Ok;
      }));
  // And the steps of torch.export's derived dims (h = 32 * _h), the same way: 1 for any size.
  snprintf(key, sizeof(key), "pteron.size_steps.%s", name());
  if (!has_named_data(program, key)) return Error::Ok;
  input_step_ = alloc->allocate_array<int32_t>(total ? total : 1);
  if (input_step_ == nullptr) return out_of_memory("input size steps", total * 4);
  return read_input_dim_table(
      program, key, input_step_, [&](size_t i, int32_t d, int32_t step) -> Error {
        if (step < 1)
          return fail(Error::InvalidProgram, "%s: input %zu dim %d step %d is below 1", key, i, d,
                      step);
        return Error::Ok;
      });
}

template <typename Accept>
Error Method::read_input_dim_table(const Program& program, const char* key, int32_t* table,
                                   Accept accept) {
  if (!has_named_data(program, key)) return Error::Ok;
  Result<FreeableBuffer> data = program.named_data(key);
  if (!data.ok()) return data.error();
  const Span<const uint8_t> bytes(data.get().bytes(), data.get().size());
  if (bytes.size() % 4 != 0)
    return fail(Error::InvalidProgram, "%s: %zu bytes, not whole int32s", key, bytes.size());
  const size_t words = bytes.size() / 4;
  auto word = [&](size_t w) {
    int32_t x;
    std::memcpy(&x, bytes.data() + 4 * w, 4);
    return x;
  };
  const size_t n = num_inputs();
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    const EValue& v = input(i);
    const int32_t rank = v.tag == Tag::Tensor ? v.tensor->dim() : 0;
    if (w >= words || word(w) != rank)
      return fail(Error::InvalidProgram, "%s: entry for input %zu does not match its rank %d", key,
                  i, rank);
    ++w;
    if (words - w < static_cast<size_t>(rank))
      return fail(Error::InvalidProgram, "%s: truncated at input %zu", key, i);
    for (int32_t d = 0; d < rank; ++d, ++w) {
      PTERON_TRY(accept(i, d, word(w)));
      table[input_dim_offset_[i] + d] = word(w);
    }
  }
  if (w != words) return fail(Error::InvalidProgram, "%s: %zu trailing words", key, words - w);
  return Error::Ok;
}

int32_t* Method::shared_strides(size_t before, int32_t dim, const int32_t* sizes,
                                const uint8_t* dim_order) const {
#ifdef PTERON_BARE_METAL
  // On a device, static tensors whose strides are equal share one array (strides depend only
  // on sizes and dim order, and static ones are never rewritten): convolutions repeat the same
  // activation shapes, and every 1-D parameter tensor has strides {1}. A linear search of the
  // tensors made so far: firmware methods have tens of tensors, not thousands.
  int32_t want[kMaxTensorDim];
  int64_t running = 1;
  for (int32_t k = dim - 1; k >= 0; --k) {
    want[dim_order[k]] = static_cast<int32_t>(running);
    running *= sizes[dim_order[k]] > 0 ? sizes[dim_order[k]] : 1;
  }
  for (size_t j = 0; j < before && dim > 0; ++j) {
    if (values_[j].tag != Tag::Tensor) continue;
    const Tensor& other = *values_[j].tensor;
    if (other.dim() != dim || other.dynamism() != ShapeDynamism::Static) continue;
    if (std::memcmp(other.strides().data(), want, sizeof(int32_t) * dim) == 0)
      return const_cast<int32_t*>(other.strides().data());
  }
#else
  (void)before, (void)dim, (void)sizes, (void)dim_order;
#endif
  return nullptr;
}

Error Method::init_values(const Program& program, const fb::ExecutionPlan& plan,
                          MemoryManager* memory) {
  MemoryAllocator* alloc = memory->method_allocator;
  num_values_ = plan.values()->size();
  values_ = alloc->allocate_array<EValue>(num_values_);
  if (values_ == nullptr && num_values_ > 0)
    return out_of_memory("values", num_values_ * sizeof(EValue));
  for (size_t i = 0; i < num_values_; ++i) new (&values_[i]) EValue();

  const fb::SubsegmentOffsets* cs = program.flatbuffer()->constant_segment();
  const Span<const uint8_t> constants = program.constant_segment();
  // State tensors: planned, with an initial value (verified against the segment at load).
  size_t n_states = 0, n_tensors = 0;
  for (size_t i = 0; i < num_values_; ++i) {
    const fb::EValue* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (v->val_type() != fb::KernelTypes::Tensor) continue;
    ++n_tensors;
    if (v->val_as_Tensor()->allocation_info() && v->val_as_Tensor()->data_buffer_idx() != 0)
      ++n_states;
  }
  // Every tensor's metadata in one array: no per-tensor alignment padding.
  Tensor* tensors = alloc->allocate_array<Tensor>(n_tensors ? n_tensors : 1);
  if (tensors == nullptr) return out_of_memory("tensor metadata", n_tensors * sizeof(Tensor));
  size_t next_tensor = 0;
  states_ = alloc->allocate_array<StateTensor>(n_states ? n_states : 1);
  if (states_ == nullptr) return out_of_memory("state table", n_states * sizeof(StateTensor));
  const Span<const uint8_t> initial_state = program.initial_state_segment();
  const auto* mutable_segments = program.flatbuffer()->mutable_data_segments();
  // Pass 1: scalars and tensors. Pass 2: lists, which refer to other values.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < num_values_; ++i) {
      const fb::EValue* v = plan.values()->Get(static_cast<flatbuffers::uoffset_t>(i));
      EValue& out = values_[i];
      const fb::KernelTypes type = v->val_type();
      const bool is_list = type == fb::KernelTypes::IntList ||
                           type == fb::KernelTypes::TensorList ||
                           type == fb::KernelTypes::OptionalTensorList;
      if ((pass == 0) == is_list) continue;
      switch (type) {
        case fb::KernelTypes::Null:
          out.tag = Tag::None;
          break;
        case fb::KernelTypes::Int:
          out = EValue::from_int(v->val_as_Int()->int_val());
          break;
        case fb::KernelTypes::Bool:
          out = EValue::from_bool(v->val_as_Bool()->bool_val());
          break;
        case fb::KernelTypes::Double:
          out = EValue::from_double(v->val_as_Double()->double_val());
          break;
        case fb::KernelTypes::String: {
          const flatbuffers::String* s = v->val_as_String()->string_val();
          out.tag = Tag::String;
          out.string = Span<const char>(s->c_str(), s->size());
          break;
        }
        case fb::KernelTypes::DoubleList: {
          const auto* items = v->val_as_DoubleList()->items();
          out.tag = Tag::DoubleList;
          out.double_list = Span<const double>(items->data(), items->size());
          break;
        }
        case fb::KernelTypes::BoolList: {
          const auto* items = v->val_as_BoolList()->items();
          // Read as bool later: a byte other than 0/1 would be undefined behaviour.
          for (size_t k = 0; k < items->size(); ++k) {
            if (items->Get(k) > 1)
              return fail(Error::InvalidProgram, "value %zu: bool list item %zu is %u, not 0 or 1",
                          i, k, static_cast<unsigned>(items->Get(k)));
          }
          out.tag = Tag::BoolList;
          out.bool_list =
              Span<const bool>(reinterpret_cast<const bool*>(items->data()), items->size());
          break;
        }
        case fb::KernelTypes::IntList: {
          const auto* items = v->val_as_IntList()->items();
          int64_t* ints = alloc->allocate_array<int64_t>(items->size());
          if (ints == nullptr && items->size() > 0)
            return out_of_memory("int list", items->size() * 8);
          for (size_t k = 0; k < items->size(); ++k) ints[k] = values_[items->Get(k)].i;
          out.tag = Tag::IntList;
          out.int_list = Span<const int64_t>(ints, items->size());
          break;
        }
        case fb::KernelTypes::TensorList:
        case fb::KernelTypes::OptionalTensorList: {
          const bool optional = type == fb::KernelTypes::OptionalTensorList;
          const auto* items =
              optional ? v->val_as_OptionalTensorList()->items() : v->val_as_TensorList()->items();
          Tensor** list = alloc->allocate_array<Tensor*>(items->size());
          if (list == nullptr && items->size() > 0)
            return out_of_memory("tensor list", items->size() * 8);
          for (size_t k = 0; k < items->size(); ++k) {
            const int32_t idx = items->Get(k);
            list[k] = (idx < 0 || values_[idx].tag != Tag::Tensor) ? nullptr : values_[idx].tensor;
          }
          out.tag = optional ? Tag::OptionalTensorList : Tag::TensorList;
          out.tensor_list = Span<Tensor* const>(list, items->size());
          break;
        }
        case fb::KernelTypes::Tensor: {
          const fb::Tensor* t = v->val_as_Tensor();
          const int32_t dim = static_cast<int32_t>(t->sizes()->size());
          const auto dynamism = static_cast<ShapeDynamism>(t->shape_dynamism());
          Tensor* tensor = &tensors[next_tensor++];
          int32_t* sizes;
          uint8_t* dim_order;
          int32_t* strides = nullptr;
          if (dynamism == ShapeDynamism::Static) {
            // A static shape never changes (resize() refuses before writing): read the sizes and
            // dim order from the program in place (flash on a device) instead of copying them
            // into method memory. The verifier checked both; flatbuffers aligns the vectors.
            sizes = const_cast<int32_t*>(t->sizes()->data());
            dim_order =
                const_cast<uint8_t*>(t->dim_order() ? t->dim_order()->data() : kIdentityDimOrder);
            strides = shared_strides(i, dim, sizes, dim_order);
          } else {
            sizes = alloc->allocate_array<int32_t>(dim ? dim : 1);
            dim_order = alloc->allocate_array<uint8_t>(dim ? dim : 1);
            if (!sizes || !dim_order) return out_of_memory("tensor metadata", 64);
            for (int32_t d = 0; d < dim; ++d) {
              sizes[d] = t->sizes()->Get(d);
              dim_order[d] = t->dim_order() ? t->dim_order()->Get(d) : static_cast<uint8_t>(d);
            }
          }
          if (strides == nullptr) strides = alloc->allocate_array<int32_t>(dim ? dim : 1);
          if (strides == nullptr) return out_of_memory("tensor strides", 4 * sizeof(int32_t));
          new (tensor) Tensor(static_cast<ScalarType>(t->scalar_type()), dim, sizes, dim_order,
                              strides, nullptr, dynamism);
          if (const fb::AllocationDetails* a = t->allocation_info()) {
            if (memory->planned == nullptr) {
              return fail(Error::InvalidArgument,
                          "method '%s' plans tensors in arenas but no planned memory was given",
                          name());
            }
            const uint64_t offset =
                (static_cast<uint64_t>(a->memory_offset_high()) << 32) | a->memory_offset_low();
            PTERON_ASSIGN_OR_RETURN(
                void* data, memory->planned->address(a->memory_id(), offset, tensor->nbytes()));
            tensor->set_data(data);
            if (t->data_buffer_idx() != 0) {
              // The verifier checked the entry lies in the segment; this checks the bytes
              // loaded are the segment the verifier measured.
              const uint64_t at = mutable_segments->Get(0)->offsets()->Get(t->data_buffer_idx());
              if (at > initial_state.size() || tensor->nbytes() > initial_state.size() - at) {
                return fail(Error::InvalidProgram, "state tensor %zu overruns the mutable data", i);
              }
              states_[num_states_++] =
                  StateTensor{tensor, data, initial_state.data() + at, tensor->nbytes()};
            }
          } else if (t->data_buffer_idx() != 0) {
            const uint8_t* data;
            if (cs != nullptr && cs->offsets() != nullptr && cs->offsets()->size() > 0) {
              data = constants.data() + cs->offsets()->Get(t->data_buffer_idx());
            } else {
              data = program.flatbuffer()
                         ->constant_buffer()
                         ->Get(t->data_buffer_idx())
                         ->storage()
                         ->data();
            }
            tensor->set_data(const_cast<uint8_t*>(data));  // kernels never write constants
          }
          // Kernels read elements in place; a misaligned tensor would be undefined behaviour.
          if (reinterpret_cast<uintptr_t>(tensor->mutable_data()) % tensor->element_size() != 0) {
            return fail(Error::InvalidProgram,
                        "tensor value %zu is not aligned to its %zu-byte elements", i,
                        tensor->element_size());
          }
          out = EValue::from_tensor(tensor);
          break;
        }
        default:
          return fail(Error::InvalidProgram, "value %zu has unknown type", i);
      }
    }
  }

  PTERON_TRY(reset_state());
  const size_t n_inputs = num_inputs();
  input_planned_ = alloc->allocate_array<bool>(n_inputs ? n_inputs : 1);
  if (input_planned_ == nullptr) return out_of_memory("input flags", n_inputs);
  for (size_t i = 0; i < n_inputs; ++i) {
    const fb::EValue* v =
        plan.values()->Get(plan.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
    input_planned_[i] =
        v->val_type() == fb::KernelTypes::Tensor && v->val_as_Tensor()->allocation_info();
  }
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

Error Method::input_index(size_t i, Tensor** tensor) {
  if (i >= num_inputs()) {
    return fail(Error::InvalidArgument, "method '%s' has %zu inputs; input %zu does not exist",
                name(), num_inputs(), i);
  }
  EValue& v = input(i);
  if (v.tag != Tag::Tensor) return fail(Error::InvalidArgument, "input %zu is not a tensor", i);
  *tensor = v.tensor;
  return Error::Ok;
}

EValue& Method::input(size_t i) {
  return values_[plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
}

const EValue& Method::output(size_t i) const {
  return values_[plan_->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
}

Error Method::set_input(size_t i, const Tensor& src) {
  Tensor* dst = nullptr;
  PTERON_TRY(input_index(i, &dst));
  if (src.dtype() != dst->dtype()) {
    return fail(Error::InvalidArgument, "input %zu: dtype %s given, the program expects %s", i,
                scalar_type_name(src.dtype()), scalar_type_name(dst->dtype()));
  }
  if (src.dim() != dst->dim()) {
    return fail(Error::InvalidArgument, "input %zu: rank %d given, the program expects rank %d", i,
                src.dim(), dst->dim());
  }
  for (int32_t d = 0; d < src.dim(); ++d) {
    const bool bounded = input_min_ != nullptr;
    const int32_t lo = bounded ? input_min_[input_dim_offset_[i] + d] : dst->size(d);
    const int32_t hi = bounded ? input_max_[input_dim_offset_[i] + d] : dst->size(d);
    if (lo == hi && src.size(d) != hi) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d given, the program expects %d", i, src.size(d), d,
                  hi);
    }
    if (src.size(d) < lo || src.size(d) > hi) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d is outside the program's bounds [%d, %d]", i,
                  src.size(d), d, lo, hi);
    }
    const int32_t step = input_step_ != nullptr ? input_step_[input_dim_offset_[i] + d] : 1;
    if ((src.size(d) - lo) % step != 0) {
      return fail(Error::InvalidArgument,
                  "input %zu: size %d in dim %d is not %d plus a multiple of %d (its export "
                  "Dim is derived: %d * a size + offset)",
                  i, src.size(d), d, lo, step, step);
    }
  }
  PTERON_TRY(dst->resize(src.sizes()));
  // Two dim orders lay the bytes out alike when they agree on the dims of size above 1: a dim of
  // size 1 may sit anywhere (torch gives it any stride: x.T of a [1, n] row is [n, 1] in dim
  // order (1, 0)), and an empty tensor has no layout to disagree on.
  if (src.numel() > 0) {
    int32_t s = 0, p = 0;
    const int32_t rank = src.dim();
    while (true) {
      while (s < rank && src.size(src.dim_order()[s]) == 1) ++s;
      while (p < rank && src.size(dst->dim_order()[p]) == 1) ++p;
      if (s == rank || p == rank) break;
      if (src.dim_order()[s] != dst->dim_order()[p])
        return fail(Error::InvalidArgument, "input %zu: dim order differs from the program's", i);
      ++s;
      ++p;
    }
  }
  if (input_planned_[i]) {
    if (src.nbytes() > 0) std::memcpy(dst->mutable_data(), src.const_data(), src.nbytes());
  } else {
    dst->set_data(const_cast<void*>(src.const_data()));
  }
  return Error::Ok;
}

bool Method::input_size_bounds(size_t i, int32_t d, int32_t* lo, int32_t* hi) const {
  if (i >= num_inputs()) return false;
  const EValue& v = values_[plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i))];
  if (v.tag != Tag::Tensor || d < 0 || d >= v.tensor->dim()) return false;
  const bool bounded = input_min_ != nullptr;
  *lo = bounded ? input_min_[input_dim_offset_[i] + d] : v.tensor->size(d);
  *hi = bounded ? input_max_[input_dim_offset_[i] + d] : v.tensor->size(d);
  return true;
}

Error Method::set_input_pointer(size_t i, void* data, size_t nbytes) {
  Tensor* dst = nullptr;
  PTERON_TRY(input_index(i, &dst));
  if (input_planned_[i]) {
    return fail(Error::InvalidArgument, "input %zu lives in a planned arena; use set_input to copy",
                i);
  }
  if (nbytes != dst->nbytes()) {
    return fail(Error::InvalidArgument, "input %zu: %zu bytes given, the program expects %zu", i,
                nbytes, dst->nbytes());
  }
  dst->set_data(data);
  return Error::Ok;
}

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
