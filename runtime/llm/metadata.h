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
#include "runtime/executor/program.h"

namespace pteron::llm {

// Method names, as ExecuTorch spells them: the eight its runner reads
// (extension/llm/runner/constants.h), then those its and optimum-executorch's exporters also
// write (get_n_layers; optimum's get_eos_id, get_n_kv_heads, get_head_dim, get_max_batch_size).
inline constexpr const char* kMaxSeqLen = "get_max_seq_len";
inline constexpr const char* kMaxContextLen = "get_max_context_len";
inline constexpr const char* kVocabSize = "get_vocab_size";
inline constexpr const char* kBosId = "get_bos_id";
inline constexpr const char* kEosIds = "get_eos_ids";
inline constexpr const char* kUseKvCache = "use_kv_cache";
inline constexpr const char* kUseSdpaWithKvCache = "use_sdpa_with_kv_cache";
inline constexpr const char* kEnableDynamicShape = "enable_dynamic_shape";
inline constexpr const char* kEosId = "get_eos_id";  // optimum-executorch's get_eos_ids
inline constexpr const char* kNLayers = "get_n_layers";
inline constexpr const char* kNKvHeads = "get_n_kv_heads";
inline constexpr const char* kHeadDim = "get_head_dim";  // optimum writes hidden / heads, a float
inline constexpr const char* kMaxBatchSize = "get_max_batch_size";

// The most end-of-sequence ids a program may list (models use one to a handful).
inline constexpr size_t kMaxEosIds = 16;

// Up to kMaxEosIds end-of-sequence ids, from get_eos_ids or get_eos_id.
struct EosIds {
  bool present = false;  // the method is in the program (it may list no ids)
  size_t count = 0;
  int64_t ids[kMaxEosIds] = {};  // each >= 0, < vocab_size when given
};

// The fields a program has; a missing method leaves its field empty (ExecuTorch's runner then
// uses its defaults: max_context_len = max_seq_len, use_kv_cache true, dynamic shape false).
struct LlmMetadata {
  std::optional<int64_t> max_seq_len;      // > 0
  std::optional<int64_t> max_context_len;  // > 0
  std::optional<int64_t> vocab_size;       // > 0
  std::optional<int64_t> bos_id;           // >= 0, < vocab_size when both are given
  EosIds eos_ids;
  std::optional<bool> use_kv_cache;
  std::optional<bool> use_sdpa_with_kv_cache;
  std::optional<bool> enable_dynamic_shape;
  EosIds eos_id;  // optimum-executorch's get_eos_id: the stop ids when get_eos_ids is absent
  // The model's shape, as exporters state it (read and checked; generation needs none of them).
  std::optional<int64_t> n_layers, n_kv_heads, head_dim, max_batch_size;  // each > 0

  bool empty() const {
    return !max_seq_len && !max_context_len && !vocab_size && !bos_id && !eos_ids.present &&
           !use_kv_cache && !use_sdpa_with_kv_cache && !enable_dynamic_shape && !eos_id.present &&
           !n_layers && !n_kv_heads && !head_dim && !max_batch_size;
  }
  // The ids that end a generation: get_eos_ids, else get_eos_id; null when neither is there.
  const EosIds* stop_ids() const;
};

// Calls visit(method_name, field) for every field of `m` in the order above: field is a
// std::optional<int64_t>, a std::optional<bool> or an EosIds (what inspect and Python print).
template <class Visit>
void for_each_field(const LlmMetadata& m, Visit&& visit) {
  visit(kMaxSeqLen, m.max_seq_len);
  visit(kMaxContextLen, m.max_context_len);
  visit(kVocabSize, m.vocab_size);
  visit(kBosId, m.bos_id);
  visit(kEosIds, m.eos_ids);
  visit(kUseKvCache, m.use_kv_cache);
  visit(kUseSdpaWithKvCache, m.use_sdpa_with_kv_cache);
  visit(kEnableDynamicShape, m.enable_dynamic_shape);
  visit(kEosId, m.eos_id);
  visit(kNLayers, m.n_layers);
  visit(kNKvHeads, m.n_kv_heads);
  visit(kHeadDim, m.head_dim);
  visit(kMaxBatchSize, m.max_batch_size);
}

// Runs each metadata method the program has and checks its value: lengths and sizes are one
// positive int (get_head_dim may be a whole float), ids one non-negative int (get_eos_ids,
// get_eos_id: one or a list), flags one bool (or int 0/1, as ExecuTorch's runner reads them as
// scalars). A method that takes inputs, plans memory, returns the wrong type or count, or a
// negative length is an InvalidProgram error whose message (last_error_message()) names the
// method and the value.
Result<LlmMetadata> read_llm_metadata(const Program& program);

// True when `name` is one of the methods above.
bool is_llm_metadata_method(const char* name);

}  // namespace pteron::llm
