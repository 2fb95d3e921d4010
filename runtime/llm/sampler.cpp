#include "runtime/llm/sampler.h"

#include <algorithm>
#include <cmath>

namespace pteron::llm {

Error check_sampler_config(const SamplerConfig& c) {
  PTERON_CHECK(std::isfinite(c.temperature) && c.temperature >= 0.0f, Error::InvalidArgument,
               "temperature %g is not a number >= 0 (0: greedy)", c.temperature);
  PTERON_CHECK(c.top_k >= 0, Error::InvalidArgument, "top-k %d is negative (0: every token)",
               c.top_k);
  PTERON_CHECK(c.top_p > 0.0f && c.top_p <= 1.0f, Error::InvalidArgument,
               "top-p %g is outside (0, 1] (1: every token)", c.top_p);
  return Error::Ok;
}

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

Result<int64_t> Sampler::argmax(Span<const float> logits) const {
  int64_t best = -1;
  for (size_t i = 0; i < logits.size(); ++i) {
    if (std::isnan(logits[i])) continue;
    if (best < 0 || logits[i] > logits[best]) best = static_cast<int64_t>(i);
  }
  if (best < 0) {
    return fail(Error::InvalidArgument, "the logits of all %zu tokens are NaN", logits.size());
  }
  return best;
}

Result<int64_t> Sampler::sample(Span<const float> logits) {
  PTERON_CHECK(!logits.empty(), Error::InvalidArgument, "no logits to sample from");
  if (greedy()) return argmax(logits);

  order_.clear();
  for (size_t i = 0; i < logits.size(); ++i) {
    if (!std::isnan(logits[i])) order_.push_back(static_cast<int32_t>(i));
  }
  if (order_.empty()) return argmax(logits);  // reports the all-NaN row
  // Most likely first, ties by index, so the candidate set and the draw are deterministic.
  const auto more_likely = [&](int32_t a, int32_t b) {
    return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
  };
  const size_t k =
      config_.top_k > 0 ? std::min<size_t>(config_.top_k, order_.size()) : order_.size();
  std::partial_sort(order_.begin(), order_.begin() + k, order_.end(), more_likely);
  order_.resize(k);

  // softmax(logits / T) over the candidates, from the largest so exp never overflows.
  const double top = logits[order_[0]];
  // An infinite top (+inf logits, or every one -inf): softmax's limit is uniform over the
  // tokens equal to it.
  if (std::isinf(top)) {
    size_t n = 0;
    while (n < order_.size() && logits[order_[n]] == logits[order_[0]]) ++n;
    return static_cast<int64_t>(order_[std::min(n - 1, static_cast<size_t>(rng_.uniform() * n))]);
  }
  probs_.resize(k);
  double total = 0.0;
  for (size_t i = 0; i < k; ++i) {
    probs_[i] = std::exp((logits[order_[i]] - top) / config_.temperature);
    total += probs_[i];
  }
  // Nucleus: the shortest prefix whose probability reaches top_p (at least one token).
  size_t keep = k;
  if (config_.top_p < 1.0f) {
    double cumulative = 0.0;
    for (size_t i = 0; i < k; ++i) {
      cumulative += probs_[i] / total;
      if (cumulative >= config_.top_p) {
        keep = i + 1;
        break;
      }
    }
    total = 0.0;
    for (size_t i = 0; i < keep; ++i) total += probs_[i];
  }
  const double u = rng_.uniform() * total;
  double cumulative = 0.0;
  for (size_t i = 0; i < keep; ++i) {
    cumulative += probs_[i];
    if (u < cumulative) return static_cast<int64_t>(order_[i]);
  }
  return static_cast<int64_t>(order_[keep - 1]);  // u within rounding of the total
}

}  // namespace pteron::llm
