// Helpers for Vulkan delegate tests: owned pteron tensors, a delegate wrapper over the
// registered backend, and portable-kernel calls that serve as the reference.
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

namespace pteron::vulkan::testing {

class TestTensor {
 public:
  explicit TestTensor(std::vector<int32_t> sizes, ScalarType dtype = ScalarType::Float)
      : sizes_(std::move(sizes)) {
    for (size_t d = 0; d < sizes_.size(); ++d) dim_order_.push_back(static_cast<uint8_t>(d));
    strides_.resize(sizes_.size());
    tensor_ = Tensor(dtype, static_cast<int32_t>(sizes_.size()), sizes_.data(), dim_order_.data(),
                     strides_.data(), nullptr);
    storage_.resize(tensor_.nbytes() + 16);
    tensor_.set_data(storage_.data());
    value_ = EValue::from_tensor(&tensor_);
  }
  TestTensor(std::vector<int32_t> sizes, const std::vector<float>& values) : TestTensor(sizes) {
    std::memcpy(tensor_.mutable_data(), values.data(), values.size() * sizeof(float));
  }
  TestTensor(const TestTensor&) = delete;

  Tensor& tensor() { return tensor_; }
  EValue* value() { return &value_; }
  std::vector<float> read() const {
    std::vector<float> out(static_cast<size_t>(tensor_.numel()));
    std::memcpy(out.data(), tensor_.const_data(), out.size() * sizeof(float));
    return out;
  }

 private:
  std::vector<int32_t> sizes_;
  std::vector<uint8_t> dim_order_;
  std::vector<int32_t> strides_;
  std::vector<uint8_t> storage_;
  Tensor tensor_;
  EValue value_;
};

class Delegate {
 public:
  Delegate() = default;
  ~Delegate() {
    if (handle_ != nullptr) backend().destroy(handle_);
  }
  Delegate(const Delegate&) = delete;

  Error init(const std::vector<uint8_t>& payload) {
    BackendInitContext ctx{nullptr, "test"};
    Result<DelegateHandle*> h =
        backend().init(ctx, Span<const uint8_t>(payload.data(), payload.size()), {});
    if (!h.ok()) return h.error();
    handle_ = *h;
    return Error::Ok;
  }
  Error execute(std::vector<EValue*> args, ExecutionObserver* observer = nullptr) {
    BackendExecuteContext ctx{nullptr, 0, observer};
    return backend().execute(ctx, handle_, Span<EValue*>(args.data(), args.size()));
  }
  DelegateHandle* handle() const { return handle_; }

 private:
  DelegateHandle* handle_ = nullptr;
};

// Runs the portable kernel `name` ("aten::mm.out") on `args`.
inline void run_portable(const char* name, std::vector<EValue*> args) {
  const KernelEntry* k = nullptr;
  for (const KernelEntry& e : registered_kernels()) {
    if (strcmp(e.name, name) == 0 && strcmp(e.library, "portable") == 0) k = &e;
  }
  ASSERT_NE(k, nullptr) << name;
  KernelContext ctx;
  ASSERT_EQ(k->fn(ctx, Span<EValue*>(args.data(), args.size())), Error::Ok)
      << name << ": " << last_error_message();
}

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
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

}  // namespace pteron::vulkan::testing
