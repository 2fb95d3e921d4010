// Linears with few output columns (SkinnyLinearArgs): dot products along K, rows sharing each
// weight load. Included by isa_impl.h inside PTERON_ISA's namespace, after what it uses there.
#pragma once

// Rows m .. m + R of a skinny linear, output columns n0 .. n0 + NB.
template <int R, int NB>
void skinny_block(const SkinnyLinearArgs& a, int64_t m, int64_t n0) {
  Vec acc[R][NB];
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < NB; ++j) acc[r][j] = set1(0.0f);
  const float* x = a.x + m * a.x_rs;
  const float* w = a.w + n0 * a.w_rs;
  int64_t k = 0;
  for (; k + kLanes <= a.K; k += kLanes) {
    Vec xv[R];
    for (int r = 0; r < R; ++r) xv[r] = load(x + r * a.x_rs + k);
    for (int j = 0; j < NB; ++j) {
      const Vec wv = load(w + j * a.w_rs + k);
      for (int r = 0; r < R; ++r) acc[r][j] = fma(xv[r], wv, acc[r][j]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int j = 0; j < NB; ++j) {
      float v = reduce_add(acc[r][j]);
      for (int64_t t = k; t < a.K; ++t) v += x[r * a.x_rs + t] * w[j * a.w_rs + t];
      if (a.bias != nullptr) v += a.bias[n0 + j];
      if (a.relu) v = v < 0.0f ? 0.0f : v;  // NaN stays NaN
      a.y[(m + r) * a.y_rs + n0 + j] = v;
    }
  }
}

template <int R>
void skinny_rows(const SkinnyLinearArgs& a, int64_t m) {
  int64_t n = 0;
  for (; n + 4 <= a.N; n += 4) skinny_block<R, 4>(a, m, n);
  switch (a.N - n) {
    case 3:
      return skinny_block<R, 3>(a, m, n);
    case 2:
      return skinny_block<R, 2>(a, m, n);
    case 1:
      return skinny_block<R, 1>(a, m, n);
    default:
      return;
  }
}

void skinny_linear(const SkinnyLinearArgs& a, int64_t m0, int64_t m1) {
  // Four rows' accumulators (16 vectors) fit 32 registers; AVX2 has 16: two rows there.
  constexpr int kRows = kLanes == 8 ? 2 : 4;
  int64_t m = m0;
  for (; m + kRows <= m1; m += kRows) skinny_rows<kRows>(a, m);
  for (; m < m1; ++m) skinny_rows<1>(a, m);
}
