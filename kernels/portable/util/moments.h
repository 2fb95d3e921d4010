// Mean and (biased) variance of a contiguous run of values, for the normalisation kernels.
// Two passes in double with independent lanes: accurate for long rows (group norm over a
// whole feature map) and still vectorisable.
#pragma once

#include <cstdint>

#include "kernels/portable/util/dtype.h"

namespace pteron {

template <typename T>
void mean_and_variance(const T* x, int64_t n, double* mean, double* var) {
  constexpr int kLanes = 8;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(load_value(x[i + l]));
  double sum = 0;
  for (; i < n; ++i) sum += static_cast<double>(load_value(x[i]));
  for (int l = 0; l < kLanes; ++l) sum += lanes[l];
  const double m = n > 0 ? sum / static_cast<double>(n) : __builtin_nan("");
  for (int l = 0; l < kLanes; ++l) lanes[l] = 0;
  i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      const double d = static_cast<double>(load_value(x[i + l])) - m;
      lanes[l] += d * d;
    }
  double sq = 0;
  for (; i < n; ++i) {
    const double d = static_cast<double>(load_value(x[i])) - m;
    sq += d * d;
  }
  for (int l = 0; l < kLanes; ++l) sq += lanes[l];
  *mean = m;
  *var = n > 0 ? sq / static_cast<double>(n) : __builtin_nan("");
}

}  // namespace pteron
