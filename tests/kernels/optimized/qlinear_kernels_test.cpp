// Every quantized-linear table this CPU runs (kernels/optimized/qlinear/qlinear_kernels.h)
// against references written here from the weight layouts alone: 8da4w's tiles (int32 group
// sums, then one FMA per group) and int4 weight-only (float lanes in one order) bit exact for
// every table, including the scalar one; the weight-only float paths also within 1e-5 of
// sum |x * w|. Odd K and odd group counts for int8, one to four rows, extreme int8 activations.
#include "kernels/optimized/qlinear/qlinear_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace pteron {
namespace {

using opt::QLinearKernels;

std::vector<const QLinearKernels*> tables() {
  const QLinearKernels* t[8];
  const int n = opt::supported_qlinear_kernels(t, 8);
  return std::vector<const QLinearKernels*>(t, t + n);
}

// Packs int4 values (in [-8, 7]) of one row as the layout comment says.
std::vector<uint8_t> pack_row(const std::vector<int>& q) {
  std::vector<uint8_t> out(q.size() / 2);
  for (size_t b = 0; b < q.size() / 32; ++b) {
    for (int j = 0; j < 16; ++j) {
      out[b * 16 + j] = static_cast<uint8_t>((q[b * 32 + j] + 8) | ((q[b * 32 + 16 + j] + 8) << 4));
    }
  }
  return out;
}

TEST(QLinearKernels, BestTableFirstScalarLast) {
  const auto t = tables();
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(&opt::qlinear_kernels(), t.front());
  EXPECT_EQ(std::string(t.back()->name), "scalar");
  for (const QLinearKernels* k : t) std::printf("qlinear table: %s\n", k->name);
}

// Packs int4 values q[n][k] (in [-8, 7]) of `panels` panels of 16 channels as 8da4w's panel
// layout (qlinear_kernels.h): per 8-weight block, byte 4c + i = q(c, 8b+i) + 8 | q(c, 8b+4+i) + 8
// << 4.
std::vector<uint8_t> pack_panels(const std::vector<int>& q, int64_t N, int64_t K) {
  const int64_t panels = (N + 15) / 16;
  std::vector<uint8_t> out(static_cast<size_t>(panels * K * 8), 0x88);
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t k = 0; k < K; k += 8) {
      for (int i = 0; i < 4; ++i) {
        const int lo = q[n * K + k + i] + 8, hi = q[n * K + k + 4 + i] + 8;
        out[(n / 16) * K * 8 + k * 8 + (n % 16) * 4 + i] = static_cast<uint8_t>(lo | (hi << 4));
      }
    }
  }
  return out;
}

// Every table's a8w4_tile against the contract written out here: per group the exact int32
// sum of (q + 8) * xq less xoff, then one fused multiply-add by the group's scale, groups in
// order. Bit exact, for every table (rows 1..8, panels 1..4, K up to 4096, groups 32..K),
// with extreme weights (-8, 7) and activations (-128, 127).
TEST(QLinearKernels, A8W4TilesAreBitExact) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> w4(-8, 7), a8(-128, 127), pick(0, 9);
  std::uniform_real_distribution<float> sf(-0.05f, 0.05f);
  const int64_t cases[][2] = {{32, 32},   {64, 32},  {96, 32},    {128, 64},  {192, 96},
                              {256, 128}, {768, 32}, {4096, 128}, {160, 160}, {2304, 64}};
  for (const QLinearKernels* kt : tables()) {
    for (const auto& c : cases) {
      const int64_t K = c[0], G = c[1], groups = K / G;
      for (int panels = 1; panels <= opt::kA8W4MaxPanels; ++panels) {
        const int64_t N = panels * 16;
        std::vector<int> q(static_cast<size_t>(N * K));
        for (int& v : q) v = pick(rng) == 0 ? (pick(rng) < 5 ? -8 : 7) : w4(rng);
        const std::vector<uint8_t> w = pack_panels(q, N, K);
        std::vector<float> scales(static_cast<size_t>(panels * groups * 16));
        for (float& s : scales) s = sf(rng);
        for (int rows = 1; rows <= opt::kA8W4MaxRows; ++rows) {
          const int64_t rs = K + 3;  // rows not packed back to back
          std::vector<int8_t> x(static_cast<size_t>(rows * rs));
          for (int8_t& v : x) {
            const int p = pick(rng);
            v = static_cast<int8_t>(p == 0 ? -128 : (p == 1 ? 127 : a8(rng)));
          }
          std::vector<int32_t> xoff(static_cast<size_t>(rows * groups));
          for (int r = 0; r < rows; ++r) {
            for (int64_t g = 0; g < groups; ++g) {
              int32_t sum = 0;
              for (int64_t k = g * G; k < (g + 1) * G; ++k) sum += x[r * rs + k];
              xoff[r * groups + g] = 8 * sum;
            }
          }
          const int64_t acc_rs = N + 5;
          std::vector<float> acc(static_cast<size_t>(rows * acc_rs), NAN);
          kt->a8w4_tile(w.data(), scales.data(), K, G, panels, x.data(), rs, xoff.data(), groups,
                        rows, acc.data(), acc_rs);
          for (int r = 0; r < rows; ++r) {
            for (int64_t n = 0; n < N; ++n) {
              float ref = 0.0f;
              for (int64_t g = 0; g < groups; ++g) {
                int32_t d = 0;
                for (int64_t k = g * G; k < (g + 1) * G; ++k)
                  d += (q[n * K + k] + 8) * x[r * rs + k];
                const float s = scales[((n / 16) * groups + g) * 16 + n % 16];
                ref = std::fma(s, static_cast<float>(d - xoff[r * groups + g]), ref);
              }
              const float got = acc[r * acc_rs + n];
              ASSERT_EQ(std::memcmp(&got, &ref, sizeof ref), 0)
                  << kt->name << " K=" << K << " G=" << G << " panels=" << panels
                  << " rows=" << rows << " r=" << r << " n=" << n << ": " << got << " vs " << ref;
            }
          }
        }
      }
    }
  }
}

