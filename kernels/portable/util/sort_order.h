// The element order of torch's CPU sort and topk: (value, index) pairs compared with ATen's
// KeyValueCompAsc / KeyValueCompDesc (NaN above every number), and a stable merge sort that
// needs no heap.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace pteron {

template <typename V>
struct Pair {
  V v;
  int64_t i;
};

template <typename V>
bool is_nan_value(V v) {
  if constexpr (std::is_floating_point_v<V>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// KeyValueCompAsc / KeyValueCompDesc.
template <typename V>
struct Before {
  bool descending;
  bool operator()(const Pair<V>& a, const Pair<V>& b) const {
    if (descending) return (is_nan_value(a.v) && !is_nan_value(b.v)) || a.v > b.v;
    return (!is_nan_value(a.v) && is_nan_value(b.v)) || a.v < b.v;
  }
};

// Bottom-up merge sort of p[0, n) using tmp[0, n) by `before` (a strict order on E): stable, no
// heap.
template <typename E, typename Less>
void merge_sort(E* p, E* tmp, int64_t n, Less before) {
  E* src = p;
  E* dst = tmp;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      int64_t a = lo, b = mid, o = lo;
      while (a < mid && b < hi) dst[o++] = before(src[b], src[a]) ? src[b++] : src[a++];
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    std::swap(src, dst);
  }
  if (src != p) std::copy(src, src + n, p);
}

}  // namespace pteron
