#include "runtime/llm/generator.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

#include "runtime/host/peak_rss.h"

namespace pteron::llm {
namespace {

using Ms = std::chrono::duration<double, std::milli>;

// The process's CPU time, all threads (std::clock: CLOCK_PROCESS_CPUTIME_ID on Linux).
double cpu_ms() { return 1000.0 * static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }

// "int64 [1, 1], int64 [1]": what a method takes, for the one-line refusal.
std::string describe_inputs(const Method& method) {
  std::string out;
  for (size_t i = 0; i < method.num_inputs(); ++i) {
    if (i) out += ", ";
    auto t = method.meta().input_tensor(i);
    if (!t.ok()) {
      out += "a non-tensor";
      continue;
    }
    out += std::string(scalar_type_name(t->dtype)) + " [";
    for (size_t d = 0; d < t->sizes.size(); ++d)
      out += (d ? ", " : "") + std::to_string(t->sizes[d]);
    out += "]";
  }
  return out.empty() ? "nothing" : out;
}

// The largest positions dim of the rank-4 state tensors: a KV cache is [batch, heads,
// positions, head_dim] (dim 2), or [batch, positions, heads, head_dim] (dim 1) where
// ExecuTorch's llama::update_cache / custom_sdpa keep it (use_sdpa_with_kv_cache). 0 when there
// is none.
int64_t cache_length_from_state(const Method& method, int32_t positions_dim) {
  int64_t length = 0;
  for (size_t k = 0; k < method.num_state_tensors(); ++k) {
    const Tensor* t = method.state_tensor(k);
    if (t != nullptr && t->dim() == 4) length = std::max<int64_t>(length, t->size(positions_dim));
  }
  return length;
}

}  // namespace

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::None:
      return "none";
    case StopReason::Eos:
      return "eos";
    case StopReason::MaxNewTokens:
      return "max_new_tokens";
    case StopReason::CacheFull:
      return "cache_full";
  }
  return "none";
}

Result<Generator> Generator::create(Method& method, const LlmMetadata& metadata) {
  // Inputs: token ids int64 [1, T] and positions int64, either Hugging Face's cache_position
  // [T] (one position per token, the same T) or ExecuTorch's input_pos [1] (the first token's
  // position; the export_llama form). With T = 1 the two are the same call.
  bool decoder = method.num_inputs() == 2;
  int32_t lo = 0, hi = 0, batch_lo = 0, batch_hi = 0, pos_lo = 0, pos_hi = 0;
  bool start_position = false;
  if (decoder) {
    auto ids = method.meta().input_tensor(0);
    auto pos = method.meta().input_tensor(1);
    decoder = ids.ok() && pos.ok() && ids->dtype == ScalarType::Long && ids->sizes.size() == 2 &&
              pos->dtype == ScalarType::Long && pos->sizes.size() == 1 &&
              method.input_size_bounds(0, 0, &batch_lo, &batch_hi) &&
              method.input_size_bounds(0, 1, &lo, &hi) &&
              method.input_size_bounds(1, 0, &pos_lo, &pos_hi) && batch_lo <= 1 && batch_hi >= 1;
    start_position = decoder && pos_lo == 1 && pos_hi == 1 && hi > 1;
    decoder = decoder && ((pos_lo == lo && pos_hi == hi) || start_position);
  }
  PTERON_CHECK(decoder, Error::InvalidArgument,
               "method '%s' is not a decoder: generation needs inputs input_ids int64 [1, T] and "
               "cache_position int64 [T] (Hugging Face) or tokens int64 [1, T] and input_pos "
               "int64 [1] (ExecuTorch), it takes %s",
               method.name(), describe_inputs(method).c_str());
  PTERON_CHECK(lo <= 1 && hi >= 1, Error::InvalidArgument,
               "method '%s' takes %d to %d tokens per call; decoding feeds 1 (export with T = 1 "
               "or a dynamic T with min 1)",
               method.name(), lo, hi);
  // Output 0: the logits, [..., vocab]; the last vocab values are the last token's.
  auto out = method.num_outputs() > 0 ? method.meta().output_tensor(0)
                                      : Result<TensorInfo>(Error::NotFound);
  const bool floating =
      out.ok() && (out->dtype == ScalarType::Float || out->dtype == ScalarType::Half ||
                   out->dtype == ScalarType::BFloat16);
  PTERON_CHECK(floating && !out->sizes.empty() && out->sizes[out->sizes.size() - 1] > 0,
               Error::InvalidArgument,
               "method '%s' is not a decoder: its first output is not float logits [..., vocab]",
               method.name());

  Generator g(method);
  g.start_position_ = start_position;
  g.vocab_ = out->sizes[out->sizes.size() - 1];
  PTERON_CHECK(!metadata.vocab_size || *metadata.vocab_size == g.vocab_, Error::InvalidProgram,
               "get_vocab_size says %lld but method '%s' returns logits over %lld tokens",
               static_cast<long long>(metadata.vocab_size.value_or(0)), method.name(),
               static_cast<long long>(g.vocab_));
  g.program_bos_ = metadata.bos_id.value_or(-1);
  PTERON_CHECK(g.program_bos_ < g.vocab_, Error::InvalidProgram,
               "get_bos_id says %lld but method '%s' returns logits over %lld tokens",
               static_cast<long long>(g.program_bos_), method.name(),
               static_cast<long long>(g.vocab_));
  // The stop ids: get_eos_ids, else optimum-executorch's get_eos_id.
  if (const EosIds* eos = metadata.stop_ids()) {
    g.has_program_eos_ = true;
    g.program_eos_.assign(eos->ids, eos->ids + eos->count);
  }
  // ExecuTorch's runner: get_max_context_len is the cache's positions, get_max_seq_len the
  // most tokens one call takes (the prefill's chunk); with only get_max_seq_len it is both.
  const int64_t max_seq_len = metadata.max_context_len.value_or(metadata.max_seq_len.value_or(0));
  g.max_chunk_ = hi;
  if (metadata.max_context_len && metadata.max_seq_len)
    g.max_chunk_ = static_cast<int32_t>(std::min<int64_t>(hi, *metadata.max_seq_len));
  const int64_t state_length =
      cache_length_from_state(method, metadata.use_sdpa_with_kv_cache.value_or(false) ? 1 : 2);
  if (max_seq_len > 0) {
    PTERON_CHECK(state_length == 0 || max_seq_len <= state_length, Error::InvalidProgram,
                 "%s says %lld positions but the KV cache holds %lld",
                 metadata.max_context_len ? kMaxContextLen : kMaxSeqLen,
                 static_cast<long long>(max_seq_len), static_cast<long long>(state_length));
    g.max_seq_len_ = max_seq_len;
  } else {
    PTERON_CHECK(state_length > 0, Error::InvalidArgument,
                 "method '%s' has no KV cache length: no get_max_seq_len method and no rank-4 "
                 "state tensor [batch, heads, positions, head_dim]",
                 method.name());
    g.max_seq_len_ = state_length;
  }
  g.logits_.resize(static_cast<size_t>(g.vocab_));
  return g;
}

