// Helpers every delegate backend's C++ tests share (XNNPACK, Vulkan): tensors that own their
// metadata and data, a delegate driven through a backend's init/execute/destroy, random data.
// Backend-specific references and tolerances stay in each backend's own test util.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "runtime/backend/backend.h"
#include "runtime/core/error.h"

namespace pteron::backend_testing {

// A pteron tensor that owns its metadata and (by default) its data; contiguous unless a dim
// order is given. 64 spare bytes: XNNPACK may read up to 16 bytes past a tensor.
class TestTensor {
 public:
  TestTensor(ScalarType dtype, std::vector<int32_t> sizes, std::vector<uint8_t> dim_order = {})
      : sizes_(std::move(sizes)), dim_order_(std::move(dim_order)) {
    if (dim_order_.empty()) {
      for (size_t d = 0; d < sizes_.size(); ++d) dim_order_.push_back(static_cast<uint8_t>(d));
    }
    strides_.resize(sizes_.size());
    tensor_ = Tensor(dtype, static_cast<int32_t>(sizes_.size()), sizes_.data(), dim_order_.data(),
                     strides_.data(), nullptr);
    storage_.resize(tensor_.nbytes() + 64);
    tensor_.set_data(storage_.data());
    value_ = EValue::from_tensor(&tensor_);
  }
  explicit TestTensor(std::vector<int32_t> sizes, ScalarType dtype = ScalarType::Float)
      : TestTensor(dtype, std::move(sizes)) {}
  // A Float tensor holding `values`.
  TestTensor(std::vector<int32_t> sizes, const std::vector<float>& values)
      : TestTensor(ScalarType::Float, std::move(sizes)) {
    fill(values);
  }
  TestTensor(const TestTensor&) = delete;

  Tensor& tensor() { return tensor_; }
  EValue* value() { return &value_; }
  template <typename T>
  T* data() {
    return tensor_.data<T>();
  }
  size_t numel() const { return static_cast<size_t>(tensor_.numel()); }
  // Points the tensor at memory the test owns (e.g. the end of a page).
  void set_data(void* data) { tensor_.set_data(data); }

  template <typename T>
  void fill(const std::vector<T>& values) {
    std::memcpy(tensor_.mutable_data(), values.data(), values.size() * sizeof(T));
  }
  template <typename T = float>
  std::vector<T> read() const {
    std::vector<T> out(static_cast<size_t>(tensor_.numel()));
    std::memcpy(out.data(), tensor_.const_data(), out.size() * sizeof(T));
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

// A delegate initialised from a payload through `backend`, destroyed with it.
class BackendDelegate {
 public:
  explicit BackendDelegate(BackendInterface& backend) : backend_(backend) {}
  ~BackendDelegate() {
    if (handle_ != nullptr) backend_.destroy(handle_);
  }
  BackendDelegate(const BackendDelegate&) = delete;

  // Ok, or the error (its message in last_error_message()).
  Error init(const std::vector<uint8_t>& payload, std::vector<CompileSpecView> specs = {}) {
    BackendInitContext ctx{nullptr, "test"};
    Result<DelegateHandle*> h =
        backend_.init(ctx, Span<const uint8_t>(payload.data(), payload.size()),
                      Span<const CompileSpecView>(specs.data(), specs.size()));
    if (!h.ok()) return h.error();
    handle_ = *h;
    return Error::Ok;
  }
  Error execute(std::vector<EValue*> args, ExecutionObserver* observer = nullptr) {
    BackendExecuteContext ctx{nullptr, 0, observer};
    return backend_.execute(ctx, handle_, Span<EValue*>(args.data(), args.size()));
  }
  DelegateHandle* handle() const { return handle_; }

 private:
  BackendInterface& backend_;
  DelegateHandle* handle_ = nullptr;
};

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

}  // namespace pteron::backend_testing
