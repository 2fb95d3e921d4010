// Scaled dot-product attention over one (batch * head) slice (AttentionSlice): online softmax over
// key blocks, several query rows at a time. Included by isa_impl.h inside PTERON_ISA's namespace,
// after what it uses there.
#pragma once

// Attention visits keys in blocks of kKeyBlock with a running max and sum per query row
// (online softmax), and kRows query rows at a time so every K and V row loaded from memory
// serves kRows rows. Register budget: kRows x kKeyVecs score accumulators (16 on AVX-512 and
// NEON, 8 with AVX2's 16 registers).
constexpr int kRows = 4;
constexpr int kKeyVecs = kLanes == 8 ? 2 : 4;
constexpr int64_t kKeyBlock = 2 * kKeyVecs * kLanes;  // keys per online-softmax step
constexpr int kValueVecs = kKeyVecs;                  // value columns per accumulator pass
constexpr int64_t kMaxDv = 512;                       // accumulator rows on the stack

// scores[r][j] = q_r . k_t[:, j0 + j] for R rows and keys from j in passes of U vectors of keys
// while whole passes fit before nb (k_t rows are contiguous); returns the first key left.
template <int R, int U>
inline __attribute__((always_inline)) int64_t block_score_passes(const AttentionSlice& s,
                                                                 const float* const* q, int64_t j0,
                                                                 int64_t nb,
                                                                 float (*scores)[kKeyBlock],
                                                                 int64_t j) {
  const float* kt = s.k_t + j0;
  for (; j + U * kLanes <= nb; j += U * kLanes) {
    Vec acc[R][U];
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < U; ++c) acc[r][c] = set1(0);
    for (int64_t d = 0; d < s.D; ++d) {
      const float* row = kt + d * s.kt_row + j;
      Vec k[U];
      for (int c = 0; c < U; ++c) k[c] = load(row + c * kLanes);
      for (int r = 0; r < R; ++r) {
        const Vec qd = set1(q[r][d]);
        for (int c = 0; c < U; ++c) acc[r][c] = fma(qd, k[c], acc[r][c]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int c = 0; c < U; ++c) store(&scores[r][j + c * kLanes], acc[r][c]);
  }
  return j;
}

// scores[r][j] = q_r . k_t[:, j0 + j] for j < nb and R rows, vectorised over keys: kKeyVecs
// vectors of keys a pass, then single vectors (50 keys, ViT-B/32's, were all left to the scalar
// loop), then the last keys one at a time.
template <int R>
void block_scores(const AttentionSlice& s, const float* const* q, int64_t j0, int64_t nb,
                  float (*scores)[kKeyBlock]) {
  int64_t j = block_score_passes<R, kKeyVecs>(s, q, j0, nb, scores, 0);
  j = block_score_passes<R, 1>(s, q, j0, nb, scores, j);
  const float* kt = s.k_t + j0;
  for (; j < nb; ++j) {
    for (int r = 0; r < R; ++r) {
      float acc = 0;
      for (int64_t d = 0; d < s.D; ++d) acc += q[r][d] * kt[d * s.kt_row + j];
      scores[r][j] = acc;
    }
  }
}

// Keys stored as rows (a KV cache read in place): scores[r][j] = q_r . k[j0 + j], one dot
// product per key vectorised over D.
template <int R>
void block_scores_rows(const AttentionSlice& s, const float* const* q, int64_t j0, int64_t nb,
                       float (*scores)[kKeyBlock]) {
  const int64_t dv = s.D / kLanes * kLanes;
  for (int64_t j = 0; j < nb; ++j) {
    const float* kr = s.k_t + (j0 + j) * s.kt_col;
    Vec acc[R];
    for (int r = 0; r < R; ++r) acc[r] = set1(0);
    for (int64_t d = 0; d < dv; d += kLanes) {
      const Vec kd = load(kr + d);
      for (int r = 0; r < R; ++r) acc[r] = fma(load(q[r] + d), kd, acc[r]);
    }
    for (int r = 0; r < R; ++r) {
      float t = reduce_add(acc[r]);
      for (int64_t d = dv; d < s.D; ++d) t += q[r][d] * kr[d];
      scores[r][j] = t;
    }
  }
}

// Mask element offset of query row i (a slice may span several heads: AttentionSlice).
inline int64_t mask_row_offset(const AttentionSlice& s, int64_t i) {
  if (s.head_rows <= 0) return i * s.mask_row;
  return (i / s.head_rows) * s.mask_head + (i % s.head_rows) * s.mask_row;
}

// Of keys [j0, j0 + nb), how many up to the last one some row of [i0, i0 + R) may see, rounded
// up to whole vectors of keys (block_scores' step; the mask hides the extra ones): the keys
// after it are masked out for every row (the causal mask's future), so they are neither scored
// nor summed; 0 skips the block.
template <int R>
int64_t block_extent(const AttentionSlice& s, int64_t i0, int64_t j0, int64_t nb) {
  if (s.mask == nullptr) return nb;
  const float ninf = -__builtin_inff();
  int64_t extent = 0;
  for (int r = 0; r < R; ++r) {
    const int64_t at = mask_row_offset(s, i0 + r) + j0 * s.mask_col;
    int64_t j = nb;
    if (s.mask_is_bool) {
      const uint8_t* mk = static_cast<const uint8_t*>(s.mask) + at;
      while (j > extent && mk[(j - 1) * s.mask_col] != 0) --j;
    } else {
      const float* mk = static_cast<const float*>(s.mask) + at;
      while (j > extent && mk[(j - 1) * s.mask_col] == ninf) --j;
    }
    extent = j > extent ? j : extent;
    if (extent == nb) break;
  }
  constexpr int64_t kStep = kKeyVecs * kLanes;
  extent = (extent + kStep - 1) / kStep * kStep;
  return extent < nb ? extent : nb;
}

// scores = scores * scale + mask for query row i.
void scale_and_mask(const AttentionSlice& s, int64_t i, int64_t j0, int64_t nb, float* scores) {
  const float ninf = -__builtin_inff();
  const int64_t at = s.mask == nullptr ? 0 : mask_row_offset(s, i) + j0 * s.mask_col;
  if (s.mask == nullptr) {
    scale_row(scores, s.scale, nb);
  } else if (s.mask_is_bool) {
    // The mask's bytes, not `bool`s: a byte other than 0/1 read as bool is undefined behaviour.
    const uint8_t* mk = static_cast<const uint8_t*>(s.mask) + at;
    for (int64_t j = 0; j < nb; ++j)
      scores[j] = mk[j * s.mask_col] != 0 ? ninf : scores[j] * s.scale;
  } else {
    const float* mk = static_cast<const float*>(s.mask) + at;
    if (s.mask_col == 1) {
      const Vec vs = set1(s.scale);
      int64_t j = 0;
      for (; j + kLanes <= nb; j += kLanes)
        store(scores + j, fma(load(scores + j), vs, load(mk + j)));
      for (; j < nb; ++j) scores[j] = scores[j] * s.scale + mk[j];
    } else {
      for (int64_t j = 0; j < nb; ++j) scores[j] = scores[j] * s.scale + mk[j * s.mask_col];
    }
  }
}

// acc[r][c:] += sum_j p[r][j] * v[j0 + j][c:] for columns from c in passes of U vectors while
// whole passes fit, every pass's columns of all R rows in registers; returns the first column
// left.
template <int R, int U>
inline __attribute__((always_inline)) int64_t accumulate_value_passes(const AttentionSlice& s,
                                                                      int64_t j0, int64_t nb,
                                                                      const float (*p)[kKeyBlock],
                                                                      float (*acc)[kMaxDv],
                                                                      int64_t c) {
  for (; c + U * kLanes <= s.Dv; c += U * kLanes) {
    Vec a[R][U];
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < U; ++u) a[r][u] = load(&acc[r][c + u * kLanes]);
    for (int64_t j = 0; j < nb; ++j) {
      const float* vr = s.v + (j0 + j) * s.v_row + c;
      Vec v[U];
      for (int u = 0; u < U; ++u) v[u] = load(vr + u * kLanes);
      for (int r = 0; r < R; ++r) {
        const Vec pr = set1(p[r][j]);
        for (int u = 0; u < U; ++u) a[r][u] = fma(pr, v[u], a[r][u]);
      }
    }
    for (int r = 0; r < R; ++r)
      for (int u = 0; u < U; ++u) store(&acc[r][c + u * kLanes], a[r][u]);
  }
  return c;
}

