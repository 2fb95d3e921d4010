// The portable GEMM against a double-precision reference, for every register tile this CPU can
// run, with packing scratch (blocked path) and without (stack path), over the layouts and
// shapes the matmul and convolution kernels use.
#include "kernels/portable/util/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace pteron {
namespace {

struct Shape {
  int64_t m, n, k;
};

const Shape kShapes[] = {{1, 1, 1},     {1, 37, 19},  {29, 1, 19},  {3, 5, 7},
                         {13, 37, 300}, {70, 90, 33}, {9, 2100, 5}, {130, 20, 8}};

template <typename T>
std::vector<T> random_values(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<T> v(n);
  for (T& x : v) x = store_value<T>(dist(rng));
  return v;
}

// C = alpha * op(A) * op(B) + beta * C with A, B optionally transposed in memory; returns the
// largest error relative to sqrt(K) (the scale of the rounding error of a K-term sum).
template <typename T>
double run_case(const Shape& s, bool ta, bool tb, bool with_scratch, int tile, double alpha,
                double beta) {
  using Acc = typename ComputeType<T>::type;
  std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.n * 7 + s.k));
  std::vector<T> a = random_values<T>(s.m * s.k, rng), b = random_values<T>(s.k * s.n, rng);
  std::vector<T> c = random_values<T>(s.m * s.n, rng);
  const MatrixRef<const T> am =
      ta ? MatrixRef<const T>{a.data(), 1, s.m} : MatrixRef<const T>{a.data(), s.k, 1};
  const MatrixRef<const T> bm =
      tb ? MatrixRef<const T>{b.data(), 1, s.k} : MatrixRef<const T>{b.data(), s.n, 1};
  std::vector<double> expected(s.m * s.n);
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < s.k; ++p)
        sum += static_cast<double>(load_value(am.data[i * am.rs + p * am.cs])) *
               static_cast<double>(load_value(bm.data[p * bm.rs + j * bm.cs]));
      const double old = beta == 0 ? 0 : beta * static_cast<double>(load_value(c[i * s.n + j]));
      expected[i * s.n + j] = alpha * sum + old;
    }
  static std::vector<uint8_t> scratch(16u << 20);  // shared by every case
  MemoryAllocator allocator(scratch.data(), scratch.size());
  KernelContext ctx{with_scratch ? &allocator : nullptr};
  const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, s.m, s.n, s.k, tile);
  EXPECT_EQ(ws.buf != nullptr, with_scratch && s.m > 1 && s.n > 1);
  EXPECT_EQ(ws.tile, tile);
  gemm<T>(ws, s.m, s.n, s.k, am, bm, MatrixRef<T>{c.data(), s.n, 1}, static_cast<Acc>(alpha),
          static_cast<Acc>(beta));
  double worst = 0;
  for (int64_t i = 0; i < s.m * s.n; ++i) {
    const double err = std::fabs(static_cast<double>(load_value(c[i])) - expected[i]) /
                       (std::sqrt(static_cast<double>(s.k)) + std::fabs(expected[i]));
    worst = err > worst ? err : worst;
  }
  return worst;
}

template <typename T>
void check_all(double tolerance) {
  for (int tile = 0; tile < gemm_tile_count(); ++tile) {
    if (!gemm_tile_supported(tile)) continue;
    for (const Shape& s : kShapes)
      for (bool with_scratch : {true, false})
        for (int layout = 0; layout < 4; ++layout) {
          const bool ta = layout & 1, tb = layout & 2;
          const double err = run_case<T>(s, ta, tb, with_scratch, tile, 1.0, 0.0);
          EXPECT_LT(err, tolerance)
              << "tile " << tile << " shape " << s.m << "x" << s.n << "x" << s.k << " ta " << ta
              << " tb " << tb << " scratch " << with_scratch;
        }
  }
}

TEST(PortableGemm, FloatEveryTileWithAndWithoutScratch) { check_all<float>(1e-5); }
TEST(PortableGemm, DoubleEveryTileWithAndWithoutScratch) { check_all<double>(1e-12); }
TEST(PortableGemm, HalfEveryTileWithAndWithoutScratch) { check_all<Half>(2e-3); }

TEST(PortableGemm, AlphaAndBeta) {
  for (bool with_scratch : {true, false}) {
    EXPECT_LT(run_case<float>({17, 40, 300}, false, false, with_scratch, 0, 0.5, 2.0), 1e-5);
    EXPECT_LT(run_case<BFloat16>({5, 9, 64}, false, true, with_scratch, 0, -1.0, 1.0), 1e-2);
  }
}

TEST(PortableGemm, BetaZeroIgnoresNaNInC) {
  const float a[] = {1, 2, 3, 4}, b[] = {1, 0, 0, 1};
  float c[] = {NAN, NAN, NAN, NAN};
  KernelContext ctx{nullptr};
  gemm<float>(ctx, 2, 2, 2, {a, 2, 1}, {b, 2, 1}, {c, 2, 1}, 1.0f, 0.0f);
  EXPECT_EQ(c[0], 1);
  EXPECT_EQ(c[1], 2);
  EXPECT_EQ(c[2], 3);
  EXPECT_EQ(c[3], 4);
}

TEST(PortableGemm, EmptyInnerDimensionScalesC) {
  float c[] = {1, 2, 3};
  KernelContext ctx{nullptr};
  gemm<float>(ctx, 1, 3, 0, {nullptr, 0, 1}, {nullptr, 3, 1}, {c, 3, 1}, 1.0f, 2.0f);
  EXPECT_EQ(c[0], 2);
  EXPECT_EQ(c[2], 6);
}

}  // namespace
}  // namespace pteron
