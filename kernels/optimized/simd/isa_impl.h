// The bodies of IsaKernels (isa_kernels.h), written once over Vec (vec.h) and compiled by each
// isa_*.cpp with its own flags and namespace. Include after defining PTERON_ISA and
// PTERON_ISA_NAME; defines PTERON_ISA::kTable.
#pragma once

#include <cmath>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/simd/vec.h"

namespace pteron::opt::PTERON_ISA {
namespace {

inline float fmax1(float a, float b) { return a > b ? a : b; }

float row_sum(const float* x, int64_t n) {
  Vec a0 = set1(0), a1 = set1(0);
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    a0 = a0 + load(x + i);
    a1 = a1 + load(x + i + kLanes);
  }
  for (; i + kLanes <= n; i += kLanes) a0 = a0 + load(x + i);
  float s = reduce_add(a0 + a1);
  for (; i < n; ++i) s += x[i];
  return s;
}

float row_max(const float* x, int64_t n) {
  const float ninf = -__builtin_inff();
  Vec m = set1(ninf);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) m = vmax(m, load(x + i));
  float r = reduce_max(m);
  for (; i < n; ++i) r = fmax1(r, x[i]);
  return r;
}

void layer_norm(const float* x, const float* w, const float* b, float eps, int64_t rows, int64_t D,
                float* y, float* mean_out, float* rstd_out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    const float mean = D > 0 ? row_sum(xr, D) / static_cast<float>(D) : 0.0f;
    // Two passes: the variance of (x - mean) keeps its precision for rows far from zero.
    const Vec vm = set1(mean);
    Vec s0 = set1(0), s1 = set1(0);
    int64_t i = 0;
    for (; i + 2 * kLanes <= D; i += 2 * kLanes) {
      const Vec d0 = load(xr + i) - vm, d1 = load(xr + i + kLanes) - vm;
      s0 = fma(d0, d0, s0);
      s1 = fma(d1, d1, s1);
    }
    for (; i + kLanes <= D; i += kLanes) {
      const Vec d0 = load(xr + i) - vm;
      s0 = fma(d0, d0, s0);
    }
    float ss = reduce_add(s0 + s1);
    for (; i < D; ++i) ss += (xr[i] - mean) * (xr[i] - mean);
    const float var = D > 0 ? ss / static_cast<float>(D) : 0.0f;
    const float rstd = 1.0f / std::sqrt(var + eps);
    mean_out[r] = D > 0 ? mean : __builtin_nanf("");
    rstd_out[r] = D > 0 ? rstd : __builtin_nanf("");
    const Vec vs = set1(rstd);
    i = 0;
    for (; i + kLanes <= D; i += kLanes) {
      Vec t = (load(xr + i) - vm) * vs;  // x * rstd - mean * rstd would cancel
      if (w) t = t * load(w + i);
      if (b) t = t + load(b + i);
      store(yr + i, t);
    }
    for (; i < D; ++i) {
      float t = (xr[i] - mean) * rstd;
      if (w) t *= w[i];
      if (b) t += b[i];
      yr[i] = t;
    }
  }
}

void rms_norm(const float* x, const float* w, float eps, int64_t rows, int64_t D, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    Vec s0 = set1(0), s1 = set1(0);
    int64_t i = 0;
    for (; i + 2 * kLanes <= D; i += 2 * kLanes) {
      const Vec a = load(xr + i), b = load(xr + i + kLanes);
      s0 = fma(a, a, s0);
      s1 = fma(b, b, s1);
    }
    for (; i + kLanes <= D; i += kLanes) {
      const Vec a = load(xr + i);
      s0 = fma(a, a, s0);
    }
    float ss = reduce_add(s0 + s1);
    for (; i < D; ++i) ss += xr[i] * xr[i];
    // rsqrt(mean(x^2) + eps), then (x * r) * w in the graph's order.
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(D) + eps);
    const Vec vr = set1(inv);
    i = 0;
    if (w != nullptr) {
      for (; i + kLanes <= D; i += kLanes) store(yr + i, (load(xr + i) * vr) * load(w + i));
      for (; i < D; ++i) yr[i] = (xr[i] * inv) * w[i];
    } else {
      for (; i + kLanes <= D; i += kLanes) store(yr + i, load(xr + i) * vr);
      for (; i < D; ++i) yr[i] = xr[i] * inv;
    }
  }
}

