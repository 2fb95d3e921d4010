// Every instruction-set table this CPU supports (kernels/optimized/simd/isa_kernels.h) against
// a double-precision reference, on lengths around each vector width. Needs no runtime, so cross
// builds run it under emulation for the NEON table. Tolerances: elementwise 1e-6 relative;
// exp-based (softmax, gelu, attention) 2e-6 absolute on values of order 1 (log-softmax 1e-5);
// layer norm 1e-4 on normalised values.
#include "kernels/optimized/simd/isa_kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tests/kernels/optimized/attention_reference.h"

namespace pteron {
namespace {

using opt::BinaryOp;
using opt::IsaKernels;

std::vector<const IsaKernels*> tables() {
  const IsaKernels* t[8];
  const int n = opt::supported_isa_kernels(t, 8);
  return std::vector<const IsaKernels*>(t, t + n);
}

const int64_t kLengths[] = {0, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 129, 1000};

TEST(IsaKernels, BestTableComesFirstAndBaseIsAlwaysThere) {
  const auto t = tables();
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(&opt::isa_kernels(), t.front());
  const std::string base = t.back()->name;
  EXPECT_TRUE(base == "scalar" || base == "neon") << base;
}

TEST(IsaKernels, GeluBothFormsMatchReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      std::vector<float> x = random_floats(n, 1, 6.0f), y(x.size());
      for (bool tanh_form : {false, true}) {
        k->gelu(x.data(), y.data(), n, tanh_form);
        for (int64_t i = 0; i < n; ++i) {
          const double v = x[i];
          const double ref =
              tanh_form ? 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                        : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
          ASSERT_NEAR(y[i], ref, 2e-6) << k->name << " tanh=" << tanh_form << " x=" << v;
        }
      }
    }
  }
}

TEST(IsaKernels, SigmoidAndSiluMulMatchReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      std::vector<float> x = random_floats(n, 11, 12.0f), u = random_floats(n, 12), y(x.size());
      k->sigmoid(x.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(y[i], 1.0 / (1.0 + std::exp(-double(x[i]))), 1e-6) << k->name << " n=" << n;
      for (bool gated : {false, true}) {
        k->silu_mul(x.data(), gated ? u.data() : nullptr, y.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const double v = x[i], silu = v / (1.0 + std::exp(-v));
          const double ref = gated ? silu * u[i] : silu;
          ASSERT_NEAR(y[i], ref, 2e-6 * (1 + std::fabs(ref))) << k->name << " n=" << n;
        }
      }
    }
    // Saturation and NaN: sigmoid(+-100) is 1 and 0, NaN stays NaN.
    float x[3] = {100.0f, -100.0f, NAN}, y[3];
    k->sigmoid(x, y, 3);
    EXPECT_EQ(y[0], 1.0f) << k->name;
    EXPECT_EQ(y[1], 0.0f) << k->name;
    EXPECT_TRUE(std::isnan(y[2])) << k->name;
  }
}

// relu6(x + 3) / 6 (times x for hardswish) over values past both knees, in place and not;
// NaN stays NaN, infinities as torch (hardswish(-inf) = -inf * 0 = NaN).
TEST(IsaKernels, HardActivationsMatchReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      const std::vector<float> x = random_floats(n, 15, 8.0f);
      for (bool swish : {false, true}) {
        std::vector<float> y(x.size()), in_place = x;
        k->hard_activation(x.data(), y.data(), n, swish);
        k->hard_activation(in_place.data(), in_place.data(), n, swish);
        for (int64_t i = 0; i < n; ++i) {
          const double gate = std::min(std::max(double(x[i]) + 3.0, 0.0), 6.0) / 6.0;
          const double ref = swish ? x[i] * gate : gate;
          ASSERT_NEAR(y[i], ref, 1e-6 * (1 + std::fabs(ref))) << k->name << " n=" << n;
          ASSERT_EQ(in_place[i], y[i]) << k->name << " n=" << n;
        }
      }
    }
    float x[4] = {NAN, INFINITY, -INFINITY, -3.0f}, y[4];
    k->hard_activation(x, y, 4, true);
    EXPECT_TRUE(std::isnan(y[0]) && y[1] == INFINITY && std::isnan(y[2]) && y[3] == 0.0f)
        << k->name;
    k->hard_activation(x, y, 4, false);
    EXPECT_TRUE(std::isnan(y[0]) && y[1] == 1.0f && y[2] == 0.0f && y[3] == 0.0f) << k->name;
  }
}