// out vs sum_g s_g * sum_k x_k q_k in double; tolerance 1e-5 * sum |s x q| + 1e-6.
void check_weight_only(const QLinearKernels& k, bool int4, int64_t K, int64_t G, int rows,
                       std::mt19937& rng) {
  std::uniform_real_distribution<float> xf(-2.0f, 2.0f), sf(0.001f, 0.1f);
  std::uniform_int_distribution<int> wq(int4 ? -8 : -128, int4 ? 7 : 127);
  std::vector<int> q(static_cast<size_t>(K));
  for (int& v : q) v = wq(rng);
  std::vector<float> scales(static_cast<size_t>(K / G));
  for (float& s : scales) s = sf(rng);
  const int64_t rs = K + 5;
  std::vector<float> x(static_cast<size_t>(rows * rs));
  for (float& v : x) v = xf(rng);
  const int64_t step = 3;
  std::vector<float> out(static_cast<size_t>(rows * step), NAN);
  if (int4) {
    const std::vector<uint8_t> w = pack_row(q);
    k.q4w_rows(w.data(), scales.data(), K, G, x.data(), rs, rows, out.data(), step);
  } else {
    std::vector<int8_t> w(q.begin(), q.end());
    k.q8w_rows(w.data(), scales.data(), K, G, x.data(), rs, rows, out.data(), step);
  }
  for (int r = 0; r < rows; ++r) {
    double ref = 0.0, mag = 0.0;
    for (int64_t i = 0; i < K; ++i) {
      const double t = static_cast<double>(x[r * rs + i]) * q[i] * scales[i / G];
      ref += t;
      mag += std::fabs(t);
    }
    ASSERT_NEAR(out[r * step], ref, 1e-5 * mag + 1e-6)
        << k.name << (int4 ? " int4" : " int8") << " K=" << K << " G=" << G << " rows=" << rows;
  }
}

// 8da4w's per-token activation quantization: every table the same bytes, scale, zero point and
// group offsets as the scalar table (torchao's formulas), including values that round half way,
// rows all of one sign, all zeros and a row whose range needs the eps floor.
TEST(QLinearKernels, ActivationQuantizationIsTheSameInEveryTable) {
  std::mt19937 rng(23);
  std::normal_distribution<float> nf(0.0f, 1.0f);
  const QLinearKernels* ref = tables().back();  // scalar
  for (const int64_t K : {int64_t{32}, int64_t{768}, int64_t{2304}, int64_t{96}}) {
    for (int kind = 0; kind < 5; ++kind) {
      std::vector<float> x(static_cast<size_t>(K));
      for (int64_t k = 0; k < K; ++k) {
        const float v = nf(rng) * 3.0f;
        x[k] = kind == 0   ? v
               : kind == 1 ? std::fabs(v) + 0.5f                       // all positive
               : kind == 2 ? 0.0f                                      // all zero: eps
               : kind == 3 ? static_cast<float>(k % 255 - 127) * 0.5f  // halves
                           : -std::fabs(v) * 1e-30f;                   // tiny: eps floor
      }
      for (const int64_t G : {int64_t{32}, K}) {
        const int64_t groups = K / G;
        std::vector<int8_t> q0(static_cast<size_t>(K)), q1(static_cast<size_t>(K));
        std::vector<int32_t> o0(static_cast<size_t>(groups)), o1(static_cast<size_t>(groups));
        float s0 = 0, s1 = 0;
        int32_t z0 = 0, z1 = 0;
        ref->a8_quantize_row(x.data(), K, G, 1e-20f, q0.data(), &s0, &z0, o0.data());
        for (const QLinearKernels* kt : tables()) {
          kt->a8_quantize_row(x.data(), K, G, 1e-20f, q1.data(), &s1, &z1, o1.data());
          ASSERT_EQ(std::memcmp(&s0, &s1, sizeof s0), 0)
              << kt->name << " K " << K << " kind " << kind;
          ASSERT_EQ(z0, z1) << kt->name << " K " << K << " kind " << kind;
          ASSERT_EQ(q0, q1) << kt->name << " K " << K << " kind " << kind;
          ASSERT_EQ(o0, o1) << kt->name << " K " << K << " kind " << kind;
        }
      }
    }
  }
}

