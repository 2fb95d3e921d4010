#include "runtime/llm/metadata.h"

#include <cstdio>
#include <cstring>

#include "runtime/core/memory_allocator.h"
#include "runtime/executor/method.h"

namespace pteron::llm {
namespace {

// Load-time memory for one metadata method (its value table and a few small arrays): a
// constant method with a handful of values needs well under 1 KiB.
constexpr size_t kMethodBytes = 2048;

const char* const kNames[] = {
    kMaxSeqLen,          kMaxContextLen,      kVocabSize, kBosId,   kEosIds,   kUseKvCache,
    kUseSdpaWithKvCache, kEnableDynamicShape, kEosId,     kNLayers, kNKvHeads, kHeadDim,
    kMaxBatchSize};

const char* kind(const EValue& v) {
  switch (v.tag) {
    case Tag::Int:
      return "an int";
    case Tag::Double:
      return "a double";
    case Tag::Bool:
      return "a bool";
    case Tag::None:
      return "None";
    case Tag::Tensor:
      return "a tensor";
    case Tag::String:
      return "a string";
    default:
      return "a list";
  }
}

// The scalar values a metadata method returned (copied out of its value table).
struct Returned {
  size_t count = 0;
  EValue values[kMaxEosIds];
};

bool has_method(const Program& program, const char* name) {
  for (size_t i = 0; i < program.num_methods(); ++i) {
    Result<const char*> n = program.method_name(i);
    if (n.ok() && std::strcmp(n.get(), name) == 0) return true;
  }
  return false;
}

// Loads and executes metadata method `name`, as ExecuTorch's runner does (Module::get), and
// copies its outputs into `out`. Ok without touching `out` when the program has no such method.
Error run_method(const Program& program, const char* name, bool* present, Returned* out) {
  *present = has_method(program, name);
  if (!*present) return Error::Ok;
  PTERON_ASSIGN_OR_RETURN(MethodMeta meta, program.method_meta(name));
  PTERON_CHECK(meta.num_inputs() == 0, Error::InvalidProgram,
               "metadata method '%s' takes %zu input(s); a metadata method takes none", name,
               meta.num_inputs());
  for (size_t a = 0; a < meta.num_planned_buffers(); ++a) {
    PTERON_CHECK(meta.planned_buffer_size(a) == 0, Error::InvalidProgram,
                 "metadata method '%s' plans %lld bytes in arena %zu (it computes a tensor); "
                 "a metadata method returns constants: give it as constant_methods= or "
                 "--constant-method",
                 name, static_cast<long long>(meta.planned_buffer_size(a)), a + 1);
  }
  PTERON_CHECK(meta.num_outputs() <= kMaxEosIds, Error::InvalidProgram,
               "metadata method '%s' returns %zu values (at most %zu are read)", name,
               meta.num_outputs(), kMaxEosIds);
  alignas(16) uint8_t bytes[kMethodBytes];
  MemoryAllocator allocator(bytes, sizeof(bytes));
  MemoryManager memory{&allocator, nullptr, nullptr};
  char detail[200];
  Result<Method> method = Method::load(program, name, &memory);
  if (!method.ok()) {
    std::snprintf(detail, sizeof(detail), "%s", last_error_message());
    return fail(Error::InvalidProgram, "metadata method '%s' does not load: %s", name, detail);
  }
  const Error e = method->execute();
  if (e != Error::Ok) {
    std::snprintf(detail, sizeof(detail), "%s", last_error_message());
    return fail(Error::InvalidProgram, "metadata method '%s' failed: %s", name, detail);
  }
  out->count = method->num_outputs();
  for (size_t i = 0; i < out->count; ++i) {
    const EValue& v = method->output(i);
    // Scalars are copied by value; anything else only keeps its tag for the message.
    out->values[i] = v.is_scalar() ? v : EValue();
    out->values[i].tag = v.tag;
  }
  return Error::Ok;
}

Error expect_one(const char* name, const Returned& r) {
  PTERON_CHECK(r.count == 1, Error::InvalidProgram,
               "metadata method '%s' returns %zu values; it returns one", name, r.count);
  return Error::Ok;
}

// One int of at least `min` (1 for lengths, 0 for ids); with `whole_double`, a double that is
// a whole number too (optimum-executorch computes get_head_dim as hidden_size / heads).
Error read_int(const Program& program, const char* name, int64_t min, std::optional<int64_t>* field,
               bool whole_double = false) {
  bool present = false;
  Returned r;
  PTERON_TRY(run_method(program, name, &present, &r));
  if (!present) return Error::Ok;
  PTERON_TRY(expect_one(name, r));
  EValue v = r.values[0];
  if (whole_double && v.tag == Tag::Double) {
    // In range and whole: NaN, infinities and fractions fail the comparison.
    const bool whole =
        v.d >= -1e15 && v.d <= 1e15 && v.d == static_cast<double>(static_cast<int64_t>(v.d));
    PTERON_CHECK(whole, Error::InvalidProgram,
                 "metadata method '%s' returns %g, not a whole number", name, v.d);
    v = EValue::from_int(static_cast<int64_t>(v.d));
  }
  PTERON_CHECK(v.tag == Tag::Int, Error::InvalidProgram,
               "metadata method '%s' returns %s, not an int", name, kind(v));
  const bool length = std::strcmp(name, kMaxSeqLen) == 0 ||
                      std::strcmp(name, kMaxContextLen) == 0 || std::strcmp(name, kVocabSize) == 0;
  PTERON_CHECK(v.i >= min, Error::InvalidProgram, "metadata method '%s' returns %lld; %s", name,
               static_cast<long long>(v.i),
               min == 0 ? "an id must not be negative"
               : length ? "a length must be positive"
                        : "a size must be positive");
  *field = v.i;
  return Error::Ok;
}

// A bool, or an int 0/1 (ExecuTorch's runner reads flags as scalars).
Error read_flag(const Program& program, const char* name, std::optional<bool>* field) {
  bool present = false;
  Returned r;
  PTERON_TRY(run_method(program, name, &present, &r));
  if (!present) return Error::Ok;
  PTERON_TRY(expect_one(name, r));
  const EValue& v = r.values[0];
  if (v.tag == Tag::Bool) {
    *field = v.b;
    return Error::Ok;
  }
  PTERON_CHECK(v.tag == Tag::Int, Error::InvalidProgram,
               "metadata method '%s' returns %s, not a bool", name, kind(v));
  PTERON_CHECK(v.i == 0 || v.i == 1, Error::InvalidProgram,
               "metadata method '%s' returns %lld; a flag is true, false, 0 or 1", name,
               static_cast<long long>(v.i));
  *field = v.i == 1;
  return Error::Ok;
}

// get_eos_ids, get_eos_id: one id or a list of them (ExecuTorch flattens a list into its
// outputs).
Error read_eos_ids(const Program& program, const char* name, EosIds* out) {
  bool present = false;
  Returned r;
  PTERON_TRY(run_method(program, name, &present, &r));
  if (!present) return Error::Ok;
  for (size_t i = 0; i < r.count; ++i) {
    const EValue& v = r.values[i];
    PTERON_CHECK(v.tag == Tag::Int, Error::InvalidProgram,
                 "metadata method '%s' value %zu is %s, not an int", name, i, kind(v));
    PTERON_CHECK(v.i >= 0, Error::InvalidProgram,
                 "metadata method '%s' value %zu is %lld; an id must not be negative", name, i,
                 static_cast<long long>(v.i));
    out->ids[i] = v.i;
  }
  out->present = true;
  out->count = r.count;
  return Error::Ok;
}

Error check_in_vocabulary(const char* name, const EosIds& eos, int64_t vocab_size) {
  for (size_t i = 0; i < eos.count; ++i) {
    PTERON_CHECK(eos.ids[i] < vocab_size, Error::InvalidProgram,
                 "metadata: %s value %zu is %lld, outside the vocabulary (%s %lld)", name, i,
                 static_cast<long long>(eos.ids[i]), kVocabSize,
                 static_cast<long long>(vocab_size));
  }
  return Error::Ok;
}

}  // namespace

const EosIds* LlmMetadata::stop_ids() const {
  if (eos_ids.present) return &eos_ids;
  return eos_id.present ? &eos_id : nullptr;
}

bool is_llm_metadata_method(const char* name) {
  for (const char* n : kNames) {
    if (std::strcmp(n, name) == 0) return true;
  }
  return false;
}

Result<LlmMetadata> read_llm_metadata(const Program& program) {
  LlmMetadata m;
  PTERON_TRY(read_int(program, kMaxSeqLen, 1, &m.max_seq_len));
  PTERON_TRY(read_int(program, kMaxContextLen, 1, &m.max_context_len));
  PTERON_TRY(read_int(program, kVocabSize, 1, &m.vocab_size));
  PTERON_TRY(read_int(program, kBosId, 0, &m.bos_id));
  PTERON_TRY(read_eos_ids(program, kEosIds, &m.eos_ids));
  PTERON_TRY(read_flag(program, kUseKvCache, &m.use_kv_cache));
  PTERON_TRY(read_flag(program, kUseSdpaWithKvCache, &m.use_sdpa_with_kv_cache));
  PTERON_TRY(read_flag(program, kEnableDynamicShape, &m.enable_dynamic_shape));
  PTERON_TRY(read_eos_ids(program, kEosId, &m.eos_id));
  PTERON_TRY(read_int(program, kNLayers, 1, &m.n_layers));
  PTERON_TRY(read_int(program, kNKvHeads, 1, &m.n_kv_heads));
  PTERON_TRY(read_int(program, kHeadDim, 1, &m.head_dim, /*whole_double=*/true));
  PTERON_TRY(read_int(program, kMaxBatchSize, 1, &m.max_batch_size));
  // Token ids index the vocabulary: an id past it would read past the embedding table.
  if (m.vocab_size) {
    const long long vocab = static_cast<long long>(*m.vocab_size);
    PTERON_CHECK(!m.bos_id || *m.bos_id < *m.vocab_size, Error::InvalidProgram,
                 "metadata: %s is %lld, outside the vocabulary (%s %lld)", kBosId,
                 static_cast<long long>(m.bos_id.value_or(0)), kVocabSize, vocab);
    PTERON_TRY(check_in_vocabulary(kEosIds, m.eos_ids, *m.vocab_size));
    PTERON_TRY(check_in_vocabulary(kEosId, m.eos_id, *m.vocab_size));
  }
  return m;
}

}  // namespace pteron::llm