template <bool kTanh>
inline Vec gelu_vec(Vec x) {
  if (kTanh) {
    const Vec inner = set1(0.79788456080286535588f) * fma(set1(0.044715f) * x * x, x, x);
    return set1(0.5f) * x * (set1(1.0f) + vtanh(inner));
  }
  return set1(0.5f) * x * (set1(1.0f) + verf_coarse(x * set1(0.70710678118654752440f)));
}

template <bool kTanh>
void gelu_impl(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, gelu_vec<kTanh>(load(x + i)));
  if (i < n) {  // tail through a padded vector so it rounds exactly like the body
    float in[kLanes] = {}, out[kLanes];
    for (int64_t j = i; j < n; ++j) in[j - i] = x[j];
    store(out, gelu_vec<kTanh>(load(in)));
    for (int64_t j = i; j < n; ++j) y[j] = out[j - i];
  }
}

void gelu(const float* x, float* y, int64_t n, bool tanh_approx) {
  if (tanh_approx) {
    gelu_impl<true>(x, y, n);
  } else {
    gelu_impl<false>(x, y, n);
  }
}

void relu(const float* x, float* y, int64_t n) {
  int64_t i = 0;
  const Vec z = set1(0.0f);
  // NaN stays NaN as in torch (a plain max drops it on x86).
  for (; i + kLanes <= n; i += kLanes) {
    const Vec v = load(x + i);
    store(y + i, select_nan(v, v, vmax(v, z)));
  }
  for (; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f);
}

// max with lo, then min with hi (torch's order), x always the second operand: x86's min/max
// return their second operand when one is NaN, so a NaN x comes through both.
inline Vec clamp_lanes(Vec x, Vec lo, Vec hi) { return vmin(hi, vmax(lo, x)); }

void clamp(float* y, int64_t n, float lo, float hi) {
  const Vec vlo = set1(lo), vhi = set1(hi);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, clamp_lanes(load(y + i), vlo, vhi));
  for (; i < n; ++i) {
    float v = y[i] < lo ? lo : y[i];
    y[i] = v > hi ? hi : v;
  }
}

inline Vec sigmoid_vec(Vec x) { return set1(1.0f) / (set1(1.0f) + vexp(set1(0.0f) - x)); }

// x * sigmoid(x) as x * (1 / (1 + e^-x)) with e^-x clamped into vexp's range and a reciprocal
// estimate instead of a divide: SiLU runs after every convolution of EfficientNet- and YOLO-style
// nets, where the divide and vexp's range selects made it 4x an add. Where -x is past the range,
// sigmoid(x) is 0 (x = -inf gives NaN, as torch); NaN stays NaN through the last product.
inline Vec silu_vec(Vec x) {
  const Vec hi = set1(kExpMax), nx = set1(0.0f) - x;
  const Vec e = vexp_in_range(vmax(vmin(nx, hi), set1(kExpMin)));
  return x * select_gt(nx, hi, set1(0.0f), recip(set1(1.0f) + e));
}

// y[i] = f(x[i]) a vector at a time; the tail goes through a padded vector so it rounds exactly
// like the body. y may be x.
template <typename F>
void map_lanes(const float* x, float* y, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, f(load(x + i)));
  if (i < n) {
    float in[kLanes] = {}, out[kLanes];
    for (int64_t j = i; j < n; ++j) in[j - i] = x[j];
    store(out, f(load(in)));
    for (int64_t j = i; j < n; ++j) y[j] = out[j - i];
  }
}

void sigmoid(const float* x, float* y, int64_t n) { map_lanes(x, y, n, sigmoid_vec); }

void tanh_rows(const float* x, float* y, int64_t n) {
  map_lanes(x, y, n, [](Vec v) { return vtanh(v); });
}

