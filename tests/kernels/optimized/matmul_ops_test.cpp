// Each optimized matmul op against the portable kernel of the same name, called through the
// registry: random shapes including edge sizes, float32 (the SGEMM, within 1e-5 relative to
// sqrt(K)) and float64 (handed to the portable kernel: identical results), and errors for bad
// arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

const KernelEntry* kernel_in(const char* name, const char* library) {
  for (const KernelEntry& e : registered_kernels())
    if (std::strcmp(e.name, name) == 0 && std::strcmp(e.library, library) == 0) return &e;
  return nullptr;
}

// A dense row-major tensor that owns its storage.
struct OwnedTensor {
  std::vector<int32_t> sizes, strides;
  std::vector<uint8_t> dim_order;
  std::vector<double> storage;  // 8-byte elements: room for float or double
  Tensor tensor;

  OwnedTensor(ScalarType dtype, std::vector<int32_t> shape) : sizes(std::move(shape)) {
    const int32_t dim = static_cast<int32_t>(sizes.size());
    strides.resize(sizes.size());
    dim_order.resize(sizes.size());
    int64_t numel = 1;
    for (int32_t d = dim - 1; d >= 0; --d) {
      strides[d] = static_cast<int32_t>(numel);
      numel *= sizes[d];
      dim_order[d] = static_cast<uint8_t>(d);
    }
    storage.assign(static_cast<size_t>(numel) + 1, 0.0);
    tensor = Tensor(dtype, dim, sizes.data(), dim_order.data(), strides.data(), storage.data());
  }
  double at(int64_t i) const {
    return tensor.dtype() == ScalarType::Float ? tensor.data<float>()[i] : tensor.data<double>()[i];
  }
  void fill(std::mt19937& rng) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (int64_t i = 0; i < tensor.numel(); ++i) {
      if (tensor.dtype() == ScalarType::Float) {
        tensor.data<float>()[i] = static_cast<float>(dist(rng));
      } else {
        tensor.data<double>()[i] = dist(rng);
      }
    }
  }
};

// Arguments of one call: inputs shared by both runs, and an out tensor per run.
struct Call {
  const char* op;
  std::deque<OwnedTensor> inputs;
  std::vector<EValue> values;  // schema order; the out slot is filled per run
  int out_index = -1;
  ScalarType dtype = ScalarType::Float;
  std::vector<int32_t> out_shape;

  OwnedTensor& add_tensor(std::vector<int32_t> shape, std::mt19937& rng) {
    inputs.emplace_back(dtype, std::move(shape));
    inputs.back().fill(rng);
    values.push_back(EValue::from_tensor(&inputs.back().tensor));
    return inputs.back();
  }
  void add_out(std::vector<int32_t> shape) {
    out_shape = std::move(shape);
    out_index = static_cast<int>(values.size());
    values.emplace_back();
  }

  // Runs the op from `library` into a fresh out tensor (NaN-filled: beta 0 must not read it).
  Error run(const char* library, OwnedTensor& out) {
    const KernelEntry* fn = kernel_in(op, library);
    EXPECT_NE(fn, nullptr) << op << " in " << library;
    if (fn == nullptr) return Error::NotFound;
    for (int64_t i = 0; i < out.tensor.numel(); ++i) {
      if (dtype == ScalarType::Float) {
        out.tensor.data<float>()[i] = NAN;
      } else {
        out.tensor.data<double>()[i] = NAN;
      }
    }
    std::vector<EValue> args = values;
    args[out_index] = EValue::from_tensor(&out.tensor);
    std::vector<EValue*> ptrs;
    for (EValue& v : args) ptrs.push_back(&v);
    static std::vector<uint8_t> scratch(32u << 20);
    MemoryAllocator allocator(scratch.data(), scratch.size());
    KernelContext ctx{&allocator};
    return call_kernel(*fn, ctx, Span<EValue*>(ptrs.data(), ptrs.size()));
  }

  // Worst difference between optimized and portable, relative to sqrt(K) + |portable|.
  double compare(int64_t k) {
    OwnedTensor expected(dtype, out_shape), actual(dtype, out_shape);
    EXPECT_EQ(run("portable", expected), Error::Ok) << op << ": " << last_error_message();
    EXPECT_EQ(run("optimized", actual), Error::Ok) << op << ": " << last_error_message();
    double worst = 0;
    for (int64_t i = 0; i < expected.tensor.numel(); ++i) {
      const double err = std::fabs(actual.at(i) - expected.at(i)) /
                         (std::sqrt(static_cast<double>(k)) + std::fabs(expected.at(i)));
      worst = std::isnan(err) ? INFINITY : std::max(worst, err);
    }
    return worst;
  }
};

constexpr double kFloatTolerance = 1e-5;