// The dequantizers the SGEMM's packer uses: q * scale, one rounding, so every table gives the
// same floats; any start and depth (int4 blocks entered in the middle).
TEST(QLinearKernels, DequantizedRowsAreExact) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> sf(0.001f, 0.1f);
  const int64_t K = 288, G = 96, groups = K / G, rows = 3;
  std::vector<int> q(static_cast<size_t>(rows * K));
  std::vector<float> scales(static_cast<size_t>(rows * groups));
  for (float& s : scales) s = sf(rng);
  for (const bool int4 : {false, true}) {
    std::uniform_int_distribution<int> wq(int4 ? -8 : -128, int4 ? 7 : 127);
    for (int& v : q) v = wq(rng);
    std::vector<int8_t> w8(q.begin(), q.end());
    std::vector<uint8_t> w4;
    for (int r = 0; r < rows; ++r) {
      const std::vector<uint8_t> row =
          pack_row(std::vector<int>(q.begin() + r * K, q.begin() + (r + 1) * K));
      w4.insert(w4.end(), row.begin(), row.end());
    }
    for (const QLinearKernels* k : tables()) {
      for (const int64_t start : {int64_t{0}, int64_t{5}, int64_t{144}, int64_t{250}}) {
        const int64_t depth = K - start < 100 ? K - start : 100, ld = depth + 3;
        std::vector<float> out(static_cast<size_t>(rows * ld), NAN);
        if (int4) {
          k->q4w_dequant(w4.data(), scales.data(), K, G, rows, start, depth, out.data(), ld);
        } else {
          k->q8w_dequant(w8.data(), scales.data(), K, G, rows, start, depth, out.data(), ld);
        }
        for (int r = 0; r < rows; ++r) {
          for (int64_t i = 0; i < depth; ++i) {
            const int64_t c = start + i;
            ASSERT_EQ(out[r * ld + i],
                      static_cast<float>(q[r * K + c]) * scales[r * groups + c / G])
                << k->name << (int4 ? " int4" : " int8") << " start " << start << " r " << r;
          }
        }
      }
    }
  }
}

TEST(QLinearKernels, Int8WeightOnlyMatchesReference) {
  std::mt19937 rng(11);
  const int64_t cases[][2] = {{1, 1},     {7, 7},     {63, 63},     {63, 21},    {64, 32},
                              {100, 100}, {257, 257}, {4096, 4096}, {4096, 128}, {33, 11}};
  for (const QLinearKernels* k : tables()) {
    for (const auto& c : cases) {
      for (int rows = 1; rows <= opt::kQMaxRows; ++rows)
        check_weight_only(*k, false, c[0], c[1], rows, rng);
    }
  }
}

TEST(QLinearKernels, Int4WeightOnlyMatchesReference) {
  std::mt19937 rng(13);
  const int64_t cases[][2] = {{32, 32}, {96, 32}, {128, 64}, {192, 96}, {4096, 128}, {4096, 32}};
  for (const QLinearKernels* k : tables()) {
    for (const auto& c : cases) {
      for (int rows = 1; rows <= opt::kQMaxRows; ++rows)
        check_weight_only(*k, true, c[0], c[1], rows, rng);
    }
  }
}

// int4 weight-only, bit exact in every table against the contract written here from the
// kernel header: weight k = float(q) * its group's scale, fused into lane 32 (b % 2) + k % 32
// of 64 (block b = k / 32), then lanes (i + (i + 32)) + ((i + 16) + (i + 48)) and halves 8, 4,
// 2, 1. Odd and even block counts, a group spanning both parities, extreme activations.
float q4w_contract(const std::vector<int>& q, const std::vector<float>& scales, int64_t G,
                   const float* x) {
  float lanes[64] = {};
  for (size_t k = 0; k < q.size(); ++k) {
    const float wk = static_cast<float>(q[k]) * scales[k / G];
    float& lane = lanes[(k / 32) % 2 * 32 + k % 32];
    lane = std::fma(x[k], wk, lane);
  }
  float v[16];
  for (int i = 0; i < 16; ++i) v[i] = (lanes[i] + lanes[i + 32]) + (lanes[i + 16] + lanes[i + 48]);
  for (int half = 8; half >= 1; half /= 2)
    for (int i = 0; i < half; ++i) v[i] += v[i + half];
  return v[0];
}

