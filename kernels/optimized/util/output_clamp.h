// The activation a fused kernel applies to its output while it is in cache: a clamp to
// [lo, hi], which is ReLU (0, +inf), ReLU6 and hardtanh (min_val, max_val) and clamp alike.
#pragma once

#include <cstdint>
#include <limits>

namespace pteron::optimized {

struct OutputClamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();

  static OutputClamp relu() { return {0.0f, std::numeric_limits<float>::infinity()}; }
  bool active() const {
    return lo != -std::numeric_limits<float>::infinity() || is_bounded_above();
  }
  bool is_relu() const { return lo == 0.0f && !is_bounded_above(); }
  bool is_bounded_above() const { return hi != std::numeric_limits<float>::infinity(); }
  // Comparisons are false for NaN, which stays NaN (as torch.relu, clamp and hardtanh). Two
  // one-sided selects: they vectorise, where the nested form became unpredictable branches.
  float apply(float v) const {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  }
  // Over rows x cols of a matrix with row stride rs (this CPU's vector clamp).
  void apply_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const;
};

}  // namespace pteron::optimized
