// The activation a fused kernel applies to its output while it is in cache: a clamp to
// [lo, hi], which is ReLU (0, +inf), ReLU6 and hardtanh (min_val, max_val) and clamp alike,
// then a function of the clamped value where `function` says: SiLU (x * sigmoid(x):
// EfficientNet's and YOLO's convolutions) or hardswish (x * relu6(x + 3) / 6: MobileNetV3's).
#pragma once

#include <cstdint>
#include <limits>

namespace pteron::optimized {

enum class OutputFunction : uint8_t { kNone, kSilu, kHardswish };

struct OutputActivation {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  OutputFunction function = OutputFunction::kNone;

  static OutputActivation relu() { return {0.0f, std::numeric_limits<float>::infinity()}; }
  static OutputActivation only(OutputFunction f) {
    return {-std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(), f};
  }
  bool active() const { return clamps() || has_function(); }
  bool has_function() const { return function != OutputFunction::kNone; }
  // Whether the clamp part bites (what the SGEMM micro-kernels apply in registers).
  bool clamps() const {
    return lo != -std::numeric_limits<float>::infinity() || is_bounded_above();
  }
  bool is_relu() const { return lo == 0.0f && !is_bounded_above() && !has_function(); }
  bool is_bounded_above() const { return hi != std::numeric_limits<float>::infinity(); }
  // Comparisons are false for NaN, which stays NaN (as torch.relu, clamp and hardtanh). Two
  // one-sided selects: they vectorise, where the nested form became unpredictable branches.
  float clamp(float v) const {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
  }
  // One value (the scalar paths); apply_rows is the vector form of the same.
  float apply(float v) const;
  // Over rows x cols of a matrix with row stride rs (this CPU's vector clamp and function).
  void apply_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const;
  // The function part alone over rows x cols (after a clamp the micro-kernels applied).
  void apply_function_rows(float* c, int64_t rs, int64_t rows, int64_t cols) const;
};

}  // namespace pteron::optimized
