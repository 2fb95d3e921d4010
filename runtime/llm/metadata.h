// LLM metadata: the constant methods ExecuTorch's LLM exporters write into a program
// (to_edge(..., constant_methods={"get_max_seq_len": 128, ...})) and its runner reads
// (extension/llm/runner/constants.h). Each is a method with no inputs whose outputs are the
// value; pteron's compiler writes the same ones (compiler/emit/constant_methods.h).
//
// Core runtime only (no heap, no OS): the methods are loaded and executed with a small
// allocator on the stack, so bare-metal builds can read them too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/program.h"

namespace pteron::llm {

// Method names, as ExecuTorch spells them.
inline constexpr const char* kMaxSeqLen = "get_max_seq_len";
inline constexpr const char* kMaxContextLen = "get_max_context_len";
inline constexpr const char* kVocabSize = "get_vocab_size";
inline constexpr const char* kBosId = "get_bos_id";
inline constexpr const char* kEosIds = "get_eos_ids";
inline constexpr const char* kUseKvCache = "use_kv_cache";
inline constexpr const char* kUseSdpaWithKvCache = "use_sdpa_with_kv_cache";
inline constexpr const char* kEnableDynamicShape = "enable_dynamic_shape";

// The most end-of-sequence ids a program may list (models use one to a handful).
inline constexpr size_t kMaxEosIds = 16;

// The fields a program has; a missing method leaves its field empty (ExecuTorch's runner then
// uses its defaults: max_context_len = max_seq_len, use_kv_cache true, dynamic shape false).
struct LlmMetadata {
  std::optional<int64_t> max_seq_len;      // > 0
  std::optional<int64_t> max_context_len;  // > 0
  std::optional<int64_t> vocab_size;       // > 0
  std::optional<int64_t> bos_id;           // >= 0, < vocab_size when both are given
  bool has_eos_ids = false;                // get_eos_ids present (it may list no ids)
  size_t num_eos_ids = 0;
  int64_t eos_ids[kMaxEosIds] = {};  // each >= 0, < vocab_size when given
  std::optional<bool> use_kv_cache;
  std::optional<bool> use_sdpa_with_kv_cache;
  std::optional<bool> enable_dynamic_shape;

  bool empty() const {
    return !max_seq_len && !max_context_len && !vocab_size && !bos_id && !has_eos_ids &&
           !use_kv_cache && !use_sdpa_with_kv_cache && !enable_dynamic_shape;
  }
};

// Calls visit(name, value) for each field `m` has, under its method name and in the order
// above: lengths and ids as int64_t, flags as bool, get_eos_ids as Span<const int64_t>. What
// tools show (pteron inspect's JSON, Python's Program.llm_metadata()) comes from here.
template <typename Visit>
void visit_llm_metadata(const LlmMetadata& m, Visit&& visit) {
  if (m.max_seq_len) visit(kMaxSeqLen, *m.max_seq_len);
  if (m.max_context_len) visit(kMaxContextLen, *m.max_context_len);
  if (m.vocab_size) visit(kVocabSize, *m.vocab_size);
  if (m.bos_id) visit(kBosId, *m.bos_id);
  if (m.has_eos_ids) visit(kEosIds, Span<const int64_t>(m.eos_ids, m.num_eos_ids));
  if (m.use_kv_cache) visit(kUseKvCache, *m.use_kv_cache);
  if (m.use_sdpa_with_kv_cache) visit(kUseSdpaWithKvCache, *m.use_sdpa_with_kv_cache);
  if (m.enable_dynamic_shape) visit(kEnableDynamicShape, *m.enable_dynamic_shape);
}

// Runs each metadata method the program has and checks its value: lengths are one positive
// int, ids one non-negative int (get_eos_ids: one or a list), flags one bool (or int 0/1, as
// ExecuTorch's runner reads them as scalars). A method that takes inputs, plans memory,
// returns the wrong type or count, or a negative length is an InvalidProgram error whose
// message (last_error_message()) names the method and the value.
Result<LlmMetadata> read_llm_metadata(const Program& program);

// True when `name` is one of the methods above.
bool is_llm_metadata_method(const char* name);

}  // namespace pteron::llm