int32_t random_size(std::mt19937& rng, int32_t max) {
  // Mostly small and odd sizes, sometimes the edge cases 1 and 0.
  const int32_t r = std::uniform_int_distribution<int32_t>(0, 9)(rng);
  if (r == 0) return 1;
  return std::uniform_int_distribution<int32_t>(1, max)(rng);
}

TEST(OptimizedMatmulOps, LinearMatchesPortable) {
  std::mt19937 rng(1);
  for (ScalarType dtype : {ScalarType::Float, ScalarType::Double})
    for (int trial = 0; trial < 24; ++trial) {
      const int32_t m = random_size(rng, 140), n = random_size(rng, 100), k = random_size(rng, 300);
      const int bias_kind = trial % 3;  // none, [N], [M, N] (broadcast-copied)
      Call c{"aten::linear.out"};
      c.dtype = dtype;
      const bool batched = trial % 2 == 1;
      if (batched) {
        c.add_tensor({2, m, k}, rng);
      } else {
        c.add_tensor({m, k}, rng);
      }
      c.add_tensor({n, k}, rng);
      if (bias_kind == 0) {
        c.values.emplace_back();
      } else if (bias_kind == 1) {
        c.add_tensor({n}, rng);
      } else {
        c.add_tensor({m, n}, rng);
      }
      c.add_out(batched ? std::vector<int32_t>{2, m, n} : std::vector<int32_t>{m, n});
      const double err = c.compare(k);
      if (dtype == ScalarType::Double) {
        EXPECT_EQ(err, 0) << "double goes to the portable kernel";
      } else {
        EXPECT_LT(err, kFloatTolerance) << "linear " << m << "x" << k << " -> " << n;
      }
    }
}

TEST(OptimizedMatmulOps, MmAndBmmMatchPortable) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 20; ++trial) {
    const int32_t m = random_size(rng, 140), n = random_size(rng, 140), k = random_size(rng, 300);
    Call mm{"aten::mm.out"};
    mm.add_tensor({m, k}, rng);
    mm.add_tensor({k, n}, rng);
    mm.add_out({m, n});
    EXPECT_LT(mm.compare(k), kFloatTolerance) << "mm " << m << "x" << k << "x" << n;
    const int32_t b = random_size(rng, 5);
    Call bmm{"aten::bmm.out"};
    bmm.add_tensor({b, m, k}, rng);
    bmm.add_tensor({b, k, n}, rng);
    bmm.add_out({b, m, n});
    EXPECT_LT(bmm.compare(k), kFloatTolerance) << "bmm " << b << "x" << m << "x" << k << "x" << n;
  }
}

TEST(OptimizedMatmulOps, AddmmMatchesPortable) {
  std::mt19937 rng(3);
  const double scalars[][2] = {{1, 1}, {0, 1}, {1, 0.5}, {-2, 1.5}};  // beta, alpha
  for (int trial = 0; trial < 24; ++trial) {
    const int32_t m = random_size(rng, 140), n = random_size(rng, 100), k = random_size(rng, 300);
    Call c{"aten::addmm.out"};
    if (trial % 3 == 0) {
      c.add_tensor({n}, rng);
    } else if (trial % 3 == 1) {
      c.add_tensor({1, n}, rng);
    } else {
      c.add_tensor({m, n}, rng);
    }
    c.add_tensor({m, k}, rng);
    c.add_tensor({k, n}, rng);
    const double* s = scalars[trial % 4];
    c.values.push_back(EValue::from_double(s[0]));
    c.values.push_back(EValue::from_double(s[1]));
    c.add_out({m, n});
    EXPECT_LT(c.compare(k), kFloatTolerance)
        << "addmm " << m << "x" << k << "x" << n << " beta " << s[0] << " alpha " << s[1];
  }
}

TEST(OptimizedMatmulOps, BadShapesFailNamingTheOp) {
  std::mt19937 rng(4);
  Call c{"aten::mm.out"};
  c.add_tensor({3, 4}, rng);
  c.add_tensor({5, 6}, rng);
  c.add_out({3, 6});
  OwnedTensor out(ScalarType::Float, {3, 6});
  clear_error_message();
  EXPECT_NE(c.run("optimized", out), Error::Ok);
  EXPECT_NE(std::string(last_error_message()).find("aten::mm.out"), std::string::npos)
      << last_error_message();

  Call l{"aten::linear.out"};
  l.add_tensor({3, 4}, rng);
  l.add_tensor({5, 4}, rng);
  l.values.emplace_back();
  l.add_out({3, 6});  // wrong out shape
  OwnedTensor lout(ScalarType::Float, {3, 6});
  clear_error_message();
  EXPECT_NE(l.run("optimized", lout), Error::Ok);
  EXPECT_NE(std::string(last_error_message()).find("aten::linear.out"), std::string::npos)
      << last_error_message();
}

}  // namespace
}  // namespace pteron
