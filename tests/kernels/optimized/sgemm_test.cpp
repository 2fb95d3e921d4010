// The optimized SGEMM against a double-precision reference, for every micro-kernel this CPU can
// run (on x86 that includes the generic-vector build of NEON's 8 x 12 tile; under
// qemu-aarch64 the NEON kernel itself), with 1 and 2 threads, over the layouts, edge sizes,
// alpha/beta/bias combinations and batches the matmul kernels use.
#include "kernels/optimized/util/sgemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "runtime/threads/threadpool.h"

namespace pteron::optimized {
namespace {

struct Shape {
  int64_t batch, m, n, k;
};

// Edge sizes around every kernel's tile (4x8, 8x12, 6x16, 12x32), K blocks (256) and tasks.
const Shape kShapes[] = {{1, 1, 1, 1},     {1, 1, 37, 19},  {1, 29, 1, 19},    {1, 3, 5, 7},
                         {1, 13, 37, 300}, {1, 70, 90, 33}, {1, 9, 1100, 5},   {1, 130, 20, 8},
                         {1, 25, 97, 513}, {3, 17, 33, 12}, {2, 128, 64, 128}, {1, 1, 300, 700}};

enum class Layout { kRowMajor, kTransposed, kStrided };

struct Case {
  Shape s;
  Layout a_layout = Layout::kRowMajor, b_layout = Layout::kRowMajor;
  float alpha = 1.0f, beta = 0.0f;
  bool bias = false;
  bool extras = false;  // row_bias and addend (the convolution's bias and residual)
  bool addend = true;   // with extras: the addend too (else the row bias alone)
  char k_scale = 0;     // 'a': a_col_scale, 'b': b_row_scale (C = A diag(s) B), 0: none
  bool clamp = false;   // to [kClampLo, kClampHi] (a fused ReLU6 / hardtanh), after everything
  int kernel = -1;
  bool serial = false;  // sgemm_serial in caller-provided scratch (this machine's best kernel)
};

std::string describe(const Case& c) {
  return "kernel " + std::string(sgemm_kernel_name(c.kernel)) + " batch " +
         std::to_string(c.s.batch) + " " + std::to_string(c.s.m) + "x" + std::to_string(c.s.n) +
         "x" + std::to_string(c.s.k) + " a" + std::to_string(static_cast<int>(c.a_layout)) + " b" +
         std::to_string(static_cast<int>(c.b_layout)) + " alpha " + std::to_string(c.alpha) +
         " beta " + std::to_string(c.beta) + " bias " + std::to_string(c.bias) + " extras " +
         std::to_string(c.extras) + " addend " + std::to_string(c.addend) + " k_scale " +
         std::string(1, c.k_scale ? c.k_scale : '-') + " clamp " + std::to_string(c.clamp);
}

constexpr float kClampLo = -0.3f, kClampHi = 0.4f;

// A rows x cols matrix per batch entry in the given layout: element (r, c) at
// base + b * bs + r * rs + c * cs.
struct Strided {
  std::vector<float> data;
  int64_t bs, rs, cs;
};

Strided make_matrix(int64_t batch, int64_t rows, int64_t cols, Layout layout, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Strided m;
  switch (layout) {
    case Layout::kRowMajor:
      m.rs = cols;
      m.cs = 1;
      break;
    case Layout::kTransposed:
      m.rs = 1;
      m.cs = rows;
      break;
    case Layout::kStrided:  // every other column of a wider row-major matrix
      m.rs = 2 * cols + 1;
      m.cs = 2;
      break;
  }
  m.bs = layout == Layout::kStrided ? rows * m.rs : rows * cols;
  m.data.resize(static_cast<size_t>(batch * m.bs + 1));
  for (float& x : m.data) x = dist(rng);
  return m;
}

// Largest error relative to sqrt(K) + |expected| over C; -1 when sgemm declined.
double run_case(const Case& cs, bool with_scratch = true) {
  const Shape& s = cs.s;
  std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.n * 7 + s.k + s.batch));
  const Strided a = make_matrix(s.batch, s.m, s.k, cs.a_layout, rng);
  const Strided b = make_matrix(s.batch, s.k, s.n, cs.b_layout, rng);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> c(static_cast<size_t>(s.batch * s.m * s.n)), bias(static_cast<size_t>(s.n));
  for (float& x : c) x = cs.beta == 0.0f ? NAN : dist(rng);  // beta 0 must not read C
  for (float& x : bias) x = dist(rng);
  std::vector<float> row_bias(static_cast<size_t>(s.m)), addend(c.size());
  for (float& x : row_bias) x = dist(rng);
  std::vector<float> k_scale(static_cast<size_t>(s.k));
  for (float& x : k_scale) x = cs.k_scale ? dist(rng) : 1.0f;
  for (float& x : addend) x = dist(rng);
  std::vector<double> expected(c.size());
  for (int64_t bi = 0; bi < s.batch; ++bi)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < s.k; ++p)
          sum += static_cast<double>(a.data[bi * a.bs + i * a.rs + p * a.cs]) * k_scale[p] *
                 static_cast<double>(b.data[bi * b.bs + p * b.rs + j * b.cs]);
        const size_t at = static_cast<size_t>((bi * s.m + i) * s.n + j);
        double v = cs.alpha * sum;
        if (cs.beta != 0.0f) v += cs.beta * static_cast<double>(c[at]);
        if (cs.bias) v += bias[j];
        if (cs.extras) v += row_bias[i];
        if (cs.extras && cs.addend) v += addend[at];
        if (cs.clamp) v = std::fmin(kClampHi, std::fmax(kClampLo, v));
        expected[at] = v;
      }
  static std::vector<uint8_t> scratch(32u << 20);
  MemoryAllocator allocator(scratch.data(), scratch.size());
  KernelContext ctx{with_scratch ? &allocator : nullptr};
  SgemmProblem p;
  p.M = s.m;
  p.N = s.n;
  p.K = s.k;
  p.batch = s.batch;
  p.a = a.data.data();
  p.a_bs = a.bs;
  p.a_rs = a.rs;
  p.a_cs = a.cs;
  p.b = b.data.data();
  p.b_bs = b.bs;
  p.b_rs = b.rs;
  p.b_cs = b.cs;
  p.c = c.data();
  p.c_bs = s.m * s.n;
  p.c_rs = s.n;
  p.alpha = cs.alpha;
  p.beta = cs.beta;
  p.bias = cs.bias ? bias.data() : nullptr;
  p.row_bias = cs.extras ? row_bias.data() : nullptr;
  p.addend = cs.extras && cs.addend ? addend.data() : nullptr;
  p.a_col_scale = cs.k_scale == 'a' ? k_scale.data() : nullptr;
  p.b_row_scale = cs.k_scale == 'b' ? k_scale.data() : nullptr;
  if (cs.clamp) p.activation = OutputActivation{kClampLo, kClampHi};
  if (cs.serial) {
    // 64-byte aligned, as the contract asks; NaN bytes so that nothing relies on zeroed scratch.
    std::vector<uint8_t> serial_scratch(sgemm_serial_scratch_bytes(p) + 64, 0xff);
    const uintptr_t at = reinterpret_cast<uintptr_t>(serial_scratch.data());
    sgemm_serial(p, serial_scratch.data() + ((64 - at % 64) % 64));
  } else if (!sgemm(ctx, p, cs.kernel)) {
    return -1;
  }
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    const double err = std::fabs(static_cast<double>(c[i]) - expected[i]) /
                       (std::sqrt(static_cast<double>(s.k)) + std::fabs(expected[i]));
    worst = std::isnan(err) || err > worst ? (std::isnan(err) ? INFINITY : err) : worst;
  }
  return worst;
}

