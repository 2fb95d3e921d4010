// Reductions over rows and columns: sums (blocked, totals in double), max / min, and the arg
// extremes with their first positions. Included by isa_impl.h inside PTERON_ISA's namespace, after
// what it uses there.
#pragma once

// The identity-free reductions start from their first element; NaN wins in max and min.
inline Vec reduce_step(Reduce op, Vec acc, Vec v) {
  if (op == Reduce::kSum) return acc + v;
  const Vec m = op == Reduce::kMax ? vmax(acc, v) : vmin(acc, v);
  return select_nan(acc, acc, select_nan(v, v, m));
}

inline float reduce_scalar(Reduce op, float acc, float v) {
  if (op == Reduce::kSum) return acc + v;
  if (acc != acc || v != v) return acc != acc ? acc : v;
  return op == Reduce::kMax ? fmax1(acc, v) : -fmax1(-acc, -v);
}

// The sum of x[i] - center, or of its squares, over one block in float lanes (row_sum's two
// accumulators).
template <bool kSquares>
float deviation_sum(const float* x, int64_t n, float center) {
  const Vec c = set1(center);
  Vec a0 = set1(0.0f), a1 = set1(0.0f);
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Vec d0 = load(x + i) - c, d1 = load(x + i + kLanes) - c;
    a0 = kSquares ? fma(d0, d0, a0) : a0 + d0;
    a1 = kSquares ? fma(d1, d1, a1) : a1 + d1;
  }
  float s = reduce_add(a0 + a1);
  for (; i < n; ++i) s += kSquares ? (x[i] - center) * (x[i] - center) : x[i] - center;
  return s;
}

double blocked_sum(const float* x, int64_t n, float center, bool squares) {
  constexpr int64_t kBlock = 1024;
  double total = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = n - b < kBlock ? n - b : kBlock;
    total +=
        squares ? deviation_sum<true>(x + b, m, center) : deviation_sum<false>(x + b, m, center);
  }
  return total;
}

// One row's sum (blocked_sum's blocks).
float sum_row(const float* x, int64_t n) {
  return static_cast<float>(blocked_sum(x, n, 0.0f, false));
}

void normalize(const float* x, float* y, int64_t n, float mean, float mean_low, float scale,
               float shift) {
  const Vec m = set1(mean), lo = set1(mean_low), s = set1(scale), t = set1(shift);
  map_lanes(x, y, n, [=](Vec v) { return fma((v - m) - lo, s, t); });
}

// One row's max or min: two accumulators, NaN counted apart (a NaN anywhere is the result).
float extreme_row(bool max, const float* x, int64_t n) {
  const Vec one = set1(1.0f);
  Vec a0 = set1(x[0]), a1 = a0, nan = set1(0.0f);
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    const Vec v0 = load(x + i), v1 = load(x + i + kLanes);
    a0 = max ? vmax(a0, v0) : vmin(a0, v0);
    a1 = max ? vmax(a1, v1) : vmin(a1, v1);
    nan = select_nan(v0, one, select_nan(v1, one, nan));
  }
  const Vec a = max ? vmax(a0, a1) : vmin(a0, a1);
  float r = max ? reduce_max(a) : -reduce_max(set1(0.0f) - a);
  if (reduce_max(nan) > 0) return __builtin_nanf("");
  for (; i < n; ++i) {
    if (x[i] != x[i]) return x[i];
    r = max ? fmax1(r, x[i]) : -fmax1(-r, -x[i]);
  }
  return r;
}

void reduce_rows(Reduce op, const float* x, int64_t rows, int64_t n, float* out) {
  for (int64_t o = 0; o < rows; ++o)
    out[o] =
        op == Reduce::kSum ? sum_row(x + o * n, n) : extreme_row(op == Reduce::kMax, x + o * n, n);
}