Error Generator::read_logits() {
  const EValue& v = method_->output(0);
  PTERON_CHECK(v.tag == Tag::Tensor && v.tensor->dim() > 0 && v.tensor->is_contiguous() &&
                   v.tensor->size(v.tensor->dim() - 1) == vocab_ && v.tensor->numel() >= vocab_,
               Error::InvalidProgram, "method '%s' returned logits that are not [..., %lld]",
               method_->name(), static_cast<long long>(vocab_));
  const int64_t first = v.tensor->numel() - vocab_;  // the last token's row
  switch (v.tensor->dtype()) {
    case ScalarType::Float:
      std::memcpy(logits_.data(), v.tensor->data<float>() + first, logits_.size() * 4);
      break;
    case ScalarType::Half:
      for (int64_t i = 0; i < vocab_; ++i)
        logits_[i] = half_to_float(v.tensor->data<uint16_t>()[first + i]);
      break;
    case ScalarType::BFloat16:
      for (int64_t i = 0; i < vocab_; ++i)
        logits_[i] = bf16_to_float(v.tensor->data<uint16_t>()[first + i]);
      break;
    default:
      return fail(Error::InvalidProgram, "method '%s' returned %s logits", method_->name(),
                  scalar_type_name(v.tensor->dtype()));
  }
  return Error::Ok;
}

Error Generator::run(const int64_t* ids, int32_t count) {
  ids_.assign(ids, ids + count);
  // ExecuTorch's input_pos is the first token's position; cache_position lists them all.
  const int32_t positions = start_position_ ? 1 : count;
  positions_.resize(positions);
  for (int32_t i = 0; i < positions; ++i) positions_[i] = pos_ + i;
  ids_sizes_[1] = count;
  pos_sizes_[0] = positions;
  const Tensor ids_tensor(ScalarType::Long, 2, ids_sizes_, ids_order_, ids_strides_, ids_.data());
  const Tensor pos_tensor(ScalarType::Long, 1, pos_sizes_, pos_order_, pos_strides_,
                          positions_.data());
  PTERON_TRY(method_->set_input(0, ids_tensor));
  PTERON_TRY(method_->set_input(1, pos_tensor));
  PTERON_TRY(method_->execute());
  pos_ += count;
  return read_logits();
}

