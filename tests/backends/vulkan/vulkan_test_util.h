// Helpers for Vulkan delegate tests: the shared tensors and delegate wrapper
// (tests/backends/common) bound to the Vulkan backend, and portable-kernel calls that serve as
// the reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backends/vulkan/aot/payload_builder.h"
#include "backends/vulkan/runtime/vulkan_backend.h"
#include "runtime/backend/backend.h"
#include "runtime/core/error.h"
#include "runtime/executor/method.h"
#include "runtime/kernel/kernel.h"
#include "tests/backends/common/backend_test_util.h"

namespace pteron::vulkan::testing {

using backend_testing::random_floats;
using backend_testing::TestTensor;

// A delegate initialised from a payload through the registered Vulkan backend.
class Delegate : public backend_testing::BackendDelegate {
 public:
  Delegate() : BackendDelegate(backend()) {}
};

// Runs the portable kernel `name` ("aten::mm.out") on `args`.
inline void run_portable(const char* name, std::vector<EValue*> args) {
  const KernelEntry* k = nullptr;
  for (const KernelEntry& e : registered_kernels()) {
    if (strcmp(e.name, name) == 0 && strcmp(e.library, "portable") == 0) k = &e;
  }
  ASSERT_NE(k, nullptr) << name;
  KernelContext ctx;
  ASSERT_EQ(call_kernel(*k, ctx, Span<EValue*>(args.data(), args.size())), Error::Ok)
      << name << ": " << last_error_message();
}

inline std::vector<uint32_t> u32(const std::vector<int32_t>& v) {
  return std::vector<uint32_t>(v.begin(), v.end());
}

inline size_t numel(const std::vector<int32_t>& v) {
  size_t n = 1;
  for (int32_t d : v) n *= static_cast<size_t>(d);
  return n;
}

// |got - want| <= atol + rtol * |want| everywhere.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, float rtol,
                         float atol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= atol + rtol * std::fabs(want[i]))) {
      if (++bad <= 3) ADD_FAILURE() << what << " [" << i << "]: " << got[i] << " vs " << want[i];
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

// The weights of the test MLP x[B, 24] -> linear(24 -> 32) + relu -> linear(32 -> 10)
// -> + r[B, 10] -> softmax, and that chain on the portable kernels (the reference the static
// and the dynamic Vulkan payloads of it are checked against).
struct MlpWeights {
  std::vector<float> w1 = random_floats(32 * 24, 1), b1 = random_floats(32, 2);
  std::vector<float> w2 = random_floats(10 * 32, 3), b2 = random_floats(10, 4);

  std::vector<float> reference(TestTensor& x, TestTensor& r, int32_t batch) const {
    TestTensor tw1({32, 24}, w1), tb1({32}, b1), tw2({10, 32}, w2), tb2({10}, b2);
    TestTensor h({batch, 32}), hr({batch, 32}), o({batch, 10}), s({batch, 10}), y({batch, 10});
    EValue one = EValue::from_double(1.0), dim = EValue::from_int(-1),
           no = EValue::from_bool(false);
    run_portable("aten::linear.out", {x.value(), tw1.value(), tb1.value(), h.value()});
    run_portable("aten::relu.out", {h.value(), hr.value()});
    run_portable("aten::linear.out", {hr.value(), tw2.value(), tb2.value(), o.value()});
    run_portable("aten::add.out", {o.value(), r.value(), &one, s.value()});
    run_portable("aten::_softmax.out", {s.value(), &dim, &no, y.value()});
    return y.read();
  }
};

}  // namespace pteron::vulkan::testing