TEST(IsaKernels, RmsNormMatchesReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t D : kLengths) {
      if (D == 0) continue;
      const int64_t rows = 3;
      std::vector<float> x = random_floats(rows * D, 13, 4.0f), w = random_floats(D, 14),
                         y(x.size());
      for (bool weighted : {false, true}) {
        k->rms_norm(x.data(), weighted ? w.data() : nullptr, 1e-6f, rows, D, y.data());
        for (int64_t r = 0; r < rows; ++r) {
          double ss = 0;
          for (int64_t i = 0; i < D; ++i) ss += double(x[r * D + i]) * x[r * D + i];
          const double inv = 1.0 / std::sqrt(ss / D + 1e-6);
          for (int64_t i = 0; i < D; ++i) {
            const double ref = x[r * D + i] * inv * (weighted ? w[i] : 1.0);
            ASSERT_NEAR(y[r * D + i], ref, 1e-5 * (1 + std::fabs(ref))) << k->name << " D=" << D;
          }
        }
      }
    }
  }
}

TEST(IsaKernels, ReluKeepsNaN) {
  for (const IsaKernels* k : tables()) {
    std::vector<float> x = random_floats(37, 2), y(37);
    x[36] = NAN;
    k->relu(x.data(), y.data(), 37);
    for (int i = 0; i < 36; ++i) ASSERT_EQ(y[i], x[i] > 0 ? x[i] : 0.0f) << k->name;
    EXPECT_TRUE(std::isnan(y[36])) << k->name;
  }
}

// One depthwise output row over padded rows laid out as the portable walk lays them out: 3x3
// (the register path) and 5x3 (the general one), stride phases via `off`, every row length
// around the vector widths, a clamp and none. The rows hold kDepthwiseRowSlack floats past the
// last tap, as the walk's buffer does; nothing past y[n) may be written.
TEST(IsaKernels, DepthwiseRowMatchesReferenceAndClamps) {
  const float inf = INFINITY;
  struct Geometry {
    int64_t kh, kw;
    int64_t off[3];
  };
  const Geometry geometries[] = {{3, 3, {0, 1, 2}}, {3, 3, {0, 40, 1}}, {5, 3, {0, 2, 4}}};
  for (const IsaKernels* k : tables()) {
    for (const Geometry& g : geometries) {
      for (int64_t n : kLengths) {
        const int64_t row_step = n + 45;
        std::vector<float> rows = random_floats(g.kh * row_step + kDepthwiseRowSlack, 31, 2.0f);
        const std::vector<float> w = random_floats(g.kh * g.kw, 32, 1.0f);
        if (n > 2) rows[row_step + g.off[1] + n / 2] = NAN;  // output n/2 reads it
        for (const auto [lo, hi] : {std::pair{-inf, inf}, std::pair{0.0f, 0.5f}}) {
          std::vector<float> y(n + 1, 7.0f);
          DepthwiseRowArgs args{rows.data(), row_step, g.off,    g.kh, g.kw,
                                w.data(),    0.25f,    y.data(), n};
          k->depthwise_row(args, lo, hi);
          for (int64_t i = 0; i < n; ++i) {
            double ref = 0.25;
            for (int64_t a = 0; a < g.kh; ++a)
              for (int64_t b = 0; b < g.kw; ++b)
                ref += double{w[a * g.kw + b]} * rows[a * row_step + g.off[b] + i];
            if (std::isnan(ref)) {
              ASSERT_TRUE(std::isnan(y[i])) << k->name << " n=" << n << " i=" << i;
              continue;
            }
            ref = std::min<double>(hi, std::max<double>(lo, ref));
            ASSERT_NEAR(y[i], ref, 1e-5 * (1 + std::fabs(ref)))
                << k->name << " " << g.kh << "x" << g.kw << " n=" << n << " i=" << i;
          }
          ASSERT_EQ(y[n], 7.0f) << k->name << ": wrote past the row, n=" << n;
        }
      }
    }
  }
}

