// Text generation over a loaded decoder method, token ids in and out (no tokenizer): prefill
// the prompt into the KV cache, then decode one token per call until an EOS id, the token
// budget or the end of the cache.
//
// The method is a stateful decoder in one of two forms, with the KV cache in state tensors
// (mutable buffers) and logits [1, T, vocab] (or [1, vocab]: the last token's) out:
//  - transformers' convert_and_export_with_cache: forward(input_ids int64 [1, T],
//    cache_position int64 [T]), one position per token;
//  - ExecuTorch's export_llama / extension.llm.export: forward(tokens int64 [1, T],
//    input_pos int64 [1]), the first token's position (told apart by input_pos being [1]
//    while T may exceed 1).
// T is static 1 (prefill token by token) or bounded dynamic (prefill in chunks up to the bound).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/executor/method.h"
#include "runtime/host/host_method.h"
#include "runtime/llm/metadata.h"
#include "runtime/llm/sampler.h"

namespace pteron::llm {

struct GenerationConfig {
  int64_t max_new_tokens = 0;  // 0: until an EOS id or the cache is full
  SamplerConfig sampler;
  std::vector<int64_t> eos_ids;  // generation stops after emitting one of these
};

enum class StopReason { None, Eos, MaxNewTokens, CacheFull };
const char* stop_reason_name(StopReason reason);  // "eos", "max_new_tokens", "cache_full"

struct GenerationFigures {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t prefill_calls = 0;          // executions the prefill took (chunks)
  double prefill_ms = 0;              // the prompt's executions, sampling the first token
  double time_to_first_token_ms = 0;  // start() to the first token (reset, prefill, sample)
  double decode_ms = 0;               // every later token
  // CPU time of the whole process (all threads) over the same spans: on a loaded machine wall
  // time measures the other processes too, CPU time mostly this one's work.
  double prefill_cpu_ms = 0;
  double decode_cpu_ms = 0;
  double prefill_tokens_per_s = 0;  // prompt tokens / prefill time
  double decode_tokens_per_s = 0;   // tokens after the first / decode time
  uint64_t peak_rss_bytes = 0;      // the process's peak resident set (VmHWM on Linux)
  StopReason stop = StopReason::None;
};

class Generator {
 public:
  // Checks `method` has the decoder's inputs and a floating logits output, and finds the
  // cache length: the program's get_max_context_len, else its get_max_seq_len (neither may
  // exceed the state tensors' length), else the largest positions dim of the rank-4 state
  // tensors (KV caches [batch, heads, positions, head_dim]; [batch, positions, heads,
  // head_dim] when use_sdpa_with_kv_cache says true). With both lengths, get_max_seq_len
  // bounds the tokens per call, as ExecuTorch's runner chunks its prefill. A get_vocab_size
  // that is not the logits' last dim is refused. `metadata` is read_llm_metadata(program); `method`
  // must outlive the generator.
  static Result<Generator> create(Method& method, const LlmMetadata& metadata = {});

  int64_t max_seq_len() const { return max_seq_len_; }  // the cache's positions
  int32_t max_tokens_per_call() const { return max_chunk_; }
  int64_t vocab_size() const { return vocab_; }
  // The program's get_eos_ids, else get_eos_id (ExecuTorch's runner stops on these when the caller
  // gives none); empty when the program has no such method.
  const std::vector<int64_t>& program_eos_ids() const { return program_eos_; }
  bool has_program_eos_ids() const { return has_program_eos_; }
  // The program's get_bos_id, or -1 when it has none (a text prompt then starts with the
  // tokenizer's BOS, if any).
  int64_t program_bos_id() const { return program_bos_; }

  // Resets the cache, prefills `prompt` and samples the first new token, which next() then
  // returns. Refuses an empty prompt, ids outside the vocabulary, a prompt longer than the
  // cache and a max_new_tokens the cache cannot hold, each with one line.
  Error start(Span<const int64_t> prompt, const GenerationConfig& config);
  // True once the last token was returned (or before start()).
  bool done() const { return done_; }
  // The next new token: the prefill's, then one decode step per call. Only while !done().
  Result<int64_t> next();
  // Figures of the generation started last (complete once done()).
  GenerationFigures figures() const;

  // start(), then next() until done, calling `on_token` with each token as it comes.
  Error generate(Span<const int64_t> prompt, const GenerationConfig& config,
                 const std::function<void(int64_t)>& on_token);

 private:
  using Clock = std::chrono::steady_clock;
  explicit Generator(Method& method) : method_(&method) {}
  // Runs tokens [pos_, pos_ + count) of `ids` through the method and leaves the last token's
  // logits in logits_.
  Error run(const int64_t* ids, int32_t count);
  Error read_logits();
  // The token after the last one returned is the last one, or there is no room to feed it.
  void update_done(int64_t token);

  Method* method_;
  int64_t max_seq_len_ = 0;
  int32_t max_chunk_ = 1;
  bool start_position_ = false;  // input_pos [1] (ExecuTorch), not cache_position [T]
  int64_t vocab_ = 0;
  std::vector<int64_t> program_eos_;
  bool has_program_eos_ = false;
  int64_t program_bos_ = -1;

  std::vector<int64_t> ids_, positions_;
  int32_t ids_sizes_[2] = {1, 1}, pos_sizes_[1] = {1};
  uint8_t ids_order_[2] = {0, 1}, pos_order_[1] = {0};
  int32_t ids_strides_[2] = {1, 1}, pos_strides_[1] = {1};
  std::vector<float> logits_;

  GenerationConfig config_;
  Sampler sampler_{SamplerConfig{}};
  int64_t pos_ = 0;       // positions of the cache filled
  int64_t pending_ = -1;  // the prefill's token, returned by the first next()
  int64_t last_ = 0;      // the token returned last, fed by the next decode step
  bool done_ = true;
  GenerationFigures figures_;
  Clock::time_point start_time_;
};

}  // namespace pteron::llm
