// Helpers for XNNPACK delegate tests: tensors the backend can bind, a delegate wrapper that
// runs init/execute/destroy directly, random data and quantisation references.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/xnnpack/aot/payload_builder.h"
#include "backends/xnnpack/runtime/xnnpack_backend.h"
#include "runtime/backend/backend.h"
#include "runtime/core/error.h"
#include "tests/backends/common/backend_test_util.h"

namespace pteron::xnnpack::testing {

using backend_testing::random_floats;
using backend_testing::TestTensor;

// A delegate initialised from a payload through the registered XNNPACK backend.
class Delegate : public backend_testing::BackendDelegate {
 public:
  Delegate() : BackendDelegate(backend()) {}
};

inline std::vector<int8_t> random_int8(size_t n, uint32_t seed, int lo = -128, int hi = 127) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(n);
  for (int8_t& x : v) x = static_cast<int8_t>(dist(gen));
  return v;
}

// fp32 results within 1e-5 relative of a double reference (absolute 1e-5 near zero).
inline void expect_close(const std::vector<float>& got, const std::vector<double>& want,
                         const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double tol = 1e-5 * std::max(1.0, std::fabs(want[i]));
    if (!(std::fabs(got[i] - want[i]) <= tol)) {
      if (++bad <= 5) {
        ADD_FAILURE() << what << "[" << i << "]: got " << got[i] << ", want " << want[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ";
}

// Real value -> int8 with round-half-to-even like the reference requantisation.
inline int quantize(double real, double scale, int zero_point) {
  const double q = std::nearbyint(real / scale) + zero_point;
  return static_cast<int>(std::min(127.0, std::max(-128.0, q)));
}

// int8 results within 1 LSB of the reference.
inline void expect_within_1lsb(const std::vector<int8_t>& got, const std::vector<int>& want,
                               const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > 1) {
      if (++bad <= 5) {
        ADD_FAILURE() << what << "[" << i << "]: got " << int{got[i]} << ", want " << want[i];
      }
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " elements differ";
}

}  // namespace pteron::xnnpack::testing

namespace pteron::xnnpack::testing {

// One contiguous input for run_graph.
template <typename T>
struct Input {
  std::vector<int32_t> sizes;
  std::vector<T> data;
};

inline ScalarType scalar_type_of(float) { return ScalarType::Float; }
inline ScalarType scalar_type_of(int8_t) { return ScalarType::Char; }

// Builds `b`, initialises a delegate, binds contiguous inputs to args 0.. and one output of
// `out_sizes` to the next arg, runs it and returns the output.
template <typename In, typename Out>
std::vector<Out> run_graph(const PayloadBuilder& b, const std::vector<Input<In>>& inputs,
                           const std::vector<int32_t>& out_sizes) {
  Delegate d;
  const Error err = d.init(b.build());
  EXPECT_EQ(err, Error::Ok) << last_error_message();
  if (err != Error::Ok) return {};
  std::vector<std::unique_ptr<TestTensor>> tensors;
  std::vector<EValue*> args;
  for (const Input<In>& in : inputs) {
    tensors.push_back(std::make_unique<TestTensor>(scalar_type_of(In{}), in.sizes));
    tensors.back()->fill(in.data);
    args.push_back(tensors.back()->value());
  }
  tensors.push_back(std::make_unique<TestTensor>(scalar_type_of(Out{}), out_sizes));
  args.push_back(tensors.back()->value());
  const Error run = d.execute(args);
  EXPECT_EQ(run, Error::Ok) << last_error_message();
  return tensors.back()->read<Out>();
}

inline std::vector<uint32_t> u32(const std::vector<int32_t>& v) {
  return std::vector<uint32_t>(v.begin(), v.end());
}

}  // namespace pteron::xnnpack::testing