constexpr double kTolerance = 1e-5;

class SgemmThreads : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_num_threads(GetParam()); }
  void TearDown() override { set_num_threads(0); }
};

TEST_P(SgemmThreads, EveryKernelShapeAndLayout) {
  int kernels_run = 0;
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    ++kernels_run;
    for (const Shape& s : kShapes)
      for (Layout la : {Layout::kRowMajor, Layout::kTransposed})
        for (Layout lb : {Layout::kRowMajor, Layout::kTransposed, Layout::kStrided}) {
          Case c;
          c.s = s;
          c.a_layout = la;
          c.b_layout = lb;
          c.kernel = kernel;
          c.bias = lb == Layout::kTransposed;  // linear: weights [N, K] with a bias
          EXPECT_LT(run_case(c), kTolerance) << describe(c);
        }
  }
  EXPECT_GE(kernels_run, 2);  // the scalar and generic-vector kernels run everywhere
}

TEST_P(SgemmThreads, AlphaBetaAndBias) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s : {Shape{1, 17, 40, 300}, Shape{2, 5, 9, 64}, Shape{1, 1, 50, 33}})
      for (float alpha : {1.0f, 0.5f})
        for (float beta : {0.0f, 1.0f, -2.0f})
          for (bool bias : {false, true}) {
            Case c;
            c.s = s;
            c.b_layout = Layout::kTransposed;
            c.alpha = alpha;
            c.beta = beta;
            c.bias = bias;
            c.kernel = kernel;
            EXPECT_LT(run_case(c), kTolerance) << describe(c);
          }
  }
}

TEST_P(SgemmThreads, RowBiasAndAddend) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s :
         {Shape{1, 64, 300, 576}, Shape{2, 5, 9, 64}, Shape{1, 1, 50, 33}, Shape{1, 4, 5, 0}})
      for (float beta : {0.0f, 1.0f, -2.0f})
        for (bool bias : {false, true})
          for (bool with_addend : {false, true}) {  // without: the micro-kernels add the row bias
            Case c;
            c.s = s;
            c.beta = beta;
            c.bias = bias;
            c.extras = true;
            c.addend = with_addend;
            c.kernel = kernel;
            EXPECT_LT(run_case(c), kTolerance) << describe(c);
          }
  }
}

