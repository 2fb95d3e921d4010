// Picks the next token from a row of logits: greedy (argmax) when temperature is 0, else a
// draw from softmax(logits / temperature) restricted to the top-k tokens and then to the
// smallest set whose probability reaches top-p. The draw uses a seeded splitmix64, so one
// seed gives the same tokens on every machine and thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace pteron::llm {

struct SamplerConfig {
  float temperature = 0.0f;  // 0: greedy
  int32_t top_k = 0;         // 0: every token
  float top_p = 1.0f;        // 1: every token
  uint64_t seed = 0;
};

// One line naming the bad setting (temperature < 0 or not finite, top_k < 0, top_p outside
// (0, 1]), or Ok.
Error check_sampler_config(const SamplerConfig& config);

// splitmix64 (Steele, Lea, Flood 2014): 64 bits of state, passes BigCrush, trivially seeded.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next();
  // Uniform in [0, 1) from the top 53 bits.
  double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }

 private:
  uint64_t state_;
};

class Sampler {
 public:
  // `config` must pass check_sampler_config.
  explicit Sampler(const SamplerConfig& config) : config_(config), rng_(config.seed) {}

  // The chosen token index. Ties go to the lower index. NaN logits are never chosen; a row
  // with no finite-or-infinite number at all is an error.
  Result<int64_t> sample(Span<const float> logits);

  bool greedy() const { return config_.temperature == 0.0f; }

 private:
  Result<int64_t> argmax(Span<const float> logits) const;

  SamplerConfig config_;
  SplitMix64 rng_;
  std::vector<int32_t> order_;  // candidate token ids, most likely first
  std::vector<double> probs_;   // their probabilities, same order
};

}  // namespace pteron::llm