// A channel block's outputs (16 channels per pixel) over a zero-padded tile: 3x3 and 5x3
// kernels, stride 2 and dilation 2, widths around the four-pixel step, a clamp and none, a NaN
// input reaching only the outputs that read it. Nothing past the outputs may be written.
TEST(IsaKernels, DepthwiseBlockMatchesReferenceAndClamps) {
  constexpr int64_t B = opt::kDepthwiseBlock;
  const float inf = INFINITY;
  struct Geometry {
    int64_t kh, kw, stride, dilation;
  };
  const Geometry geometries[] = {{3, 3, 1, 1}, {5, 3, 2, 1}, {3, 3, 1, 2}};
  for (const IsaKernels* k : tables()) {
    for (const Geometry& g : geometries) {
      for (int64_t out_w : {1, 3, 4, 5, 9}) {
        const int64_t out_h = 2;
        const int64_t tile_w = (out_w - 1) * g.stride + (g.kw - 1) * g.dilation + 1;
        const int64_t tile_h = (out_h - 1) * g.stride + (g.kh - 1) * g.dilation + 1;
        std::vector<float> tile = random_floats(tile_h * tile_w * B, 41, 2.0f);
        const std::vector<float> w = random_floats(g.kh * g.kw * B, 42, 1.0f);
        const std::vector<float> bias = random_floats(B, 43, 1.0f);
        tile[3] = NAN;  // pixel (0, 0), channel 3: read by output (0, 0) only
        for (const auto [lo, hi] : {std::pair{-inf, inf}, std::pair{0.0f, 0.5f}}) {
          std::vector<float> y(out_h * out_w * B + 1, 7.0f);
          const opt::DepthwiseBlockArgs args{
              tile.data(), tile_w,     w.data(),   bias.data(), g.kh,  g.kw, g.stride,
              g.stride,    g.dilation, g.dilation, y.data(),    out_h, out_w};
          k->depthwise_block(args, lo, hi);
          for (int64_t oh = 0; oh < out_h; ++oh) {
            for (int64_t ow = 0; ow < out_w; ++ow) {
              for (int64_t c = 0; c < B; ++c) {
                double ref = bias[c];
                for (int64_t a = 0; a < g.kh; ++a) {
                  for (int64_t b = 0; b < g.kw; ++b) {
                    const int64_t ih = oh * g.stride + a * g.dilation;
                    const int64_t iw = ow * g.stride + b * g.dilation;
                    ref += double{w[(a * g.kw + b) * B + c]} * tile[(ih * tile_w + iw) * B + c];
                  }
                }
                const float got = y[(oh * out_w + ow) * B + c];
                if (std::isnan(ref)) {
                  ASSERT_TRUE(std::isnan(got)) << k->name << " out_w=" << out_w;
                  continue;
                }
                ref = std::min<double>(hi, std::max<double>(lo, ref));
                ASSERT_NEAR(got, ref, 1e-5 * (1 + std::fabs(ref)))
                    << k->name << " " << g.kh << "x" << g.kw << " out_w=" << out_w << " (" << oh
                    << ", " << ow << ") c=" << c;
              }
            }
          }
          ASSERT_EQ(y[out_h * out_w * B], 7.0f) << k->name << ": wrote past the outputs";
        }
      }
    }
  }
}

TEST(IsaKernels, SoftmaxAndLogSoftmaxMatchReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      if (n == 0) continue;
      const int64_t rows = 3;
      std::vector<float> x = random_floats(rows * n, 3, 10.0f), y(x.size());
      if (n > 2) x[1] = -INFINITY;  // a masked entry
      for (bool log : {false, true}) {
        k->softmax(x.data(), y.data(), rows, n, log);
        for (int64_t r = 0; r < rows; ++r) {
          double m = -INFINITY, sum = 0;
          for (int64_t i = 0; i < n; ++i) m = std::max(m, double(x[r * n + i]));
          for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - m);
          for (int64_t i = 0; i < n; ++i) {
            const double xi = x[r * n + i];
            const double ref = log ? xi - m - std::log(sum) : std::exp(xi - m) / sum;
            if (std::isinf(ref)) {
              ASSERT_EQ(y[r * n + i], ref) << k->name;
            } else {
              ASSERT_NEAR(y[r * n + i], ref, log ? 1e-5 : 2e-6) << k->name << " n=" << n;
            }
          }
        }
      }
    }
  }
}

TEST(IsaKernels, SoftmaxRowWithNaNIsNaN) {
  for (const IsaKernels* k : tables()) {
    std::vector<float> x = random_floats(20, 4), y(20);
    x[5] = NAN;
    k->softmax(x.data(), y.data(), 1, 20, false);
    for (float v : y) ASSERT_TRUE(std::isnan(v)) << k->name;
  }
}

TEST(IsaKernels, LayerNormMatchesReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t D : kLengths) {
      if (D == 0) continue;
      const int64_t rows = 2;
      std::vector<float> x = random_floats(rows * D, 5, 3.0f), w = random_floats(D, 6),
                         b = random_floats(D, 7), y(x.size()), mean(rows), rstd(rows);
      for (float& v : x) v += 5.0f;  // a row mean far from zero
      for (bool affine : {false, true}) {
        k->layer_norm(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr, 1e-5f,
                      rows, D, y.data(), mean.data(), rstd.data());
        for (int64_t r = 0; r < rows; ++r) {
          double m = 0, var = 0;
          for (int64_t i = 0; i < D; ++i) m += x[r * D + i];
          m /= D;
          for (int64_t i = 0; i < D; ++i) var += (x[r * D + i] - m) * (x[r * D + i] - m);
          const double s = 1 / std::sqrt(var / D + 1e-5);
          ASSERT_NEAR(mean[r], m, 1e-5 * (1 + std::fabs(m))) << k->name;
          ASSERT_NEAR(rstd[r], s, 1e-4 * s) << k->name;
          for (int64_t i = 0; i < D; ++i) {
            double ref = (x[r * D + i] - m) * s;
            if (affine) ref = ref * w[i] + b[i];
            ASSERT_NEAR(y[r * D + i], ref, 1e-4) << k->name << " D=" << D;
          }
        }
      }
    }
  }
}

