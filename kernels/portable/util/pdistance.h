// The p-norm distance between two vectors, shared by _cdist_forward and _pdist_forward, with
// torch's special cases: p = 0 counts differing elements, p = inf takes the largest |a - b|.
// Accumulates in double (torch accumulates in the input type; the tests allow for it).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/portable/util/dtype.h"

namespace pteron {

template <typename T>
double pnorm_distance(const T* a, int64_t a_step, const T* b, int64_t b_step, int64_t m, double p) {
  double acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(static_cast<double>(load_value(a[k * a_step])) -
                               static_cast<double>(load_value(b[k * b_step])));
    if (p == 0)
      acc += d != 0 ? 1.0 : 0.0;
    else if (p == 1)
      acc += d;
    else if (p == 2)
      acc += d * d;
    else if (std::isinf(p))
      acc = d > acc || d != d ? d : acc;  // NaN propagates
    else
      acc += std::pow(d, p);
  }
  if (p == 0 || p == 1 || std::isinf(p)) return acc;
  if (p == 2) return std::sqrt(acc);
  return std::pow(acc, 1.0 / p);
}

}  // namespace pteron