// (x * sigmoid(x)) * u, the two products in the decomposed graph's order; u null: silu.
void silu_mul(const float* x, const float* u, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec s = silu_vec(load(x + i));
    store(y + i, u ? s * load(u + i) : s);
  }
  if (i < n) {
    float in[kLanes] = {}, other[kLanes] = {}, out[kLanes];
    for (int64_t j = i; j < n; ++j) {
      in[j - i] = x[j];
      if (u) other[j - i] = u[j];
    }
    const Vec s = silu_vec(load(in));
    store(out, u ? s * load(other) : s);
    for (int64_t j = i; j < n; ++j) y[j] = out[j - i];
  }
}

// relu6(x + 3) / 6, times x for hardswish: torch's order, but a product by 1/6 where torch divides
// (within an ulp). clamp_lanes keeps a NaN.
template <bool kSwish>
inline Vec hard_activation_vec(Vec x) {
  const Vec gate = clamp_lanes(x + set1(3.0f), set1(0.0f), set1(6.0f));
  return (kSwish ? x * gate : gate) * set1(1.0f / 6.0f);
}

void hard_activation(const float* x, float* y, int64_t n, bool swish) {
  if (swish) {
    map_lanes(x, y, n, hard_activation_vec<true>);
  } else {
    map_lanes(x, y, n, hard_activation_vec<false>);
  }
}

// e^(x - shift) over a row into y; returns the sum.
float exp_shifted(const float* x, float shift, float* y, int64_t n) {
  const Vec vs = set1(shift);
  Vec acc = set1(0);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vec e = vexp(load(x + i) - vs);
    store(y + i, e);
    acc = acc + e;
  }
  float sum = reduce_add(acc);
  if (i < n) {
    float in[kLanes], out[kLanes];
    for (int j = 0; j < kLanes; ++j) in[j] = -__builtin_inff();
    for (int64_t j = i; j < n; ++j) in[j - i] = x[j] - shift;
    store(out, vexp(load(in)));
    for (int64_t j = i; j < n; ++j) {
      y[j] = out[j - i];
      sum += out[j - i];
    }
  }
  return sum;
}

void scale_row(float* y, float s, int64_t n) {
  const Vec vs = set1(s);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) store(y + i, load(y + i) * vs);
  for (; i < n; ++i) y[i] *= s;
}

void softmax(const float* x, float* y, int64_t rows, int64_t n, bool log) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * n;
    float* yr = y + r * n;
    const float m = row_max(xr, n);
    // An all -inf row has no finite maximum; subtracting 0 instead gives NaN like torch.
    const float shift = m == -__builtin_inff() ? 0.0f : m;
    const float sum = exp_shifted(xr, shift, yr, n);
    if (!log) {
      scale_row(yr, 1.0f / sum, n);
      continue;
    }
    // (x - max) - log(sum): adding log(sum) to a large max first would round it away.
    const float log_sum = std::log(sum);
    const Vec vs = set1(shift), vl = set1(log_sum);
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(yr + i, (load(xr + i) - vs) - vl);
    for (; i < n; ++i) yr[i] = (xr[i] - shift) - log_sum;
  }
}

template <BinaryOp kOp>
inline Vec apply(Vec a, Vec b, Vec alpha) {
  if (kOp == BinaryOp::kAdd) return fma(b, alpha, a);
  if (kOp == BinaryOp::kMul) return a * b;
  return a / b;
}

template <BinaryOp kOp>
void binary_impl(const float* a, int64_t as, const float* b, int64_t bs, float alpha, float* y,
                 int64_t n) {
  const Vec va = set1(alpha);
  int64_t i = 0;
  if (as == 1 && bs == 1) {
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<kOp>(load(a + i), load(b + i), va));
  } else if (as == 1 && bs == 0) {
    const Vec vb = set1(*b);
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<kOp>(load(a + i), vb, va));
  } else if (as == 0 && bs == 1) {
    const Vec vaa = set1(*a);
    for (; i + kLanes <= n; i += kLanes) store(y + i, apply<kOp>(vaa, load(b + i), va));
  }
  for (; i < n; ++i) {  // other steps (strided inputs) and the tail
    const float x = a[i * as], z = b[i * bs];
    y[i] = kOp == BinaryOp::kAdd ? x + alpha * z : kOp == BinaryOp::kMul ? x * z : x / z;
  }
}