Error Generator::start(Span<const int64_t> prompt, const GenerationConfig& config) {
  done_ = true;
  PTERON_TRY(check_sampler_config(config.sampler));
  const int64_t n = static_cast<int64_t>(prompt.size());
  PTERON_CHECK(n > 0, Error::InvalidArgument, "the prompt is empty");
  for (size_t i = 0; i < prompt.size(); ++i) {
    PTERON_CHECK(prompt[i] >= 0 && prompt[i] < vocab_, Error::InvalidArgument,
                 "prompt token %zu is %lld, outside the vocabulary [0, %lld)", i,
                 static_cast<long long>(prompt[i]), static_cast<long long>(vocab_));
  }
  PTERON_CHECK(n <= max_seq_len_, Error::InvalidArgument,
               "the prompt has %lld tokens, more than the program's cache of %lld positions",
               static_cast<long long>(n), static_cast<long long>(max_seq_len_));
  // The last new token is never fed back, so n prompt tokens leave room for L - n + 1.
  const int64_t room = max_seq_len_ - n + 1;
  PTERON_CHECK(config.max_new_tokens >= 0, Error::InvalidArgument,
               "max new tokens %lld is negative (0: until EOS or the cache is full)",
               static_cast<long long>(config.max_new_tokens));
  PTERON_CHECK(config.max_new_tokens <= room, Error::InvalidArgument,
               "asked for %lld new tokens, but a %lld-token prompt leaves room for at most %lld "
               "in the program's cache of %lld positions",
               static_cast<long long>(config.max_new_tokens), static_cast<long long>(n),
               static_cast<long long>(room), static_cast<long long>(max_seq_len_));

  config_ = config;
  sampler_ = Sampler(config.sampler);
  figures_ = GenerationFigures{};
  figures_.prompt_tokens = n;
  start_time_ = Clock::now();
  PTERON_TRY(method_->reset_state());
  pos_ = 0;
  const auto prefill_start = Clock::now();
  const double prefill_cpu_start = cpu_ms();
  for (int64_t at = 0; at < n; at += max_chunk_) {
    PTERON_TRY(
        run(prompt.data() + at, static_cast<int32_t>(std::min<int64_t>(max_chunk_, n - at))));
    ++figures_.prefill_calls;
  }
  PTERON_ASSIGN_OR_RETURN(pending_,
                          sampler_.sample(Span<const float>(logits_.data(), logits_.size())));
  const auto first = Clock::now();
  figures_.prefill_ms = Ms(first - prefill_start).count();
  figures_.prefill_cpu_ms = cpu_ms() - prefill_cpu_start;
  figures_.time_to_first_token_ms = Ms(first - start_time_).count();
  done_ = false;
  return Error::Ok;
}

Result<int64_t> Generator::next() {
  PTERON_CHECK(!done_, Error::InvalidArgument, "generation is over: start() a new one");
  int64_t token = pending_;
  if (token < 0) {
    done_ = true;  // until this step succeeds
    const auto step_start = Clock::now();
    const double step_cpu_start = cpu_ms();
    PTERON_TRY(run(&last_, 1));
    PTERON_ASSIGN_OR_RETURN(token,
                            sampler_.sample(Span<const float>(logits_.data(), logits_.size())));
    figures_.decode_ms += Ms(Clock::now() - step_start).count();
    figures_.decode_cpu_ms += cpu_ms() - step_cpu_start;
    done_ = false;
  }
  pending_ = -1;
  last_ = token;
  ++figures_.generated_tokens;
  update_done(token);
  return token;
}

void Generator::update_done(int64_t token) {
  const auto& eos = config_.eos_ids;
  if (std::find(eos.begin(), eos.end(), token) != eos.end()) {
    figures_.stop = StopReason::Eos;
  } else if (config_.max_new_tokens > 0 && figures_.generated_tokens >= config_.max_new_tokens) {
    figures_.stop = StopReason::MaxNewTokens;
  } else if (pos_ >= max_seq_len_) {
    figures_.stop = StopReason::CacheFull;  // no position left to feed this token at
  }
  done_ = figures_.stop != StopReason::None;
}

GenerationFigures Generator::figures() const {
  GenerationFigures f = figures_;
  if (f.prefill_ms > 0) f.prefill_tokens_per_s = f.prompt_tokens / (f.prefill_ms / 1000.0);
  if (f.decode_ms > 0) f.decode_tokens_per_s = (f.generated_tokens - 1) / (f.decode_ms / 1000.0);
  f.peak_rss_bytes = host::peak_rss_bytes();
  return f;
}

Error Generator::generate(Span<const int64_t> prompt, const GenerationConfig& config,
                          const std::function<void(int64_t)>& on_token) {
  PTERON_TRY(start(prompt, config));
  while (!done_) {
    PTERON_ASSIGN_OR_RETURN(const int64_t token, next());
    if (on_token) on_token(token);
  }
  return Error::Ok;
}

}  // namespace pteron::llm
