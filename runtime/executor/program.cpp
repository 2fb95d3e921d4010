#include "runtime/executor/program.h"

#include <cstring>

#include "runtime/executor/program_verifier.h"
#include "schema/program_generated.h"

namespace pteron {
namespace {

constexpr size_t kHeaderOffset = 8;
constexpr size_t kMinHeaderLength = 24;  // magic + length + program_size + segment_base_offset
constexpr size_t kHeadBytes = 64;

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // files are little-endian, as are all supported targets
  return v;
}
uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Printable form of the 4 identifier bytes for error messages.
void describe_identifier(const uint8_t* id, char out[17]) {
  size_t k = 0;
  for (int i = 0; i < 4; ++i) {
    const uint8_t c = id[i];
    if (c >= 0x20 && c < 0x7f) {
      out[k++] = static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out[k++] = '\\';
      out[k++] = 'x';
      out[k++] = kHex[c >> 4];
      out[k++] = kHex[c & 15];
    }
  }
  out[k] = '\0';
}

}  // namespace

Result<ExtendedHeader> parse_extended_header(Span<const uint8_t> head) {
  ExtendedHeader h;
  if (head.size() < kHeaderOffset + 8 || std::memcmp(head.data() + kHeaderOffset, "eh00", 4) != 0) {
    return h;
  }
  const uint32_t length = read_u32(head.data() + kHeaderOffset + 4);
  if (length < kMinHeaderLength || kHeaderOffset + length > head.size()) {
    return fail(Error::InvalidProgram, "extended header length %u is invalid", length);
  }
  h.present = true;
  h.program_size = read_u64(head.data() + kHeaderOffset + 8);
  h.segment_base_offset = read_u64(head.data() + kHeaderOffset + 16);
  if (length >= 32) h.segment_data_size = read_u64(head.data() + kHeaderOffset + 24);
  return h;
}

Result<Program> Program::load(DataLoader* loader) {
  const size_t file_size = loader->size();
  if (file_size < 8) {
    return fail(Error::InvalidProgram, "file is %zu bytes, too small to be a program", file_size);
  }
  const size_t head_size = file_size < kHeadBytes ? file_size : kHeadBytes;
  PTERON_ASSIGN_OR_RETURN(FreeableBuffer head, loader->load(0, head_size));
  if (std::memcmp(head.bytes() + 4, "ET12", 4) != 0) {
    char id[17];
    describe_identifier(head.bytes() + 4, id);
    return fail(Error::InvalidProgram,
                "not a program: file identifier is '%s', expected 'ET12' (.pte)", id);
  }
  PTERON_ASSIGN_OR_RETURN(ExtendedHeader header,
                          parse_extended_header(Span<const uint8_t>(head.bytes(), head.size())));
  head.release();

  size_t program_size = file_size;
  if (header.present) {
    if (header.program_size < 8 || header.program_size > file_size) {
      return fail(Error::InvalidProgram,
                  "header says the flatbuffer is %llu bytes but the file has %zu",
                  static_cast<unsigned long long>(header.program_size), file_size);
    }
    if (header.segment_base_offset < header.program_size ||
        header.segment_base_offset > file_size) {
      return fail(Error::InvalidProgram, "segment base offset %llu is outside the file (%zu bytes)",
                  static_cast<unsigned long long>(header.segment_base_offset), file_size);
    }
    const uint64_t available = file_size - header.segment_base_offset;
    if (header.segment_data_size == 0) header.segment_data_size = available;
    if (header.segment_data_size > available) {
      return fail(Error::InvalidProgram,
                  "segment data (%llu bytes) runs past the end of the file (%llu available); "
                  "the file is truncated",
                  static_cast<unsigned long long>(header.segment_data_size),
                  static_cast<unsigned long long>(available));
    }
    program_size = static_cast<size_t>(header.program_size);
  }

  PTERON_ASSIGN_OR_RETURN(FreeableBuffer data, loader->load(0, program_size));
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 50'000'000;
  flatbuffers::Verifier verifier(data.bytes(), data.size(), options);
  if (!fb::VerifyProgramBuffer(verifier)) {
    return fail(Error::InvalidProgram,
                "flatbuffer verification failed: the program is corrupt or truncated");
  }
  const fb::Program* program = fb::GetProgram(data.data());
  PTERON_TRY(verify_program(*program, header, file_size));

  // Constants are loaded once and shared by every method.
  FreeableBuffer constants;
  const fb::SubsegmentOffsets* cs = program->constant_segment();
  if (cs != nullptr && cs->offsets() != nullptr && cs->offsets()->size() > 0) {
    const fb::DataSegment* seg = program->segments()->Get(cs->segment_index());
    PTERON_ASSIGN_OR_RETURN(
        constants, loader->load(static_cast<size_t>(header.segment_base_offset + seg->offset()),
                                static_cast<size_t>(seg->size())));
  }
  // The state's initial values (mutable_data_segments[0]), read at method load and on reset.
  FreeableBuffer initial_state;
  if (program->mutable_data_segments() != nullptr &&
      program->mutable_data_segments()->size() == 1) {
    const fb::DataSegment* seg =
        program->segments()->Get(program->mutable_data_segments()->Get(0)->segment_index());
    PTERON_ASSIGN_OR_RETURN(
        initial_state, loader->load(static_cast<size_t>(header.segment_base_offset + seg->offset()),
                                    static_cast<size_t>(seg->size())));
  }
  return Program(loader, static_cast<FreeableBuffer&&>(data), program, header,
                 static_cast<FreeableBuffer&&>(constants),
                 static_cast<FreeableBuffer&&>(initial_state));
}