// n complex values (float pairs); steps in floats.
void complex_mul_row(const float* a, int64_t as, const float* b, int64_t bs, float* y, int64_t n) {
  int64_t i = 0;
#if !PTERON_VEC_SCALAR
  constexpr int64_t kPairs = kLanes / 2;
  if ((as == 2 || as == 0) && (bs == 2 || bs == 0)) {
    const Vec a0 = complex_set1(a), b0 = complex_set1(b);
    for (; i + kPairs <= n; i += kPairs) {
      const Vec va = as == 0 ? a0 : load(a + 2 * i), vb = bs == 0 ? b0 : load(b + 2 * i);
      store(y + 2 * i, complex_mul(va, vb));
    }
  }
#endif
  for (; i < n; ++i) {  // other steps and the tail
    const float ar = a[i * as], ai = a[i * as + 1], br = b[i * bs], bi = b[i * bs + 1];
    y[2 * i] = ar * br - ai * bi;
    y[2 * i + 1] = ai * br + ar * bi;
  }
}

void binary(BinaryOp op, const float* a, int64_t as, const float* b, int64_t bs, float alpha,
            float* y, int64_t n) {
  switch (op) {
    case BinaryOp::kComplexMul:
      return complex_mul_row(a, as, b, bs, y, n);
    case BinaryOp::kAdd:
      return binary_impl<BinaryOp::kAdd>(a, as, b, bs, alpha, y, n);
    case BinaryOp::kMul:
      return binary_impl<BinaryOp::kMul>(a, as, b, bs, alpha, y, n);
    case BinaryOp::kDiv:
      return binary_impl<BinaryOp::kDiv>(a, as, b, bs, alpha, y, n);
  }
}

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

#include "kernels/optimized/simd/transpose_impl.h"
#include "kernels/optimized/simd/winograd_impl.h"

// Outputs [i, i + kLanes) of a depthwise row; 3x3 kernels with their nine weights in registers.
template <bool k3x3>
inline Vec depthwise_lanes(const DepthwiseRowArgs& r, const Vec* w9, int64_t i) {
  Vec acc = set1(r.bias);
  if (k3x3) {
    const float* r0 = r.rows + i;
    const float* r1 = r0 + r.row_step;
    const float* r2 = r1 + r.row_step;
    const int64_t o0 = r.off[0], o1 = r.off[1], o2 = r.off[2];
    acc = fma(w9[0], load(r0 + o0), acc);
    acc = fma(w9[1], load(r0 + o1), acc);
    acc = fma(w9[2], load(r0 + o2), acc);
    acc = fma(w9[3], load(r1 + o0), acc);
    acc = fma(w9[4], load(r1 + o1), acc);
    acc = fma(w9[5], load(r1 + o2), acc);
    acc = fma(w9[6], load(r2 + o0), acc);
    acc = fma(w9[7], load(r2 + o1), acc);
    acc = fma(w9[8], load(r2 + o2), acc);
    return acc;
  }
  for (int64_t kh = 0; kh < r.kernel_h; ++kh) {
    const float* row = r.rows + kh * r.row_step + i;
    for (int64_t kw = 0; kw < r.kernel_w; ++kw)
      acc = fma(set1(r.w[kh * r.kernel_w + kw]), load(row + r.off[kw]), acc);
  }
  return acc;
}

template <bool k3x3>
void depthwise_row_impl(const DepthwiseRowArgs& args, float lo, float hi) {
  Vec w9[9];
  if (k3x3)
    for (int k = 0; k < 9; ++k) w9[k] = set1(args.w[k]);
  const Vec vlo = set1(lo), vhi = set1(hi);
  DepthwiseRowArgs r = args;
  for (int64_t row = 0; row < args.count; ++row, r.rows += args.in_step, r.y += args.n) {
    int64_t i = 0;
    for (; i + kLanes <= r.n; i += kLanes)
      store(r.y + i, clamp_lanes(depthwise_lanes<k3x3>(r, w9, i), vlo, vhi));
    if (i < r.n) {
      // The last outputs as one more vector: its loads may run past the row's last tap, which
      // the rows' slack allows (kDepthwiseRowSlack >= kLanes); only outputs that exist are
      // stored.
      static_assert(kLanes <= kDepthwiseRowSlack, "the padded rows' slack must cover a vector");
      float last[kLanes];
      store(last, clamp_lanes(depthwise_lanes<k3x3>(r, w9, i), vlo, vhi));
      for (int64_t j = 0; i + j < r.n; ++j) r.y[i + j] = last[j];
    }
  }
}

