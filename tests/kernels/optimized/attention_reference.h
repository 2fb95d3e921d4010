// Helpers shared by the optimized-kernel tests: seeded random data and a double-precision
// attention reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace pteron {

inline std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// softmax(scale * q k^T + mask) v in double; mask[i * lk + j], bool as "masked out".
inline std::vector<double> attention_reference(const std::vector<float>& q,
                                               const std::vector<float>& kt,
                                               const std::vector<float>& v, const float* fmask,
                                               const bool* bmask, float scale, int64_t lq,
                                               int64_t lk, int64_t d, int64_t dv) {
  std::vector<double> out(static_cast<size_t>(lq * dv));
  for (int64_t i = 0; i < lq; ++i) {
    std::vector<double> s(static_cast<size_t>(lk));
    double m = -INFINITY;
    for (int64_t j = 0; j < lk; ++j) {
      double acc = 0;
      for (int64_t c = 0; c < d; ++c) acc += double(q[i * d + c]) * kt[c * lk + j];
      acc *= scale;
      if (fmask) acc += fmask[i * lk + j];
      if (bmask && bmask[i * lk + j]) acc = -INFINITY;
      s[j] = acc;
      m = std::max(m, acc);
    }
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - m));
    for (int64_t c = 0; c < dv; ++c) {
      double acc = 0;
      for (int64_t j = 0; j < lk; ++j) acc += s[j] * v[j * dv + c];
      out[i * dv + c] = acc / sum;
    }
  }
  return out;
}

}  // namespace pteron
