// The SGEMM with constant operands packed once (SgemmProblem::a_cache / b_cache): for every
// micro-kernel this CPU runs (NEON under qemu-aarch64), the product from cached panels is
// bit-identical to the product packed per call, later calls (other row counts included, as a
// dynamic sequence length gives) derive nothing, and what is not one constant matrix is never
// cached.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/optimized/util/sgemm.h"
#include "runtime/threads/threadpool.h"

namespace pteron::optimized {
namespace {

// A ConstantCache as the runtime's contract describes it, counting derivations; `capacity`
// blocks at most (then nullptr: the SGEMM must pack per call).
class CountingCache final : public ConstantCache {
 public:
  explicit CountingCache(size_t capacity = 64) : capacity_(capacity) {}
  ~CountingCache() override {
    for (auto& [key, block] : blocks_) std::free(block);
  }
  const void* get_or_derive(const ConstantKey& key, size_t /*source_bytes*/, size_t bytes,
                            ConstantDeriveFn derive, const void* context) override {
    const auto k =
        std::make_tuple(key.source, key.kind, std::vector<int64_t>(key.params, key.params + 7));
    auto found = blocks_.find(k);
    if (found != blocks_.end()) return found->second;
    if (blocks_.size() >= capacity_) return nullptr;
    void* block = nullptr;
    if (posix_memalign(&block, 64, bytes) != 0) return nullptr;
    std::memset(block, 0xff, bytes);  // NaN: nothing may rely on zeroed memory
    derive(context, block);
    blocks_.emplace(k, block);
    ++derivations;
    return block;
  }
  const void* find(const ConstantKey& key) override {
    auto found = blocks_.find(
        std::make_tuple(key.source, key.kind, std::vector<int64_t>(key.params, key.params + 7)));
    return found != blocks_.end() ? found->second : nullptr;
  }
  int derivations = 0;

 private:
  size_t capacity_;
  std::map<std::tuple<const void*, uint32_t, std::vector<int64_t>>, void*> blocks_;
};

struct Operands {
  std::vector<float> a, b, bias;
};

Operands make_operands(int64_t batch, int64_t m, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operands o;
  o.a.resize(static_cast<size_t>(batch * m * k + 1));
  o.b.resize(static_cast<size_t>(n * k + 1));  // one B, shared by the batch when batch > 1
  o.bias.resize(static_cast<size_t>(n));
  for (float& x : o.a) x = dist(rng);
  for (float& x : o.b) x = dist(rng);
  for (float& x : o.bias) x = dist(rng);
  return o;
}

// C for A [batch][m][k] row-major times B (linear weights [n, k] when `b_transposed`, else
// [k, n]), B's batch stride 0; the caches as given.
std::vector<float> product(const Operands& o, int64_t batch, int64_t m, int64_t n, int64_t k,
                           bool b_transposed, int kernel, ConstantCache* a_cache,
                           ConstantCache* b_cache, bool relu = false) {
  static std::vector<uint8_t> scratch(32u << 20);
  MemoryAllocator allocator(scratch.data(), scratch.size());
  KernelContext ctx{&allocator};
  std::vector<float> c(static_cast<size_t>(batch * m * n), NAN);
  SgemmProblem p;
  p.batch = batch;
  p.M = m;
  p.N = n;
  p.K = k;
  p.a = o.a.data();
  p.a_bs = m * k;
  p.a_rs = k;
  p.a_cs = 1;
  p.b = o.b.data();
  p.b_rs = b_transposed ? 1 : n;
  p.b_cs = b_transposed ? k : 1;
  p.c = c.data();
  p.c_bs = m * n;
  p.c_rs = n;
  p.bias = o.bias.data();
  if (relu) p.activation = OutputActivation::relu();
  p.a_cache = a_cache;
  p.b_cache = b_cache;
  EXPECT_TRUE(sgemm(ctx, p, kernel));
  return c;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

struct Shape {
  int64_t m, n, k;
};
// Edge tiles of every kernel (4x8, 8x12, 6x16, 12x32), K in one, two and three blocks of 256,
// several column tasks.
const Shape kShapes[] = {{2, 1, 1},      {7, 37, 19},    {13, 33, 300},
                         {64, 100, 768}, {130, 700, 96}, {25, 97, 513}};

class PackedThreads : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { set_num_threads(GetParam()); }
  void TearDown() override { set_num_threads(0); }
};

TEST_P(PackedThreads, CachedPanelsGiveThePerCallProductBitForBit) {
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s : kShapes)
      for (bool b_transposed : {true, false}) {
        const std::string what = std::string(sgemm_kernel_name(kernel)) + " " +
                                 std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                 std::to_string(s.k) + (b_transposed ? " [N, K]" : " [K, N]");
        const Operands o = make_operands(1, s.m, s.n, s.k, static_cast<uint32_t>(s.m + s.n));
        const auto expected = product(o, 1, s.m, s.n, s.k, b_transposed, kernel, nullptr, nullptr);
        CountingCache b_cache, a_cache;
        EXPECT_TRUE(same_bits(product(o, 1, s.m, s.n, s.k, b_transposed, kernel, nullptr, &b_cache),
                              expected))
            << "B cached, " << what;
        EXPECT_TRUE(same_bits(product(o, 1, s.m, s.n, s.k, b_transposed, kernel, &a_cache, nullptr),
                              expected))
            << "A cached, " << what;
        EXPECT_EQ(b_cache.derivations, 1) << what;
        EXPECT_EQ(a_cache.derivations, 1) << what;
        // The second call packs nothing and reads the same panels.
        EXPECT_TRUE(same_bits(
            product(o, 1, s.m, s.n, s.k, b_transposed, kernel, &a_cache, &b_cache), expected))
            << "both cached, again, " << what;
        EXPECT_EQ(b_cache.derivations, 1) << what;
        EXPECT_EQ(a_cache.derivations, 1) << what;
        // Fewer rows of activations (a dynamic sequence length) reuse B's panels: they depend
        // on K and N only.
        if (s.m > 2) {
          const auto fewer = product(o, 1, s.m / 2, s.n, s.k, b_transposed, kernel, nullptr,
                                     nullptr, /*relu=*/true);
          EXPECT_TRUE(same_bits(product(o, 1, s.m / 2, s.n, s.k, b_transposed, kernel, nullptr,
                                        &b_cache, /*relu=*/true),
                                fewer))
              << "fewer rows, " << what;
          EXPECT_EQ(b_cache.derivations, 1) << what;
        }
      }
  }
}