void depthwise_row(const DepthwiseRowArgs& r, float lo, float hi) {
  if (r.kernel_h == 3 && r.kernel_w == 3) return depthwise_row_impl<true>(r, lo, hi);
  depthwise_row_impl<false>(r, lo, hi);
}

// P consecutive outputs of one row of a channel block: each weight vector is loaded once for
// the P pixels it multiplies.
constexpr int kBlockVecs = static_cast<int>(kDepthwiseBlock) / kLanes;
static_assert(kBlockVecs * kLanes == kDepthwiseBlock, "a channel block is whole vectors");

template <int P>
inline void depthwise_block_pixels(const DepthwiseBlockArgs& a, const float* x0, float* y, Vec vlo,
                                   Vec vhi) {
  constexpr int64_t B = kDepthwiseBlock;
  const int64_t pixel_step = a.stride_w * B;
  Vec acc[P][kBlockVecs];
  for (int v = 0; v < kBlockVecs; ++v) {
    const Vec b = load(a.bias + v * kLanes);
    for (int p = 0; p < P; ++p) acc[p][v] = b;
  }
  const float* w = a.w;
  for (int64_t kh = 0; kh < a.kernel_h; ++kh) {
    const float* row = x0 + kh * a.dilation_h * a.tile_w * B;
    for (int64_t kw = 0; kw < a.kernel_w; ++kw, w += B) {
      const float* x = row + kw * a.dilation_w * B;
      for (int v = 0; v < kBlockVecs; ++v) {
        const Vec wv = load(w + v * kLanes);
        for (int p = 0; p < P; ++p)
          acc[p][v] = fma(wv, load(x + p * pixel_step + v * kLanes), acc[p][v]);
      }
    }
  }
  for (int p = 0; p < P; ++p)
    for (int v = 0; v < kBlockVecs; ++v)
      store(y + p * B + v * kLanes, clamp_lanes(acc[p][v], vlo, vhi));
}

void depthwise_block(const DepthwiseBlockArgs& a, float lo, float hi) {
  constexpr int64_t B = kDepthwiseBlock;
  // Four pixels at a time keep 4 * kBlockVecs accumulators in registers (16 on NEON and AVX2).
  constexpr int kPixels = 4;
  const Vec vlo = set1(lo), vhi = set1(hi);
  for (int64_t oh = 0; oh < a.out_h; ++oh) {
    const float* row = a.tile + oh * a.stride_h * a.tile_w * B;
    float* y = a.y + oh * a.out_w * B;
    int64_t ow = 0;
    for (; ow + kPixels <= a.out_w; ow += kPixels)
      depthwise_block_pixels<kPixels>(a, row + ow * a.stride_w * B, y + ow * B, vlo, vhi);
    for (; ow < a.out_w; ++ow)
      depthwise_block_pixels<1>(a, row + ow * a.stride_w * B, y + ow * B, vlo, vhi);
  }
}

// sin or cos: lanes beyond vsin_cos's range (and infinities, NaN) from the C library.
void trig_rows(const float* x, float* y, int64_t n, bool cosine) {
  map_lanes(x, y, n, [cosine](Vec v) {
    const Vec r = vsin_cos(v, cosine);
    if (reduce_max(select_nan(v, set1(__builtin_inff()), vabs(v))) <= kTrigMax) return r;
    float in[kLanes], out[kLanes];
    store(in, v);
    store(out, r);
    for (int i = 0; i < kLanes; ++i) {
      if (!(__builtin_fabsf(in[i]) <= kTrigMax))
        out[i] = cosine ? __builtin_cosf(in[i]) : __builtin_sinf(in[i]);
    }
    return load(out);
  });
}