TEST(IsaKernels, BinaryOpsEveryStepCombination) {
  const BinaryOp ops[] = {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kDiv};
  const int64_t steps[][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 0}, {3, 1}, {1, 2}};
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      std::vector<float> a = random_floats(3 * n + 1, 8), b = random_floats(3 * n + 1, 9);
      for (float& v : b) v = std::fabs(v) + 0.5f;
      std::vector<float> y(static_cast<size_t>(n) + 1);
      for (BinaryOp op : ops) {
        for (const auto& st : steps) {
          k->binary(op, a.data(), st[0], b.data(), st[1], -0.75f, y.data(), n);
          for (int64_t i = 0; i < n; ++i) {
            const float x = a[i * st[0]], z = b[i * st[1]];
            const float ref = op == BinaryOp::kAdd   ? x + -0.75f * z
                              : op == BinaryOp::kMul ? x * z
                                                     : x / z;
            ASSERT_NEAR(y[i], ref, 1e-6 * (1 + std::fabs(ref)))
                << k->name << " op " << int(op) << " steps " << st[0] << "," << st[1];
          }
        }
      }
    }
  }
}

// Transposes: exact, sizes around each block width. Winograd F(4x4, 3x3) tile transforms:
// B^T d B and A^T m A (+ bias, ReLU) against double sums, channel counts around the vector
// widths; 1e-5 relative to the largest magnitude (constants up to 8 and sums of 36 terms).
TEST(IsaKernels, TransposeAndWinogradTransformsMatchReference) {
  static const double BT[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
                                  {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static const double AT[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const IsaKernels* k : tables()) {
    for (int64_t rows : {1, 4, 7, 8, 9, 17}) {
      for (int64_t cols : {1, 3, 8, 12, 16, 19}) {
        std::vector<float> src(rows * (cols + 2)), dst(cols * (rows + 3), -1.0f);
        for (float& x : src) x = dist(rng);
        k->transpose(src.data(), cols + 2, dst.data(), rows + 3, rows, cols);
        for (int64_t i = 0; i < rows; ++i) {
          for (int64_t j = 0; j < cols; ++j) {
            ASSERT_EQ(dst[j * (rows + 3) + i], src[i * (cols + 2) + j])
                << k->name << " " << rows << "x" << cols;
          }
        }
      }
    }
    for (int64_t n : {1, 3, 4, 8, 15, 16, 17, 33}) {
      std::vector<float> d(36 * n), v(36 * n), bias(n), y(16 * n);
      for (float& x : d) x = dist(rng);
      for (float& x : bias) x = dist(rng);
      k->winograd_input(d.data(), 6 * n, n, v.data(), n, n);  // d[i][j][c]
      double worst = 0.0;
      for (int64_t c = 0; c < n; ++c) {
        for (int i = 0; i < 6; ++i) {
          for (int j = 0; j < 6; ++j) {
            double r = 0.0;
            for (int a = 0; a < 6; ++a) {
              for (int b = 0; b < 6; ++b) r += BT[i][a] * d[(a * 6 + b) * n + c] * BT[j][b];
            }
            worst = std::fmax(worst, std::fabs(r - v[(i * 6 + j) * n + c]));
          }
        }
      }
      EXPECT_LE(worst, 1e-5 * 100) << k->name << " input n=" << n;  // |values| <= 100
      for (bool relu : {false, true}) {
        k->winograd_output(d.data(), n, bias.data(), relu, y.data(), 4 * n, n, n);
        worst = 0.0;
        for (int64_t c = 0; c < n; ++c) {
          for (int i = 0; i < 4; ++i) {
            for (int j = 0; j < 4; ++j) {
              double r = bias[c];
              for (int a = 0; a < 6; ++a) {
                for (int b = 0; b < 6; ++b) r += AT[i][a] * d[(a * 6 + b) * n + c] * AT[j][b];
              }
              if (relu && r < 0) r = 0;
              worst = std::fmax(worst, std::fabs(r - y[(i * 4 + j) * n + c]));
            }
          }
        }
        EXPECT_LE(worst, 1e-5 * 150) << k->name << " output n=" << n << " relu " << relu;
      }
    }
  }
}

TEST(IsaKernels, AttentionMatchesReferenceAcrossKeyBlocks) {
  struct Shape {
    int64_t lq, lk, d, dv;
  };
  const Shape shapes[] = {
      {1, 1, 1, 1}, {5, 7, 3, 5}, {16, 16, 16, 16}, {9, 130, 64, 64}, {4, 257, 8, 33}};
  for (const IsaKernels* k : tables()) {
    for (const Shape& sh : shapes) {
      const auto q = random_floats(sh.lq * sh.d, 10, 2.0f),
                 kt = random_floats(sh.d * sh.lk, 11, 2.0f), v = random_floats(sh.lk * sh.dv, 12);
      std::vector<float> fmask(static_cast<size_t>(sh.lq * sh.lk));
      std::vector<uint8_t> bmask_bytes(static_cast<size_t>(sh.lq * sh.lk));
      for (int64_t i = 0; i < sh.lq; ++i) {
        for (int64_t j = 0; j < sh.lk; ++j) {
          const bool future = j > i + sh.lk / 2;  // some keys masked in every row but the first
          fmask[i * sh.lk + j] = future ? -INFINITY : 0.1f * float((i + j) % 5);
          bmask_bytes[i * sh.lk + j] = future;
        }
      }
      const bool* bmask = reinterpret_cast<const bool*>(bmask_bytes.data());
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<float> out(static_cast<size_t>(sh.lq * sh.dv));
        const void* mask = kind == 0   ? nullptr
                           : kind == 1 ? static_cast<const void*>(fmask.data())
                                       : static_cast<const void*>(bmask);
        opt::AttentionSlice s{q.data(), kt.data(), v.data(), out.data(), mask,  kind == 2,
                              sh.d,     sh.lk,     sh.dv,    sh.dv,      sh.lk, 1,
                              sh.d,     sh.dv,     sh.lk,    0.3f};
        k->attention(s, 0, sh.lq);
        const auto ref =
            attention_reference(q, kt, v, kind == 1 ? fmask.data() : nullptr,
                                kind == 2 ? bmask : nullptr, 0.3f, sh.lq, sh.lk, sh.d, sh.dv);
        for (size_t i = 0; i < out.size(); ++i) {
          ASSERT_NEAR(out[i], ref[i], 2e-6 * (1 + std::fabs(ref[i])))
              << k->name << " mask kind " << kind << " lk " << sh.lk << " at " << i;
        }
      }
    }
  }
}

// Keys as rows ([Lk, D], a KV cache read in place) and a slice holding two heads' query rows
// (grouped-query attention) with a per-head float mask: each head against the reference.
TEST(IsaKernels, AttentionOverKeyRowsAndSeveralHeads) {
  struct Shape {
    int64_t lq, lk, d, dv;
  };
  const Shape shapes[] = {{1, 1, 1, 1}, {1, 200, 64, 64}, {3, 37, 16, 8}, {9, 130, 65, 33}};
  for (const IsaKernels* k : tables()) {
    for (const Shape& sh : shapes) {
      const int64_t heads = 2, rows = heads * sh.lq;
      const auto q = random_floats(rows * sh.d, 20, 2.0f),
                 kt = random_floats(sh.d * sh.lk, 21, 2.0f), v = random_floats(sh.lk * sh.dv, 22);
      std::vector<float> krows(static_cast<size_t>(sh.lk * sh.d));
      for (int64_t j = 0; j < sh.lk; ++j)
        for (int64_t c = 0; c < sh.d; ++c) krows[j * sh.d + c] = kt[c * sh.lk + j];
      std::vector<float> mask(static_cast<size_t>(heads * sh.lq * sh.lk));
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < sh.lq; ++i)
          for (int64_t j = 0; j < sh.lk; ++j)  // causal from a head-dependent start
            mask[(h * sh.lq + i) * sh.lk + j] =
                j > 0 && j > sh.lk / 2 + i - h ? -INFINITY : 0.05f * float((i + j + h) % 3);
      std::vector<float> out(static_cast<size_t>(rows * sh.dv));
      opt::AttentionSlice s{q.data(), krows.data(), v.data(), out.data(), mask.data(), false, sh.d,
                            1,        sh.dv,        sh.dv,    sh.lk,      1,           sh.d,  sh.dv,
                            sh.lk,    0.3f};
      s.kt_col = sh.d;
      s.head_rows = sh.lq;
      s.mask_head = sh.lq * sh.lk;
      k->attention(s, 0, rows);
      for (int64_t h = 0; h < heads; ++h) {
        const std::vector<float> qh(q.begin() + h * sh.lq * sh.d,
                                    q.begin() + (h + 1) * sh.lq * sh.d);
        const auto ref = attention_reference(qh, kt, v, mask.data() + h * sh.lq * sh.lk, nullptr,
                                             0.3f, sh.lq, sh.lk, sh.d, sh.dv);
        for (size_t i = 0; i < ref.size(); ++i) {
          ASSERT_NEAR(out[h * sh.lq * sh.dv + i], ref[i], 2e-6 * (1 + std::fabs(ref[i])))
              << k->name << " head " << h << " lk " << sh.lk << " at " << i;
        }
      }
    }
  }
}