// Decode after prefill: once a matrix product has packed a weight, a row vector times it reads
// the panels, not the stored weight (whose pages the host cache may have given back). Row 0 of
// the matrix product is the same micro-kernel arithmetic, so the row vector matches it bit for
// bit; the stored weight is overwritten with NaN first, so a read of it would show.
TEST_P(PackedThreads, ARowVectorReadsTheWeightsPanelsOncePacked) {
  const Shape shapes[] = {{8, 37, 19}, {8, 700, 96}, {8, 97, 513}, {8, 100, 768}};
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    for (const Shape& s : shapes) {
      const std::string what = std::string(sgemm_kernel_name(kernel)) + " " + std::to_string(s.n) +
                               "x" + std::to_string(s.k);
      Operands o = make_operands(1, s.m, s.n, s.k, static_cast<uint32_t>(s.n + s.k));
      CountingCache cache;
      const auto prefill = product(o, 1, s.m, s.n, s.k, true, kernel, nullptr, &cache);
      ASSERT_EQ(cache.derivations, 1) << what;
      std::fill(o.b.begin(), o.b.end(), NAN);
      const auto row = product(o, 1, 1, s.n, s.k, true, kernel, nullptr, &cache);
      EXPECT_TRUE(same_bits(row, std::vector<float>(prefill.begin(), prefill.begin() + s.n)))
          << what;
      EXPECT_EQ(cache.derivations, 1) << what;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, PackedThreads, ::testing::Values(1, 2));

TEST(SgemmPacked, EachMicroKernelGetsItsOwnPanels) {
  const Operands o = make_operands(1, 16, 40, 64, 3);
  CountingCache cache;
  int supported = 0;
  for (int kernel = 0; kernel < sgemm_kernel_count(); ++kernel) {
    if (!sgemm_kernel_supported(kernel)) continue;
    ++supported;
    const auto expected = product(o, 1, 16, 40, 64, true, kernel, nullptr, nullptr);
    EXPECT_TRUE(same_bits(product(o, 1, 16, 40, 64, true, kernel, nullptr, &cache), expected))
        << sgemm_kernel_name(kernel);
  }
  EXPECT_EQ(cache.derivations, supported);
}

TEST(SgemmPacked, ABroadcastConstantIsPackedOnceForTheBatch) {
  const Operands o = make_operands(3, 9, 21, 40, 5);
  CountingCache cache;
  const auto expected = product(o, 3, 9, 21, 40, true, -1, nullptr, nullptr);
  EXPECT_TRUE(same_bits(product(o, 3, 9, 21, 40, true, -1, nullptr, &cache), expected));
  EXPECT_EQ(cache.derivations, 1);
}

TEST(SgemmPacked, NotOneConstantMatrixIsNeverCached) {
  CountingCache cache;
  // A row vector times linear weights reads the weights as stored (the matrix-vector path),
  // and packs nothing for later calls.
  const Operands v = make_operands(1, 1, 300, 70, 7);
  const auto expected_v = product(v, 1, 1, 300, 70, true, -1, nullptr, nullptr);
  EXPECT_TRUE(same_bits(product(v, 1, 1, 300, 70, true, -1, nullptr, &cache), expected_v));
  // A batch of distinct A matrices is not one constant: packed per call.
  const Operands o = make_operands(2, 9, 21, 40, 9);
  const auto expected = product(o, 2, 9, 21, 40, true, -1, nullptr, nullptr);
  EXPECT_TRUE(same_bits(product(o, 2, 9, 21, 40, true, -1, &cache, nullptr), expected));
  EXPECT_EQ(cache.derivations, 0);
}

TEST(SgemmPacked, AFullCacheFallsBackToPackingPerCall) {
  CountingCache full(/*capacity=*/0);
  const Operands o = make_operands(1, 33, 50, 300, 11);
  const auto expected = product(o, 1, 33, 50, 300, true, -1, nullptr, nullptr);
  EXPECT_TRUE(same_bits(product(o, 1, 33, 50, 300, true, -1, &full, &full), expected));
  EXPECT_EQ(full.derivations, 0);
}

}  // namespace
}  // namespace pteron::optimized