TEST(QLinearKernels, Int4WeightOnlyIsBitExactInEveryTable) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> xf(-3.0f, 3.0f), sf(0.001f, 0.2f);
  std::uniform_int_distribution<int> wq(-8, 7);
  const int64_t cases[][2] = {{32, 32},  {64, 32},   {96, 32},   {96, 96},    {160, 32},
                              {192, 64}, {768, 128}, {2048, 32}, {4096, 128}, {224, 32}};
  for (const auto& c : cases) {
    const int64_t K = c[0], G = c[1];
    std::vector<int> q(static_cast<size_t>(K));
    for (int& v : q) v = wq(rng);
    q[0] = -8;
    q[K - 1] = 7;
    std::vector<float> scales(static_cast<size_t>(K / G));
    for (float& s : scales) s = sf(rng);
    const int64_t rs = K + 3;
    std::vector<float> x(static_cast<size_t>(opt::kQMaxRows * rs));
    for (float& v : x) v = xf(rng);
    x[1] = 1e6f;  // a large activation next to small ones: the order shows in the rounding
    x[2] = -1e-6f;
    const std::vector<uint8_t> w = pack_row(q);
    for (const QLinearKernels* k : tables()) {
      for (int rows = 1; rows <= opt::kQMaxRows; ++rows) {
        std::vector<float> out(static_cast<size_t>(rows * 2), NAN);
        k->q4w_rows(w.data(), scales.data(), K, G, x.data(), rs, rows, out.data(), 2);
        for (int r = 0; r < rows; ++r) {
          const float want = q4w_contract(q, scales, G, x.data() + r * rs);
          ASSERT_EQ(std::memcmp(&out[r * 2], &want, sizeof want), 0)
              << k->name << " K=" << K << " G=" << G << " rows=" << rows << " r=" << r << ": "
              << out[r * 2] << " vs " << want;
        }
      }
    }
  }
}

// aten::_int_mm's tiles: every table, every signedness pair, full and edge tiles, odd K,
// extreme bytes, against int64 sums wrapped to int32.
TEST(QLinearKernels, Int8TilesAreExact) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const QLinearKernels* k : tables()) {
    for (const int64_t K : {1, 31, 64, 1000}) {
      for (const bool a_signed : {false, true}) {
        for (const bool b_signed : {false, true}) {
          for (const int rows : {1, 3, 4}) {
            for (const int cols : {2, 4}) {
              const int64_t a_rs = K + 3, b_rs = K + 5;  // rows apart, as in a larger matrix
              std::vector<uint8_t> a(static_cast<size_t>(rows * a_rs)),
                  b(static_cast<size_t>(cols * b_rs));
              for (auto& v : a) v = static_cast<uint8_t>(byte(rng));
              for (auto& v : b) v = static_cast<uint8_t>(byte(rng));
              if (K == 1000) {  // the largest magnitudes each signedness allows
                std::fill(a.begin(), a.end(), a_signed ? uint8_t{0x80} : uint8_t{0xff});
                std::fill(b.begin(), b.end(), b_signed ? uint8_t{0x80} : uint8_t{0xff});
              }
              std::vector<int32_t> c(static_cast<size_t>(rows) * 6, -7);
              k->int8_tile(a.data(), a_signed, a_rs, b.data(), b_signed, b_rs, K, rows, cols,
                           c.data(), 6);
              for (int i = 0; i < rows; ++i) {
                for (int j = 0; j < cols; ++j) {
                  int64_t want = 0;
                  for (int64_t x = 0; x < K; ++x) {
                    const uint8_t av = a[i * a_rs + x], bv = b[j * b_rs + x];
                    want += (a_signed ? int64_t{static_cast<int8_t>(av)} : int64_t{av}) *
                            (b_signed ? int64_t{static_cast<int8_t>(bv)} : int64_t{bv});
                  }
                  EXPECT_EQ(c[i * 6 + j], static_cast<int32_t>(static_cast<uint32_t>(want)))
                      << k->name << " K " << K << " signed " << a_signed << b_signed << " tile "
                      << rows << "x" << cols << " at " << i << "," << j;
                }
                for (int j = cols; j < 6; ++j) EXPECT_EQ(c[i * 6 + j], -7);  // untouched
              }
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace pteron
