// The optimized kernels' SIMD tables (simd/isa_kernels.h) against double-precision references:
// every table this CPU runs (NEON on aarch64, which `make check-aarch64` runs under qemu;
// AVX-512, AVX2 and scalar on x86-64), over lengths around the vector widths. Also checks that
// on aarch64 the NEON code is what the optimized kernels select, for these tables and for the
// SGEMM micro-kernel, and prints the selection on every target.
//
// Tolerances as in test_optimized_kernels.py: relu and add/mul exact to 1e-6, div 1e-6
// relative, layer_norm 1e-5, gelu tanh 1e-6 and erf 3e-6, softmax 1e-6, log_softmax 1e-5,
// attention 1e-5.
#include "kernels/optimized/simd/isa_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/optimized/util/sgemm.h"

namespace pteron::opt {
namespace {

const int64_t kLengths[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100};

std::vector<const IsaKernels*> tables() {
  const IsaKernels* found[8];
  const int n = supported_isa_kernels(found, 8);
  return std::vector<const IsaKernels*>(found, found + n);
}

std::vector<float> random_floats(int64_t n, uint32_t seed, float scale = 3.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = normal(rng);
  return v;
}

void expect_near_all(const std::string& where, const std::vector<float>& got,
                     const std::vector<double>& want, double atol, double rtol = 0) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = atol + rtol * std::fabs(want[i]);
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i]))
          << where << " element " << i << ": " << got[i] << ", want NaN";
    } else if (!(std::fabs(got[i] - want[i]) <= tol)) {
      ADD_FAILURE() << where << " element " << i << ": " << got[i] << ", want " << want[i];
      return;  // one message per case
    }
  }
}

TEST(IsaKernels, SelectionIsNeonOnAarch64) {
  const char* isa = isa_kernels().name;
  int best = -1;
  for (int k = 0; k < optimized::sgemm_kernel_count(); ++k) {
    if (optimized::sgemm_kernel_supported(k)) best = k;  // the table is ordered by speed
  }
  ASSERT_GE(best, 0);
  const char* gemm = optimized::sgemm_kernel_name(best);
  std::printf("optimized kernels selected: SIMD table '%s', SGEMM micro-kernel '%s'\n", isa, gemm);
  RecordProperty("simd_table", isa);
  RecordProperty("sgemm_kernel", gemm);
#if defined(__aarch64__)
  EXPECT_STREQ(isa, "neon");
  EXPECT_STREQ(gemm, "neon");
#endif
  EXPECT_STREQ(tables().front()->name, isa);  // the selection is the best table this CPU runs
}

TEST(IsaKernels, Relu) {
  for (const IsaKernels* t : tables()) {
    for (int64_t n : kLengths) {
      const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n));
      std::vector<float> y(x.size());
      t->relu(x.data(), y.data(), n);
      std::vector<double> want(x.begin(), x.end());
      for (double& w : want) w = w > 0 ? w : 0;
      expect_near_all(std::string(t->name) + " relu n=" + std::to_string(n), y, want, 0);
    }
  }
}

TEST(IsaKernels, Gelu) {
  for (const IsaKernels* t : tables()) {
    for (bool tanh_approx : {false, true}) {
      for (int64_t n : kLengths) {
        const std::vector<float> x = random_floats(n, static_cast<uint32_t>(n + 100));
        std::vector<float> y(x.size());
        t->gelu(x.data(), y.data(), n, tanh_approx);
        std::vector<double> want;
        for (double v : x) {
          want.push_back(tanh_approx
                             ? 0.5 * v *
                                   (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)))
                             : 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
        }
        expect_near_all(std::string(t->name) + (tanh_approx ? " gelu tanh" : " gelu erf") +
                            " n=" + std::to_string(n),
                        y, want, tanh_approx ? 1e-6 : 3e-6);
      }
    }
  }
}

TEST(IsaKernels, SoftmaxAndLogSoftmax) {
  const int64_t rows = 3;
  for (const IsaKernels* t : tables()) {
    for (bool log : {false, true}) {
      for (int64_t n : kLengths) {
        const std::vector<float> x = random_floats(rows * n, static_cast<uint32_t>(n + 200));
        std::vector<float> y(x.size());
        t->softmax(x.data(), y.data(), rows, n, log);
        std::vector<double> want(x.size());
        for (int64_t r = 0; r < rows; ++r) {
          double m = -INFINITY, sum = 0;
          for (int64_t i = 0; i < n; ++i) m = std::max(m, static_cast<double>(x[r * n + i]));
          for (int64_t i = 0; i < n; ++i) sum += std::exp(x[r * n + i] - m);
          for (int64_t i = 0; i < n; ++i) {
            const double z = x[r * n + i] - m;
            want[r * n + i] = log ? z - std::log(sum) : std::exp(z) / sum;
          }
        }
        expect_near_all(
            std::string(t->name) + (log ? " log_softmax" : " softmax") + " n=" + std::to_string(n),
            y, want, log ? 1e-5 : 1e-6);
      }
    }
  }
}

