#include "runtime/executor/program_verifier.h"

#include "runtime/core/tensor.h"
#include "schema/program_generated.h"

namespace pteron {
namespace {

// Largest tensor the runtime will describe (bytes); guards size arithmetic against overflow.
constexpr uint64_t kMaxTensorBytes = uint64_t{1} << 40;

template <typename T>
size_t len(const flatbuffers::Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

// The flatbuffer verifier checks vector lengths for 4-byte alignment only; vectors of 8-byte
// scalars must also be 8-byte aligned before they are read.
template <typename T>
bool aligned(const flatbuffers::Vector<T>* v) {
  // flatbuffers does not align an empty vector (PreAlign skips zero lengths): nothing is read.
  return v == nullptr || v->size() == 0 || reinterpret_cast<uintptr_t>(v->data()) % sizeof(T) == 0;
}

class PlanVerifier {
 public:
  PlanVerifier(const fb::Program& program, const fb::ExecutionPlan& plan, size_t constant_bytes,
               size_t mutable_bytes)
      : program_(program),
        plan_(plan),
        constant_bytes_(constant_bytes),
        mutable_bytes_(mutable_bytes) {}

  Error verify() {
    name_ = plan_.name() ? plan_.name()->c_str() : nullptr;
    if (name_ == nullptr) return fail(Error::InvalidProgram, "a method has no name");
    if (plan_.values() == nullptr) {
      return fail(Error::InvalidProgram, "method '%s' has no value table", name_);
    }
    n_values_ = plan_.values()->size();
    const auto* sizes = plan_.non_const_buffer_sizes();
    if (!aligned(sizes)) return bad("planned buffer sizes are misaligned");
    for (size_t i = 0; i < len(sizes); ++i) {
      if (sizes->Get(i) < 0) return bad("planned buffer %zu has negative size", i);
    }
    for (size_t i = 0; i < n_values_; ++i) PTERON_TRY(verify_value(i));
    PTERON_TRY(verify_index_list(plan_.inputs(), "input"));
    PTERON_TRY(verify_index_list(plan_.outputs(), "output"));
    for (size_t i = 0; i < len(plan_.operators()); ++i) {
      const fb::Operator* op = plan_.operators()->Get(i);
      if (op->name() == nullptr) return bad("operator %zu has no name", i);
    }
    for (size_t i = 0; i < len(plan_.delegates()); ++i) PTERON_TRY(verify_delegate(i));
    if (len(plan_.chains()) == 0) return bad("has no chains");
    for (size_t c = 0; c < len(plan_.chains()); ++c) PTERON_TRY(verify_chain(c));
    return Error::Ok;
  }

 private:
  template <typename... Args>
  Error bad(const char* fmt, Args... args) {
    char detail[160];
    snprintf(detail, sizeof(detail), fmt, args...);
    return fail(Error::InvalidProgram, "invalid program: method '%s': %s", name_, detail);
  }

  bool in_range(int64_t index) const {
    return index >= 0 && static_cast<uint64_t>(index) < n_values_;
  }
  fb::KernelTypes type_of(int64_t index) const {
    return plan_.values()->Get(static_cast<flatbuffers::uoffset_t>(index))->val_type();
  }

  bool is_bool_value(int64_t index) const {
    const fb::EValue* v = plan_.values()->Get(static_cast<flatbuffers::uoffset_t>(index));
    if (v->val_type() == fb::KernelTypes::Bool) return true;
    const fb::Tensor* t = v->val_as_Tensor();
    return t != nullptr && t->scalar_type() == fb::ScalarType::BOOL;
  }

  Error verify_index_list(const flatbuffers::Vector<int32_t>* list, const char* what) {
    for (size_t i = 0; i < len(list); ++i) {
      if (!in_range(list->Get(i)))
        return bad("%s %zu refers to value %d of %zu", what, i, list->Get(i), n_values_);
    }
    return Error::Ok;
  }

  Error verify_value(size_t i) {
    const fb::EValue* v = plan_.values()->Get(i);
    // A union may carry a type tag without a value.
    if (v->val() == nullptr) return bad("value %zu has no payload", i);
    switch (v->val_type()) {
      case fb::KernelTypes::Null:
      case fb::KernelTypes::Int:
      case fb::KernelTypes::Bool:
      case fb::KernelTypes::Double:
        return Error::Ok;
      case fb::KernelTypes::String:
        return v->val_as_String()->string_val() ? Error::Ok : bad("string value %zu is empty", i);
      case fb::KernelTypes::Tensor:
        return verify_tensor(i, *v->val_as_Tensor());
      case fb::KernelTypes::IntList: {
        const auto* items = v->val_as_IntList()->items();
        if (items == nullptr || !aligned(items)) return bad("int list %zu is malformed", i);
        // ExecuTorch stores int lists as indices of Int values (so symbolic ints can change).
        for (size_t k = 0; k < items->size(); ++k) {
          if (!in_range(items->Get(k)) || type_of(items->Get(k)) != fb::KernelTypes::Int) {
            return bad("int list %zu item %zu refers to value %lld, which is not an int", i, k,
                       static_cast<long long>(items->Get(k)));
          }
        }
        return Error::Ok;
      }
      case fb::KernelTypes::DoubleList: {
        const auto* items = v->val_as_DoubleList()->items();
        return items != nullptr && aligned(items) ? Error::Ok
                                                  : bad("double list %zu is malformed", i);
      }
      case fb::KernelTypes::BoolList:
        return v->val_as_BoolList()->items() ? Error::Ok : bad("bool list %zu has no items", i);
      case fb::KernelTypes::TensorList: {
        const auto* items = v->val_as_TensorList()->items();
        if (items == nullptr) return bad("tensor list %zu has no items", i);
        for (size_t k = 0; k < items->size(); ++k) {
          if (!in_range(items->Get(k)) || type_of(items->Get(k)) != fb::KernelTypes::Tensor) {
            return bad("tensor list %zu item %zu refers to value %d, which is not a tensor", i, k,
                       items->Get(k));
          }
        }
        return Error::Ok;
      }
      case fb::KernelTypes::OptionalTensorList: {
        const auto* items = v->val_as_OptionalTensorList()->items();
        if (items == nullptr) return bad("optional tensor list %zu has no items", i);
        for (size_t k = 0; k < items->size(); ++k) {
          const int32_t item = items->Get(k);
          if (item == -1) continue;
          if (!in_range(item) || (type_of(item) != fb::KernelTypes::Tensor &&
                                  type_of(item) != fb::KernelTypes::Null)) {
            return bad(
                "optional tensor list %zu item %zu refers to value %d, which is not a tensor", i, k,
                item);
          }
        }
        return Error::Ok;
      }
      default:
        return bad("value %zu has unknown type %d", i, static_cast<int>(v->val_type()));
    }
  }

  Error verify_tensor(size_t i, const fb::Tensor& t) {
    const ScalarType dtype = static_cast<ScalarType>(t.scalar_type());
    if (!is_supported(dtype))
      return bad("tensor %zu has unsupported dtype %d", i, static_cast<int>(dtype));
    if (t.sizes() == nullptr) return bad("tensor %zu has no sizes", i);
    const size_t dim = t.sizes()->size();
    if (dim > static_cast<size_t>(kMaxTensorDim))
      return bad("tensor %zu has rank %zu (max %d)", i, dim, kMaxTensorDim);
    if (t.dim_order() != nullptr) {
      if (t.dim_order()->size() != dim ||
          !is_valid_dim_order(Span<const uint8_t>(t.dim_order()->data(), dim))) {
        return bad("tensor %zu has a dim order that is not a permutation of its %zu dims", i, dim);
      }
    }
    uint64_t nbytes = element_size(dtype);
    for (size_t d = 0; d < dim; ++d) {
      const int32_t s = t.sizes()->Get(d);
      if (s < 0) return bad("tensor %zu has negative size %d in dim %zu", i, s, d);
    }
    // The element count and the outermost stride (zero dims counted as 1) must fit 32 bits.
    if (checked_numel(Span<const int32_t>(t.sizes()->data(), dim), INT32_MAX) < 0)
      return bad("tensor %zu has more than 2^31-1 elements (strides are 32-bit)", i);
    for (size_t d = 0; d < dim; ++d) {
      const int32_t s = t.sizes()->Get(d);
      if (s != 0 && nbytes > kMaxTensorBytes / static_cast<uint64_t>(s)) {
        return bad("tensor %zu is larger than %llu bytes", i,
                   static_cast<unsigned long long>(kMaxTensorBytes));
      }
      nbytes *= static_cast<uint64_t>(s);
    }
    if (t.storage_offset() != 0) return bad("tensor %zu has a storage offset (unsupported)", i);
    if (t.shape_dynamism() == fb::TensorShapeDynamism::DYNAMIC_UNBOUND) {
      return fail(Error::NotSupported, "method '%s': tensor %zu has unbounded dynamic shape", name_,
                  i);
    }
    const fb::AllocationDetails* alloc = t.allocation_info();
    if (alloc != nullptr) {
      if (t.data_buffer_idx() != 0)
        PTERON_TRY(verify_initial_state(i, t.data_buffer_idx(), nbytes));
      const auto* sizes = plan_.non_const_buffer_sizes();
      const uint32_t id = alloc->memory_id();
      if (id == 0 || id >= len(sizes))
        return bad("tensor %zu is planned in memory_id %u, which does not exist", i, id);
      const uint64_t offset =
          (static_cast<uint64_t>(alloc->memory_offset_high()) << 32) | alloc->memory_offset_low();
      const uint64_t arena = static_cast<uint64_t>(sizes->Get(id));
      if (offset > arena || nbytes > arena - offset) {
        return bad("tensor %zu at offset %llu (+%llu bytes) overruns arena %u of %llu bytes", i,
                   static_cast<unsigned long long>(offset), static_cast<unsigned long long>(nbytes),
                   id, static_cast<unsigned long long>(arena));
      }
    } else if (t.data_buffer_idx() != 0) {
      PTERON_TRY(verify_constant(i, t.data_buffer_idx(), nbytes));
    }
    return Error::Ok;
  }

  // A planned tensor with data_buffer_idx > 0 is state: its initial value is entry `index` of
  // mutable_data_segments[0], copied into the arena at load.
  Error verify_initial_state(size_t i, uint32_t index, uint64_t nbytes) {
    const auto* segs = program_.mutable_data_segments();
    const fb::SubsegmentOffsets* ms = len(segs) > 0 ? segs->Get(0) : nullptr;
    if (ms == nullptr || index >= len(ms->offsets())) {
      return bad(
          "tensor %zu takes its initial value from mutable data entry %u, which does not exist", i,
          index);
    }
    const uint64_t offset = ms->offsets()->Get(index);
    if (offset > mutable_bytes_ || nbytes > mutable_bytes_ - offset) {
      return bad(
          "state tensor %zu (%llu bytes at %llu) overruns the mutable data segment (%zu bytes)", i,
          static_cast<unsigned long long>(nbytes), static_cast<unsigned long long>(offset),
          mutable_bytes_);
    }
    return Error::Ok;
  }

  Error verify_constant(size_t i, uint32_t index, uint64_t nbytes) {
    const fb::SubsegmentOffsets* cs = program_.constant_segment();
    if (cs != nullptr && len(cs->offsets()) > 0) {
      if (index >= cs->offsets()->size()) {
        return bad("tensor %zu uses constant %u of %u", i, index, cs->offsets()->size());
      }
      const uint64_t offset = cs->offsets()->Get(index);
      if (offset > constant_bytes_ || nbytes > constant_bytes_ - offset) {
        return bad(
            "constant tensor %zu (%llu bytes at %llu) overruns the constant segment (%zu bytes)", i,
            static_cast<unsigned long long>(nbytes), static_cast<unsigned long long>(offset),
            constant_bytes_);
      }
      return Error::Ok;
    }
    const auto* buffers = program_.constant_buffer();
    if (index >= len(buffers))
      return bad("tensor %zu uses constant buffer %u, which does not exist", i, index);
    const auto* storage = buffers->Get(index)->storage();
    if (len(storage) < nbytes)
      return bad("constant buffer %u is smaller than tensor %zu", index, i);
    return Error::Ok;
  }

  Error verify_delegate(size_t i) {
    const fb::BackendDelegate* d = plan_.delegates()->Get(i);
    if (d->id() == nullptr) return bad("delegate %zu has no backend id", i);
    const fb::BackendDelegateDataReference* ref = d->processed();
    if (ref == nullptr) return bad("delegate %zu has no payload", i);
    if (ref->location() == fb::DataLocation::INLINE) {
      const auto* data = program_.backend_delegate_data();
      if (ref->index() >= len(data) || data->Get(ref->index())->data() == nullptr) {
        return bad("delegate %zu refers to inline data %u, which does not exist", i, ref->index());
      }
    } else if (ref->location() == fb::DataLocation::SEGMENT) {
      if (ref->index() >= len(program_.segments())) {
        return bad("delegate %zu refers to segment %u, which does not exist", i, ref->index());
      }
    } else {
      return bad("delegate %zu has unknown payload location", i);
    }
    for (size_t k = 0; k < len(d->compile_specs()); ++k) {
      if (d->compile_specs()->Get(k)->key() == nullptr)
        return bad("delegate %zu compile spec %zu has no key", i, k);
    }
    return Error::Ok;
  }

  Error verify_args(const flatbuffers::Vector<int32_t>* args, size_t c, size_t k) {
    if (args == nullptr) return bad("instruction %zu of chain %zu has no argument list", k, c);
    for (size_t a = 0; a < args->size(); ++a) {
      if (!in_range(args->Get(a))) {
        return bad("instruction %zu argument %zu refers to value %d of %zu", k, a, args->Get(a),
                   n_values_);
      }
    }
    return Error::Ok;
  }

  Error verify_chain(size_t c) {
    const fb::Chain* chain = plan_.chains()->Get(c);
    const auto* instructions = chain->instructions();
    if (instructions == nullptr) return bad("chain %zu has no instructions", c);
    const size_t n = instructions->size();
    for (size_t k = 0; k < n; ++k) {
      const fb::Instruction* ins = instructions->Get(k);
      if (ins->instr_args() == nullptr)
        return bad("instruction %zu of chain %zu has no arguments", k, c);
      switch (ins->instr_args_type()) {
        case fb::InstructionArguments::KernelCall: {
          const auto* call = ins->instr_args_as_KernelCall();
          if (call->op_index() < 0 ||
              static_cast<size_t>(call->op_index()) >= len(plan_.operators())) {
            return bad("instruction %zu calls operator %d of %zu", k, call->op_index(),
                       len(plan_.operators()));
          }
          PTERON_TRY(verify_args(call->args(), c, k));
          break;
        }
        case fb::InstructionArguments::DelegateCall: {
          const auto* call = ins->instr_args_as_DelegateCall();
          if (call->delegate_index() < 0 ||
              static_cast<size_t>(call->delegate_index()) >= len(plan_.delegates())) {
            return bad("instruction %zu calls delegate %d of %zu", k, call->delegate_index(),
                       len(plan_.delegates()));
          }
          PTERON_TRY(verify_args(call->args(), c, k));
          break;
        }
        case fb::InstructionArguments::MoveCall: {
          const auto* mv = ins->instr_args_as_MoveCall();
          if (!in_range(mv->move_from()) || !in_range(mv->move_to()))
            return bad("instruction %zu moves an invalid value", k);
          break;
        }
        case fb::InstructionArguments::JumpFalseCall: {
          const auto* jf = ins->instr_args_as_JumpFalseCall();
          // A Bool, or a bool tensor (torch.cond's predicate, as ExecuTorch emits it).
          if (!in_range(jf->cond_value_index()) || !is_bool_value(jf->cond_value_index()))
            return bad("instruction %zu jumps on a value that is not a bool", k);
          if (jf->destination_instruction() < 0 ||
              static_cast<size_t>(jf->destination_instruction()) > n) {
            return bad("instruction %zu jumps to %d of %zu", k, jf->destination_instruction(), n);
          }
          break;
        }
        case fb::InstructionArguments::FreeCall:
          if (!in_range(ins->instr_args_as_FreeCall()->value_index()))
            return bad("instruction %zu frees an invalid value", k);
          break;
        default:
          return bad("instruction %zu of chain %zu has unknown type", k, c);
      }
    }
    return Error::Ok;
  }

  const fb::Program& program_;
  const fb::ExecutionPlan& plan_;
  size_t constant_bytes_;
  size_t mutable_bytes_;  // the mutable data segment (state's initial values)
  const char* name_ = nullptr;
  size_t n_values_ = 0;
};

}  // namespace

Error verify_program(const fb::Program& program, const ExtendedHeader& header, size_t file_size) {
  const auto* segments = program.segments();
  const uint64_t data_size = header.present ? header.segment_data_size : 0;
  for (size_t i = 0; i < len(segments); ++i) {
    const fb::DataSegment* s = segments->Get(i);
    // Without an extended header there is no segment data; ExecuTorch still lists an empty
    // constant segment in that case.
    if (s->offset() > data_size || s->size() > data_size - s->offset()) {
      return fail(
          Error::InvalidProgram,
          "invalid program: segment %zu (%llu bytes at %llu) runs past the end of the file; "
          "the file is truncated or corrupt",
          i, static_cast<unsigned long long>(s->size()),
          static_cast<unsigned long long>(s->offset()));
    }
  }
  size_t constant_bytes = 0;
  const fb::SubsegmentOffsets* cs = program.constant_segment();
  if (cs != nullptr && !aligned(cs->offsets())) {
    return fail(Error::InvalidProgram, "invalid program: constant offsets are misaligned");
  }
  if (cs != nullptr && len(cs->offsets()) > 0) {
    if (cs->segment_index() >= len(segments)) {
      return fail(Error::InvalidProgram, "invalid program: constant segment %u does not exist",
                  cs->segment_index());
    }
    constant_bytes = static_cast<size_t>(segments->Get(cs->segment_index())->size());
  }
  size_t mutable_bytes = 0;
  if (len(program.mutable_data_segments()) > 1) {
    return fail(Error::NotSupported, "program has %u mutable data segments; state takes one",
                program.mutable_data_segments()->size());
  }
  if (len(program.mutable_data_segments()) == 1) {
    const fb::SubsegmentOffsets* ms = program.mutable_data_segments()->Get(0);
    if (!aligned(ms->offsets())) {
      return fail(Error::InvalidProgram, "invalid program: mutable data offsets are misaligned");
    }
    if (ms->segment_index() >= len(segments)) {
      return fail(Error::InvalidProgram, "invalid program: mutable data segment %u does not exist",
                  ms->segment_index());
    }
    mutable_bytes = static_cast<size_t>(segments->Get(ms->segment_index())->size());
  }
  if (len(program.execution_plan()) == 0)
    return fail(Error::InvalidProgram, "invalid program: no methods");
  for (size_t i = 0; i < program.execution_plan()->size(); ++i) {
    PlanVerifier v(program, *program.execution_plan()->Get(i), constant_bytes, mutable_bytes);
    PTERON_TRY(v.verify());
  }
  (void)file_size;
  return Error::Ok;
}

}  // namespace pteron