// Distance in float ulps between a float result and the exact (double) value.
double ulps(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : 1e9;
  const float w = static_cast<float>(want);  // beyond float's range: the infinity it rounds to
  if (std::isinf(w)) return got == w ? 0 : 1e9;
  const double ulp = std::max(double(std::nextafter(std::fabs(w), INFINITY)) - std::fabs(w),
                              double(std::numeric_limits<float>::denorm_min()));
  return std::fabs(double(got) - want) / ulp;
}

// Inputs for one function: a dense grid over `lo..hi`, magnitudes on a log scale down to
// denormals, and the special values.
std::vector<float> math_inputs(float lo, float hi) {
  std::vector<float> x;
  for (int i = 0; i <= 20000; ++i) x.push_back(lo + (hi - lo) * float(i) / 20000);
  for (float m = 1e-44f; m < 1e30f; m *= 1.37f) {
    x.push_back(m);
    x.push_back(-m);
  }
  for (float v : {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f}) x.push_back(v);
  return x;
}

TEST(IsaKernels, UnaryMathIsWithinAFewUlpOfTheCLibrary) {
  using opt::UnaryMath;
  struct Case {
    UnaryMath op;
    const char* name;
    double (*ref)(double);
    float lo, hi;
    double max_ulp;
  };
  const Case cases[] = {
      {UnaryMath::kExp, "exp", [](double v) { return std::exp(v); }, -110, 90, 3},
      {UnaryMath::kExpm1, "expm1", [](double v) { return std::expm1(v); }, -20, 20, 4},
      {UnaryMath::kLog, "log", [](double v) { return std::log(v); }, 0, 100, 3},
      {UnaryMath::kLog1p, "log1p", [](double v) { return std::log1p(v); }, -1, 10, 4},
      {UnaryMath::kSin, "sin", [](double v) { return std::sin(v); }, -9000, 9000, 3},
      {UnaryMath::kCos, "cos", [](double v) { return std::cos(v); }, -9000, 9000, 3},
      {UnaryMath::kSqrt, "sqrt", [](double v) { return std::sqrt(v); }, 0, 100, 0.5},
      {UnaryMath::kRsqrt, "rsqrt", [](double v) { return 1 / std::sqrt(v); }, 0, 100, 1.5},
      {UnaryMath::kErf, "erf", [](double v) { return std::erf(v); }, -6, 6, 3},
  };
  for (const IsaKernels* k : tables()) {
    for (const Case& c : cases) {
      std::vector<float> x = math_inputs(c.lo, c.hi), y(x.size());
      // Every length's tail too: the last partial vector runs the same function.
      for (int64_t n : {int64_t(x.size()), int64_t(5)}) {
        k->unary_math(c.op, x.data(), y.data(), n, nullptr);
        for (int64_t i = 0; i < n; ++i) {
          const double want = c.ref(double(x[i]));
          ASSERT_LE(ulps(y[i], want), c.max_ulp)
              << k->name << " " << c.name << "(" << x[i] << ") = " << y[i] << ", want " << want;
        }
      }
    }
    // Sign of zero: sin(-0) = -0, expm1(-0) = -0, log1p(-0) = -0, erf(-0) = -0.
    for (UnaryMath op : {UnaryMath::kSin, UnaryMath::kExpm1, UnaryMath::kLog1p, UnaryMath::kErf}) {
      float z = -0.0f, r = 1.0f;
      k->unary_math(op, &z, &r, 1, nullptr);
      EXPECT_TRUE(r == 0.0f && std::signbit(r)) << k->name << " op " << int(op);
    }
  }
}