// Columns four vectors wide at a time; sums over blocks of 128 rows in float, each block added
// to the running total.
void reduce_columns(Reduce op, const float* x, int64_t R, int64_t stride, int64_t n, float* out) {
  constexpr int64_t kRowBlock = 128;
  constexpr int64_t W = 4 * kLanes;
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    Vec t[4] = {set1(0.0f), set1(0.0f), set1(0.0f), set1(0.0f)};  // set by the first block (R >= 1)
    for (int64_t r0 = 0; r0 < R; r0 += kRowBlock) {
      const int64_t r1 = R - r0 < kRowBlock ? R : r0 + kRowBlock;
      const float* row = x + r0 * stride + j;
      Vec a[4];
      for (int k = 0; k < 4; ++k) a[k] = load(row + k * kLanes);
      for (int64_t r = r0 + 1; r < r1; ++r) {
        row = x + r * stride + j;
        for (int k = 0; k < 4; ++k) a[k] = reduce_step(op, a[k], load(row + k * kLanes));
      }
      for (int k = 0; k < 4; ++k) t[k] = r0 == 0 ? a[k] : reduce_step(op, t[k], a[k]);
    }
    for (int k = 0; k < 4; ++k) store(out + j + k * kLanes, t[k]);
  }
  for (; j < n; ++j) {
    float t = 0;
    for (int64_t r0 = 0; r0 < R; r0 += kRowBlock) {
      const int64_t r1 = R - r0 < kRowBlock ? R : r0 + kRowBlock;
      float a = x[r0 * stride + j];
      for (int64_t r = r0 + 1; r < r1; ++r) a = reduce_scalar(op, a, x[r * stride + j]);
      t = r0 == 0 ? a : reduce_scalar(op, t, a);
    }
    out[j] = t;
  }
}

void arg_extreme_columns(bool max, const float* x, int64_t R, int64_t stride, int64_t n,
                         float* values, int64_t* indices) {
  const Vec one = set1(1.0f), zero = set1(0.0f), half = set1(0.5f);
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    Vec best = load(x + j), at = zero;
    for (int64_t r = 1; r < R; ++r) {
      const Vec v = load(x + r * stride + j);
      // Strictly better (ties keep the first), or the first NaN (which nothing then beats).
      Vec take = max ? select_gt(v, best, one, zero) : select_lt(v, best, one, zero);
      take = select_nan(v, select_nan(best, zero, one), take);
      best = select_gt(take, half, v, best);
      at = select_gt(take, half, set1(static_cast<float>(r)), at);
    }
    float b[kLanes], a[kLanes];
    store(b, best);
    store(a, at);
    for (int k = 0; k < kLanes; ++k) {
      if (values != nullptr) values[j + k] = b[k];
      indices[j + k] = static_cast<int64_t>(a[k]);
    }
  }
  for (; j < n; ++j) {
    float best = x[j];
    int64_t at = 0;
    for (int64_t r = 1; r < R && best == best; ++r) {
      const float v = x[r * stride + j];
      if ((max ? v > best : v < best) || v != v) best = v, at = r;
    }
    if (values != nullptr) values[j] = best;
    indices[j] = at;
  }
}

void arg_extreme_rows(bool max, const float* x, int64_t rows, int64_t n, float* values,
                      int64_t* indices) {
  if (n < 2 * kLanes) {
    // Short rows (a detector's classes): blocks of rows transposed so that each lane follows a
    // row down arg_extreme_columns; one row at a time is a chain of dependent compares and
    // selects (5 cycles an element).
    constexpr int64_t kTileRows = 256;
    float tile[kTileRows * 2 * kLanes];
    for (int64_t o0 = 0; o0 < rows; o0 += kTileRows) {
      const int64_t b = rows - o0 < kTileRows ? rows - o0 : kTileRows;
      transpose(x + o0 * n, n, tile, b, b, n);
      arg_extreme_columns(max, tile, n, b, b, values != nullptr ? values + o0 : nullptr,
                          indices + o0);
    }
    return;
  }
  for (int64_t o = 0; o < rows; ++o) {
    const float* row = x + o * n;
    // The extreme (NaN if any), then the first position holding it.
    const float best = extreme_row(max, row, n);
    int64_t i = 0;
    if (best != best) {
      while (row[i] == row[i]) ++i;
    } else {
      while (row[i] != best) ++i;
    }
    if (values != nullptr) values[o] = row[i];  // -0 or 0, as it stands first
    indices[o] = i;
  }
}