TEST(IsaKernels, LayerNorm) {
  const int64_t rows = 3;
  for (const IsaKernels* t : tables()) {
    for (bool affine : {false, true}) {
      for (int64_t D : kLengths) {
        // An offset far from zero checks that the variance keeps its precision.
        std::vector<float> x = random_floats(rows * D, static_cast<uint32_t>(D + 300));
        for (float& v : x) v += 50.0f;
        const std::vector<float> w = random_floats(D, 7, 1.0f), b = random_floats(D, 8, 1.0f);
        std::vector<float> y(x.size()), mean(rows), rstd(rows);
        t->layer_norm(x.data(), affine ? w.data() : nullptr, affine ? b.data() : nullptr, 1e-5f,
                      rows, D, y.data(), mean.data(), rstd.data());
        std::vector<double> want(x.size()), want_mean(rows), want_rstd(rows);
        for (int64_t r = 0; r < rows; ++r) {
          double m = 0, var = 0;
          for (int64_t i = 0; i < D; ++i) m += x[r * D + i];
          m /= static_cast<double>(D);
          for (int64_t i = 0; i < D; ++i) var += (x[r * D + i] - m) * (x[r * D + i] - m);
          const double rs = 1 / std::sqrt(var / static_cast<double>(D) + 1e-5);
          want_mean[r] = m;
          want_rstd[r] = rs;
          for (int64_t i = 0; i < D; ++i) {
            want[r * D + i] = (x[r * D + i] - m) * rs * (affine ? w[i] : 1) + (affine ? b[i] : 0);
          }
        }
        const std::string where = std::string(t->name) + " layer_norm D=" + std::to_string(D);
        expect_near_all(where, y, want, 1e-5, 1e-5);
        expect_near_all(where + " mean", mean, want_mean, 1e-5, 1e-6);
        expect_near_all(where + " rstd", rstd, want_rstd, 1e-5, 1e-4);
      }
    }
  }
}

TEST(IsaKernels, BinaryWithContiguousBroadcastAndStridedOperands) {
  for (const IsaKernels* t : tables()) {
    for (BinaryOp op : {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kDiv}) {
      for (int64_t a_step : {0, 1, 3}) {
        for (int64_t b_step : {0, 1, 2}) {
          for (int64_t n : kLengths) {
            const std::vector<float> a = random_floats(3 * n, static_cast<uint32_t>(n));
            std::vector<float> b = random_floats(3 * n, static_cast<uint32_t>(n + 1));
            for (float& v : b) v += v >= 0 ? 0.5f : -0.5f;  // keep divisors away from zero
            const float alpha = op == BinaryOp::kAdd ? -2.0f : 1.0f;
            std::vector<float> y(static_cast<size_t>(n));
            t->binary(op, a.data(), a_step, b.data(), b_step, alpha, y.data(), n);
            std::vector<double> want;
            for (int64_t i = 0; i < n; ++i) {
              const double x = a[i * a_step], z = b[i * b_step];
              want.push_back(op == BinaryOp::kAdd   ? x + alpha * z
                             : op == BinaryOp::kMul ? x * z
                                                    : x / z);
            }
            expect_near_all(std::string(t->name) + " binary op " +
                                std::to_string(static_cast<int>(op)) + " steps " +
                                std::to_string(a_step) + "," + std::to_string(b_step) +
                                " n=" + std::to_string(n),
                            y, want, 1e-6, 1e-6);
          }
        }
      }
    }
  }
}

// out = softmax(scale * q k^T + mask) v, with no mask, an additive float mask, and a bool mask
// that hides every key of one query row (that row is NaN, as in PyTorch).
TEST(IsaKernels, Attention) {
  const int64_t Lq = 5, D = 12, Dv = 7;
  for (const IsaKernels* t : tables()) {
    for (int64_t Lk : {1, 4, 13, 70}) {
      for (int mask_kind : {0, 1, 2}) {
        const std::vector<float> q = random_floats(Lq * D, 1, 1.0f),
                                 k_t = random_floats(D * Lk, 2, 1.0f);
        const std::vector<float> v = random_floats(Lk * Dv, 3, 1.0f);
        std::vector<float> float_mask = random_floats(Lq * Lk, 4, 1.0f);
        bool bool_mask[5 * 70];
        for (int64_t i = 0; i < Lq * Lk; ++i)
          bool_mask[i] = (i % 3 == 0) || i / Lk == 2;  // row 2 all masked
        std::vector<float> out(static_cast<size_t>(Lq * Dv), -1.0f);
        AttentionSlice s{q.data(),
                         k_t.data(),
                         v.data(),
                         out.data(),
                         mask_kind == 0   ? nullptr
                         : mask_kind == 1 ? static_cast<const void*>(float_mask.data())
                                          : static_cast<const void*>(bool_mask),
                         mask_kind == 2,
                         D,
                         Lk,
                         Dv,
                         Dv,
                         Lk,
                         1,
                         D,
                         Dv,
                         Lk,
                         0.3f};
        t->attention(s, 0, Lq);
        std::vector<double> want(out.size());
        for (int64_t i = 0; i < Lq; ++i) {
          std::vector<double> score(static_cast<size_t>(Lk));
          double m = -INFINITY;
          for (int64_t j = 0; j < Lk; ++j) {
            double dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot += static_cast<double>(q[i * D + d]) * k_t[d * Lk + j];
            score[j] = 0.3 * dot;
            if (mask_kind == 1) score[j] += float_mask[i * Lk + j];
            if (mask_kind == 2 && bool_mask[i * Lk + j]) score[j] = -INFINITY;
            m = std::max(m, score[j]);
          }
          double sum = 0;
          for (int64_t j = 0; j < Lk; ++j) sum += std::exp(score[j] - m);
          for (int64_t c = 0; c < Dv; ++c) {
            double acc = 0;
            for (int64_t j = 0; j < Lk; ++j) acc += std::exp(score[j] - m) / sum * v[j * Dv + c];
            want[i * Dv + c] = m == -INFINITY ? NAN : acc;
          }
        }
        expect_near_all(std::string(t->name) + " attention Lk=" + std::to_string(Lk) + " mask " +
                            std::to_string(mask_kind),
                        out, want, 1e-5);
      }
    }
  }
}

}  // namespace
}  // namespace pteron::opt