TEST(IsaKernels, RoundingIsTheCLibrarysBitForBit) {
  using opt::UnaryMath;
  struct Case {
    UnaryMath op;
    const char* name;
    float (*ref)(float);
  };
  const Case cases[] = {
      {UnaryMath::kFloor, "floor", [](float v) { return std::floor(v); }},
      {UnaryMath::kCeil, "ceil", [](float v) { return std::ceil(v); }},
      {UnaryMath::kTrunc, "trunc", [](float v) { return std::trunc(v); }},
      {UnaryMath::kRound, "round", [](float v) { return std::nearbyint(v); }},  // ties to even
  };
  std::vector<float> x = math_inputs(-20, 20);
  for (float v : {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 8388607.5f, 16777217.0f, -0.3f, 0.49999997f})
    x.push_back(v);
  std::vector<float> y(x.size());
  for (const IsaKernels* k : tables()) {
    for (const Case& c : cases) {
      k->unary_math(c.op, x.data(), y.data(), int64_t(x.size()), nullptr);
      for (size_t i = 0; i < x.size(); ++i) {
        const float want = c.ref(x[i]);
        ASSERT_TRUE(std::memcmp(&y[i], &want, 4) == 0 || (std::isnan(want) && std::isnan(y[i])))
            << k->name << " " << c.name << "(" << x[i] << ") = " << y[i] << ", want " << want;
      }
    }
  }
}

TEST(IsaKernels, BlockedSumsAndNormalizeMatchDouble) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : {int64_t(1), int64_t(7), int64_t(33), int64_t(1000), int64_t(5000)}) {
      std::vector<float> x = random_floats(n, 41, 3.0f), y(n);
      for (float& v : x) v += 1000.0f;  // far from zero: the center keeps the digits
      double sum = 0, squares = 0;
      for (float v : x) sum += double(v) - 1000.5;
      for (float v : x) squares += (double(v) - 1000.5) * (double(v) - 1000.5);
      EXPECT_NEAR(k->blocked_sum(x.data(), n, 1000.5f, false), sum, 1e-6 * 3 * double(n))
          << k->name << " n " << n;
      EXPECT_NEAR(k->blocked_sum(x.data(), n, 1000.5f, true), squares, 1e-6 * squares)
          << k->name << " n " << n;
      k->normalize(x.data(), y.data(), n, 1000.5f, 1e-5f, 0.5f, -2.0f);
      for (int64_t i = 0; i < n; ++i) {
        const double want = ((double(x[i]) - 1000.5) - 1e-5) * 0.5 - 2.0;
        ASSERT_NEAR(y[i], want, 1e-6 * (std::fabs(want) + 1))
            << k->name << " n " << n << " i " << i;
      }
    }
  }
}

