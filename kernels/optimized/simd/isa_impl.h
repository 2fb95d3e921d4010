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

#include "kernels/optimized/simd/attention_impl.h"
#include "kernels/optimized/simd/depthwise_impl.h"
#include "kernels/optimized/simd/transpose_impl.h"
#include "kernels/optimized/simd/winograd_impl.h"

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

#include "kernels/optimized/simd/reduce_impl.h"
#include "kernels/optimized/simd/skinny_linear_impl.h"

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