void unary_math(UnaryMath op, const float* x, float* y, int64_t n, const float* p) {
  switch (op) {
    case UnaryMath::kExp:
      return map_lanes(x, y, n, [](Vec v) { return vexp_full(v); });
    case UnaryMath::kExpm1:
      return map_lanes(x, y, n, [](Vec v) { return vexpm1(v); });
    case UnaryMath::kLog:
      return map_lanes(x, y, n, [](Vec v) { return vlog(v); });
    case UnaryMath::kLog1p:
      return map_lanes(x, y, n, [](Vec v) { return vlog1p(v); });
    case UnaryMath::kSin:
      return trig_rows(x, y, n, false);
    case UnaryMath::kCos:
      return trig_rows(x, y, n, true);
    case UnaryMath::kSqrt:
      return map_lanes(x, y, n, [](Vec v) { return vsqrt(v); });
    case UnaryMath::kRsqrt:
      return map_lanes(x, y, n, [](Vec v) { return set1(1.0f) / vsqrt(v); });
    case UnaryMath::kLeakyRelu: {
      const Vec slope = set1(p[0]);
      return map_lanes(x, y, n, [slope](Vec v) { return select_gt(v, set1(0.0f), v, v * slope); });
    }
    case UnaryMath::kElu: {
      const Vec alpha_scale = set1(p[0]), scale = set1(p[1]), input_scale = set1(p[2]);
      return map_lanes(x, y, n, [=](Vec v) {
        return select_gt(v, set1(0.0f), v * scale, vexpm1(v * input_scale) * alpha_scale);
      });
    }
    case UnaryMath::kErf:
      return map_lanes(x, y, n, [](Vec v) { return verf(v); });
    case UnaryMath::kFloor:
      return map_lanes(x, y, n, [](Vec v) { return vfloor(v); });
    case UnaryMath::kCeil:
      return map_lanes(x, y, n, [](Vec v) { return vceil(v); });
    case UnaryMath::kTrunc:
      return map_lanes(x, y, n, [](Vec v) { return vtrunc(v); });
    case UnaryMath::kRound:
      return map_lanes(x, y, n, [](Vec v) { return round_nearest(v); });
  }
}

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

template <bool kBroadcastA, bool kBroadcastB>
void select_impl(const uint8_t* c, const float* a, const float* b, float* y, int64_t n) {
  const Vec a0 = set1(*a), b0 = set1(*b);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    store(y + i,
          select_bytes(c + i, kBroadcastA ? a0 : load(a + i), kBroadcastB ? b0 : load(b + i)));
  }
  for (; i < n; ++i) y[i] = c[i] != 0 ? (kBroadcastA ? *a : a[i]) : (kBroadcastB ? *b : b[i]);
}

void select(const uint8_t* c, const float* a, int64_t a_step, const float* b, int64_t b_step,
            float* y, int64_t n) {
  if (a_step == 1 && b_step == 1) return select_impl<false, false>(c, a, b, y, n);
  if (a_step == 0 && b_step == 1) return select_impl<true, false>(c, a, b, y, n);
  if (a_step == 1 && b_step == 0) return select_impl<false, true>(c, a, b, y, n);
  return select_impl<true, true>(c, a, b, y, n);
}

}  // namespace

extern const IsaKernels kTable;
const IsaKernels kTable = {PTERON_ISA_NAME,
                           layer_norm,
                           rms_norm,
                           gelu,
                           relu,
                           clamp,
                           sigmoid,
                           tanh_rows,
                           silu_mul,
                           hard_activation,
                           softmax,
                           binary,
                           attention,
                           winograd_input,
                           winograd_output,
                           transpose,
                           depthwise_row,
                           depthwise_block,
                           unary_math,
                           reduce_rows,
                           reduce_columns,
                           skinny_linear,
                           blocked_sum,
                           normalize,
                           arg_extreme_rows,
                           arg_extreme_columns,
                           select};

}  // namespace pteron::opt::PTERON_ISA