// The reference: the first position of the extreme, NaN counting as the extreme.
template <bool kMax>
int64_t first_extreme(const float* x, int64_t n, int64_t step) {
  int64_t at = 0;
  for (int64_t i = 1; i < n; ++i) {
    const float best = x[at * step], v = x[i * step];
    if (best != best) break;
    if (v != v || (kMax ? v > best : v < best)) at = i;
  }
  return at;
}

TEST(IsaKernels, ArgExtremesKeepTheFirstPositionAndNanWins) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      if (n == 0) continue;
      std::vector<float> x = random_floats(3 * n, 51, 3.0f);
      for (float& v : x) v = std::round(v);  // ties
      if (n > 5) x[n + 4] = NAN;
      std::vector<float> values(3 * n);
      std::vector<int64_t> idx(3 * n);
      for (bool max : {true, false}) {
        k->arg_extreme_rows(max, x.data(), 3, n, values.data(), idx.data());
        for (int64_t o = 0; o < 3; ++o) {
          const int64_t want = max ? first_extreme<true>(x.data() + o * n, n, 1)
                                   : first_extreme<false>(x.data() + o * n, n, 1);
          ASSERT_EQ(idx[o], want) << k->name << " rows n " << n << " row " << o;
          const float v = x[o * n + want];
          ASSERT_TRUE(values[o] == v || (v != v && values[o] != values[o])) << k->name;
        }
        k->arg_extreme_columns(max, x.data(), 3, n, n, values.data(), idx.data());
        for (int64_t j = 0; j < n; ++j) {
          const int64_t want = max ? first_extreme<true>(x.data() + j, 3, n)
                                   : first_extreme<false>(x.data() + j, 3, n);
          ASSERT_EQ(idx[j], want) << k->name << " columns n " << n << " column " << j;
        }
      }
    }
  }
}

TEST(IsaKernels, ComplexProductsMatchTheFormula) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      std::vector<float> a = random_floats(2 * n + 2, 61, 2.0f),
                         b = random_floats(2 * n + 2, 62, 2.0f);
      std::vector<float> y(2 * n + 2);
      for (int64_t a_step : {0, 2}) {
        for (int64_t b_step : {0, 2}) {
          k->binary(opt::BinaryOp::kComplexMul, a.data(), a_step, b.data(), b_step, 1.0f, y.data(),
                    n);
          for (int64_t i = 0; i < n; ++i) {
            const double ar = a[i * a_step], ai = a[i * a_step + 1];
            const double br = b[i * b_step], bi = b[i * b_step + 1];
            const double scale = std::hypot(ar, ai) * std::hypot(br, bi) + 1e-30;
            ASSERT_NEAR(y[2 * i], ar * br - ai * bi, 4e-7 * scale) << k->name << " n " << n;
            ASSERT_NEAR(y[2 * i + 1], ai * br + ar * bi, 4e-7 * scale) << k->name << " n " << n;
          }
        }
      }
    }
  }
}

TEST(IsaKernels, SelectPicksByTheConditionsBytes) {
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      std::vector<float> a = random_floats(n + 1, 31, 1.0f), b = random_floats(n + 1, 32, 1.0f);
      std::vector<uint8_t> c(n + 1);
      for (int64_t i = 0; i < n; ++i) c[i] = uint8_t((i * 7919) % 5 == 0 ? 0 : (i % 3 ? 1 : 255));
      std::vector<float> y(n + 1);
      for (int64_t a_step : {0, 1}) {
        for (int64_t b_step : {0, 1}) {
          k->select(c.data(), a.data(), a_step, b.data(), b_step, y.data(), n);
          for (int64_t i = 0; i < n; ++i) {
            const float want = c[i] != 0 ? a[i * a_step] : b[i * b_step];
            ASSERT_EQ(y[i], want) << k->name << " n " << n << " steps " << a_step << b_step;
          }
        }
      }
    }
  }
}