// A K scale on either operand, applied as it is packed: every kernel, K past one block, edge
// tiles, both layouts.
TEST_P(SgemmThreads, KScaleOnEitherOperand) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s : {Shape{1, 40, 70, 300}, Shape{2, 13, 9, 24}, Shape{1, 5, 33, 7}})
      for (char side : {'a', 'b'})
        for (Layout layout : {Layout::kRowMajor, Layout::kTransposed}) {
          Case c;
          c.s = s;
          c.k_scale = side;
          c.a_layout = c.b_layout = layout;
          c.extras = true;
          c.addend = false;
          c.kernel = kernel;
          EXPECT_LT(run_case(c), kTolerance) << describe(c);
        }
  }
}

// The clamp is applied once, to the final sum: shapes with several K blocks (K > 256) would go
// wrong if a kernel clamped a partial sum; betas other than 0 and 1 and empty K take scale_c.
TEST_P(SgemmThreads, ClampEveryKernelAfterTheLastKBlock) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s : {Shape{1, 25, 97, 513}, Shape{1, 70, 90, 33}, Shape{3, 17, 33, 12},
                           Shape{1, 1, 300, 700}, Shape{1, 4, 5, 0}})
      for (float beta : {0.0f, 1.0f, -2.0f})
        for (bool extras : {false, true}) {
          Case c;
          c.s = s;
          c.beta = beta;
          c.bias = !extras;
          c.extras = extras;
          c.clamp = true;
          c.kernel = kernel;
          EXPECT_LT(run_case(c), kTolerance) << describe(c);
        }
  }
}

TEST(Sgemm, ClampKeepsNaN) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    const int64_t m = 13, n = 37, k = 9;  // a full tile and edges on every kernel
    std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n, 0.0f);
    a[5 * k + 3] = NAN;  // row 5 of C is NaN
    static std::vector<uint8_t> scratch(8u << 20);
    MemoryAllocator allocator(scratch.data(), scratch.size());
    KernelContext ctx{&allocator};
    SgemmProblem p;
    p.M = m;
    p.N = n;
    p.K = k;
    p.a = a.data();
    p.a_rs = k;
    p.a_cs = 1;
    p.b = b.data();
    p.b_rs = n;
    p.b_cs = 1;
    p.c = c.data();
    p.c_rs = n;
    p.activation = OutputActivation{0.0f, 6.0f};
    ASSERT_TRUE(sgemm(ctx, p, kernel));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float v = c[i * n + j];
        if (i == 5) {
          ASSERT_TRUE(std::isnan(v)) << sgemm_kernel_name(kernel) << " " << i << "," << j;
        } else {
          ASSERT_FLOAT_EQ(v, 1.125f) << sgemm_kernel_name(kernel) << " " << i << "," << j;
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, SgemmThreads, ::testing::Values(1, 2));

TEST(Sgemm, DeclinesWithoutScratchExceptForVectorProducts) {
  Case c;
  c.s = {1, 13, 37, 30};
  EXPECT_EQ(run_case(c, /*with_scratch=*/false), -1);  // the caller falls back to portable
  c.s = {1, 1, 37, 30};
  c.b_layout = Layout::kTransposed;  // a row vector times linear weights needs no packing
  EXPECT_LT(run_case(c, false), kTolerance);
}

TEST(Sgemm, EmptyDimensions) {
  Case c;
  for (Shape s : {Shape{1, 0, 5, 3}, Shape{1, 4, 0, 3}, Shape{0, 4, 5, 3}})
    EXPECT_LT(run_case({s}), kTolerance);
  c.s = {1, 4, 5, 0};  // empty inner dimension: C = beta * C + bias
  c.beta = 2.0f;
  c.bias = true;
  EXPECT_LT(run_case(c), kTolerance);
}

// The single-thread entry the Winograd workers use, with threads set (it must not need them).
TEST(Sgemm, SerialMatchesReference) {
  set_num_threads(2);
  for (const Shape& s : kShapes)
    for (Layout a : {Layout::kRowMajor, Layout::kTransposed})
      for (Layout b : {Layout::kRowMajor, Layout::kTransposed, Layout::kStrided}) {
        Case c;
        c.s = s;
        c.a_layout = a;
        c.b_layout = b;
        c.serial = true;
        EXPECT_LT(run_case(c), kTolerance) << "serial " << describe(c);
        c.alpha = 0.5f;
        c.beta = 1.0f;
        c.bias = true;
        c.extras = true;
        EXPECT_LT(run_case(c), kTolerance) << "serial " << describe(c);
      }
  Case empty;
  empty.s = {1, 4, 5, 0};
  empty.beta = 2.0f;
  empty.bias = true;
  empty.serial = true;
  EXPECT_LT(run_case(empty), kTolerance);
  set_num_threads(0);
}

TEST(Sgemm, KernelNames) {
  ASSERT_GE(sgemm_kernel_count(), 2);
  EXPECT_STREQ(sgemm_kernel_name(0), "scalar");
  EXPECT_STREQ(sgemm_kernel_name(1), "vec128");
  EXPECT_STREQ(sgemm_kernel_name(sgemm_kernel_count()), "");
  EXPECT_FALSE(sgemm_kernel_supported(-1));
}

}  // namespace
}  // namespace pteron::optimized