size_t Program::num_methods() const {
  return program_->execution_plan() ? program_->execution_plan()->size() : 0;
}

Result<const char*> Program::method_name(size_t i) const {
  if (i >= num_methods()) return fail(Error::OutOfRange, "method index %zu out of range", i);
  return program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i))->name()->c_str();
}

Result<const fb::ExecutionPlan*> Program::plan(const char* name) const {
  for (size_t i = 0; i < num_methods(); ++i) {
    const fb::ExecutionPlan* p =
        program_->execution_plan()->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (std::strcmp(p->name()->c_str(), name) == 0) return p;
  }
  return fail(Error::NotFound, "program has no method '%s'", name);
}

Result<MethodMeta> Program::method_meta(const char* name) const {
  PTERON_ASSIGN_OR_RETURN(const fb::ExecutionPlan* p, plan(name));
  return MethodMeta(p);
}

Result<FreeableBuffer> Program::load_segment(size_t index) const {
  const auto* segments = program_->segments();
  if (segments == nullptr || index >= segments->size()) {
    return fail(Error::OutOfRange, "segment %zu does not exist", index);
  }
  const fb::DataSegment* seg = segments->Get(static_cast<flatbuffers::uoffset_t>(index));
  return loader_->load(static_cast<size_t>(header_.segment_base_offset + seg->offset()),
                       static_cast<size_t>(seg->size()));
}

Result<FreeableBuffer> Program::named_data(const char* key) const {
  if (const auto* entries = program_->named_data()) {
    for (const fb::NamedData* nd : *entries) {
      if (nd->key() != nullptr && std::strcmp(nd->key()->c_str(), key) == 0)
        return load_segment(nd->segment_index());  // bounds-checked there
    }
  }
  return fail(Error::NotFound, "no named data '%s'", key);
}

// --- MethodMeta ---

const char* MethodMeta::name() const { return plan_->name()->c_str(); }
size_t MethodMeta::num_inputs() const { return plan_->inputs() ? plan_->inputs()->size() : 0; }
size_t MethodMeta::num_outputs() const { return plan_->outputs() ? plan_->outputs()->size() : 0; }
size_t MethodMeta::num_planned_buffers() const {
  const auto* sizes = plan_->non_const_buffer_sizes();
  return sizes == nullptr || sizes->size() == 0 ? 0 : sizes->size() - 1;
}
int64_t MethodMeta::planned_buffer_size(size_t i) const {
  return i < num_planned_buffers()
             ? plan_->non_const_buffer_sizes()->Get(static_cast<flatbuffers::uoffset_t>(i + 1))
             : 0;
}
size_t MethodMeta::num_instructions() const {
  size_t n = 0;
  if (plan_->chains() == nullptr) return 0;
  for (const fb::Chain* c : *plan_->chains())
    n += c->instructions() ? c->instructions()->size() : 0;
  return n;
}

const char* MethodMeta::input_spec() const {
  const fb::ContainerMetadata* c = plan_->container_meta_type();
  return c != nullptr && c->encoded_inp_str() != nullptr ? c->encoded_inp_str()->c_str() : "";
}

const char* MethodMeta::output_spec() const {
  const fb::ContainerMetadata* c = plan_->container_meta_type();
  return c != nullptr && c->encoded_out_str() != nullptr ? c->encoded_out_str()->c_str() : "";
}

Result<TensorInfo> MethodMeta::tensor_at(int32_t index) const {
  const fb::EValue* v = plan_->values()->Get(static_cast<flatbuffers::uoffset_t>(index));
  if (v->val_type() != fb::KernelTypes::Tensor) {
    return fail(Error::InvalidArgument, "value %d is not a tensor", index);
  }
  const fb::Tensor* t = v->val_as_Tensor();
  TensorInfo info;
  info.dtype = static_cast<ScalarType>(t->scalar_type());
  info.sizes = Span<const int32_t>(t->sizes()->data(), t->sizes()->size());
  info.dim_order = t->dim_order()
                       ? Span<const uint8_t>(t->dim_order()->data(), t->dim_order()->size())
                       : Span<const uint8_t>();
  size_t n = element_size(info.dtype);
  for (int32_t s : info.sizes) n *= static_cast<size_t>(s);
  info.nbytes = n;
  return info;
}

Result<TensorInfo> MethodMeta::input_tensor(size_t i) const {
  if (i >= num_inputs()) return fail(Error::OutOfRange, "input %zu out of range", i);
  return tensor_at(plan_->inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
}

Result<TensorInfo> MethodMeta::output_tensor(size_t i) const {
  if (i >= num_outputs()) return fail(Error::OutOfRange, "output %zu out of range", i);
  return tensor_at(plan_->outputs()->Get(static_cast<flatbuffers::uoffset_t>(i)));
}

}  // namespace pteron