TEST(IsaKernels, LeakyReluAndEluMatchTorchsForm) {
  using opt::UnaryMath;
  for (const IsaKernels* k : tables()) {
    std::vector<float> x = math_inputs(-30, 30), y(x.size());
    const float slope[1] = {0.1f};
    k->unary_math(UnaryMath::kLeakyRelu, x.data(), y.data(), int64_t(x.size()), slope);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = x[i] > 0 ? x[i] : x[i] * 0.1f;  // torch's, bit for bit
      ASSERT_TRUE(std::memcmp(&y[i], &want, 4) == 0 || (std::isnan(want) && std::isnan(y[i])))
          << k->name << " leaky_relu(" << x[i] << ")";
    }
    const float p[3] = {1.6732632f * 1.0507010f, 1.0507010f, 1.0f};  // SELU's
    k->unary_math(UnaryMath::kElu, x.data(), y.data(), int64_t(x.size()), p);
    for (size_t i = 0; i < x.size(); ++i) {
      const double v = x[i];
      const double want = v > 0 ? v * double(p[1]) : std::expm1(v) * double(p[0]);
      ASSERT_LE(ulps(y[i], want), 5) << k->name << " elu(" << x[i] << ")";
    }
  }
}

TEST(IsaKernels, ReductionsMatchReferenceAndNanWins) {
  using opt::Reduce;
  for (const IsaKernels* k : tables()) {
    for (int64_t n : kLengths) {
      if (n == 0) continue;
      for (int64_t rows : {int64_t(1), int64_t(3)}) {
        std::vector<float> x = random_floats(rows * n + 2000, 21, 3.0f), out(rows * n + 1);
        for (Reduce op : {Reduce::kSum, Reduce::kMax, Reduce::kMin}) {
          k->reduce_rows(op, x.data(), rows, n, out.data());
          for (int64_t o = 0; o < rows; ++o) {
            double sum = 0, abs_sum = 0;
            float mx = x[o * n], mn = x[o * n];
            for (int64_t i = 0; i < n; ++i) {
              const float v = x[o * n + i];
              sum += v;
              abs_sum += std::fabs(v);
              mx = std::max(mx, v);
              mn = std::min(mn, v);
            }
            const double want = op == Reduce::kSum ? sum : op == Reduce::kMax ? mx : mn;
            ASSERT_NEAR(out[o], want, op == Reduce::kSum ? 1e-6 * abs_sum : 0.0)
                << k->name << " rows n=" << n << " op " << int(op);
          }
          // The same values as columns: R = n rows of `rows` columns, stride 2 * rows.
          std::vector<float> cols(n * 2 * rows);
          for (int64_t r = 0; r < n; ++r)
            for (int64_t j = 0; j < rows; ++j) cols[r * 2 * rows + j] = x[j * n + r];
          std::vector<float> by_columns(rows);
          k->reduce_columns(op, cols.data(), n, 2 * rows, rows, by_columns.data());
          for (int64_t j = 0; j < rows; ++j)
            ASSERT_NEAR(by_columns[j], out[j],
                        op == Reduce::kSum ? 1e-5 * (1 + std::fabs(out[j])) : 0.0)
                << k->name << " columns R=" << n << " op " << int(op);
        }
      }
    }
    // NaN anywhere wins, first or last, in rows and in columns.
    std::vector<float> x(100, 1.0f);
    float r = 0;
    for (int64_t at : {int64_t(0), int64_t(37), int64_t(99)}) {
      x.assign(100, 1.0f);
      x[at] = NAN;
      for (Reduce op : {Reduce::kMax, Reduce::kMin}) {
        k->reduce_rows(op, x.data(), 1, 100, &r);
        EXPECT_TRUE(std::isnan(r)) << k->name << " row, NaN at " << at;
        k->reduce_columns(op, x.data(), 100, 1, 1, &r);
        EXPECT_TRUE(std::isnan(r)) << k->name << " column, NaN at " << at;
      }
    }
  }
}

TEST(IsaKernels, SkinnyLinearMatchesReference) {
  for (const IsaKernels* k : tables()) {
    for (int64_t N : {1, 3, 4, 7, 16}) {
      for (int64_t K : {1, 15, 16, 17, 100}) {
        const int64_t M = 9, x_rs = K + 3, w_rs = K + 1, y_rs = N + 2;
        std::vector<float> x = random_floats(M * x_rs, 31), w = random_floats(N * w_rs, 32),
                           b = random_floats(N, 33), y(M * y_rs, 99.0f);
        for (bool relu : {false, true}) {
          const opt::SkinnyLinearArgs a{x.data(), x_rs, w.data(), w_rs, b.data(),
                                        y.data(), y_rs, K,        N,    relu};
          k->skinny_linear(a, 0, M);
          for (int64_t m = 0; m < M; ++m) {
            for (int64_t n = 0; n < N; ++n) {
              double want = b[n];
              for (int64_t t = 0; t < K; ++t) want += double(x[m * x_rs + t]) * w[n * w_rs + t];
              if (relu && want < 0) want = 0;
              ASSERT_NEAR(y[m * y_rs + n], want, 1e-5 * (1 + std::sqrt(double(K))))
                  << k->name << " N=" << N << " K=" << K << " m=" << m << " n=" << n;
            }
            for (int64_t n = N; n < y_rs; ++n) ASSERT_EQ(y[m * y_rs + n], 99.0f) << "wrote past N";
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace pteron