// acc[r][:] += sum_j p[r][j] * v[j0 + j][:]: kValueVecs vectors of columns a pass, then single
// vectors (a head of 16 or 32 values, or 80's last 16, was left to the scalar loop), then the
// last columns one at a time.
template <int R>
void accumulate_values(const AttentionSlice& s, int64_t j0, int64_t nb, const float (*p)[kKeyBlock],
                       float (*acc)[kMaxDv]) {
  int64_t c = accumulate_value_passes<R, kValueVecs>(s, j0, nb, p, acc, 0);
  c = accumulate_value_passes<R, 1>(s, j0, nb, p, acc, c);
  for (; c < s.Dv; ++c) {
    for (int64_t j = 0; j < nb; ++j) {
      const float vjc = s.v[(j0 + j) * s.v_row + c];
      for (int r = 0; r < R; ++r) acc[r][c] += p[r][j] * vjc;
    }
  }
}

// Rows [i0, i0 + R) of the output.
template <int R>
void attention_rows(const AttentionSlice& s, int64_t i0) {
  const float ninf = -__builtin_inff();
  alignas(64) float scores[R][kKeyBlock];
  alignas(64) float acc[R][kMaxDv];
  const float* q[R];
  float m[R], l[R];
  for (int r = 0; r < R; ++r) {
    q[r] = s.q + (i0 + r) * s.q_row;
    m[r] = ninf;
    l[r] = 0;
    for (int64_t c = 0; c < s.Dv; ++c) acc[r][c] = 0;
  }
  for (int64_t j0 = 0; j0 < s.Lk; j0 += kKeyBlock) {
    const int64_t nb = block_extent<R>(s, i0, j0, s.Lk - j0 < kKeyBlock ? s.Lk - j0 : kKeyBlock);
    if (nb == 0) continue;  // every key of the block masked out for every row
    if (s.kt_col == 1) {
      block_scores<R>(s, q, j0, nb, scores);
    } else {
      block_scores_rows<R>(s, q, j0, nb, scores);
    }
    for (int r = 0; r < R; ++r) {
      float* sr = scores[r];
      scale_and_mask(s, i0 + r, j0, nb, sr);
      const float bm = row_max(sr, nb);
      if (bm == ninf) {  // every key of this block is masked out for this row
        for (int64_t j = 0; j < nb; ++j) sr[j] = 0;
        continue;
      }
      const float m_new = fmax1(m[r], bm);
      const float correction = m[r] == ninf ? 0.0f : std::exp(m[r] - m_new);
      if (correction != 1.0f) {
        scale_row(acc[r], correction, s.Dv);
        l[r] *= correction;
      }
      l[r] += exp_shifted(sr, m_new, sr, nb);
      m[r] = m_new;
    }
    accumulate_values<R>(s, j0, nb, scores, acc);
  }
  for (int r = 0; r < R; ++r) {
    float* o = s.out + (i0 + r) * s.out_row;
    if (l[r] == 0.0f) {  // every key masked: NaN as softmax gives, or 0 as _safe_softmax does
      const float fill = s.zero_masked_rows ? 0.0f : __builtin_nanf("");
      for (int64_t c = 0; c < s.Dv; ++c) o[c] = fill;
      continue;
    }
    const float inv = 1.0f / l[r];
    const Vec vi = set1(inv);
    int64_t c = 0;
    for (; c + kLanes <= s.Dv; c += kLanes) store(o + c, load(&acc[r][c]) * vi);
    for (; c < s.Dv; ++c) o[c] = acc[r][c] * inv;
  }
}

void attention(const AttentionSlice& s, int64_t q_begin, int64_t q_end) {
  int64_t i = q_begin;
  for (; i + kRows <= q_end; i += kRows) attention_rows<kRows>(s, i);
  // The rest together (a decode step of grouped-query attention: 2 or 3 heads per K/V).
  if (q_end - i == 3) attention_rows<3>(s, i);
  if (q_end - i == 2) attention_rows<2>(s, i);
  if (q_end - i == 1) attention_rows<1>(s, i);
}
