// A method's value table: each EValue of the plan built in the method allocator (tensors with
// their sizes, dim orders, strides and memory; int lists; the rest), at load.
#include <new>

#include "runtime/executor/method.h"
#include "runtime/executor/method_detail.h"
#include "schema/program_generated.h"

namespace pteron {
using method_detail::out_of_memory;
namespace {

// The dim order of tensors whose program gives none: 0, 1, ..., kMaxTensorDim - 1.
constexpr uint8_t kIdentityDimOrder[kMaxTensorDim] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                      8, 9, 10, 11, 12, 13, 14, 15};

}  // namespace

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

}  // namespace pteron
