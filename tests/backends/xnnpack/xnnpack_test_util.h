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

namespace pteron::xnnpack::testing {

// A pteron tensor that owns its metadata and (by default) its data.
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
  template <typename T>
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

// A delegate initialised from a payload through the registered backend.
class Delegate {
 public:
  Delegate() = default;
  ~Delegate() {
    if (handle_ != nullptr) backend().destroy(handle_);
  }
  Delegate(const Delegate&) = delete;

  // Ok, or the error (its message in last_error_message()).
  Error init(const std::vector<uint8_t>& payload, std::vector<CompileSpecView> specs = {}) {
    BackendInitContext ctx{nullptr, "test"};
    Result<DelegateHandle*> h =
        backend().init(ctx, Span<const uint8_t>(payload.data(), payload.size()),
                       Span<const CompileSpecView>(specs.data(), specs.size()));
    if (!h.ok()) return h.error();
    handle_ = *h;
    return Error::Ok;
  }
  Error execute(std::vector<EValue*> args) {
    BackendExecuteContext ctx{nullptr, 0};
    return backend().execute(ctx, handle_, Span<EValue*>(args.data(), args.size()));
  }
  DelegateHandle* handle() const { return handle_; }

 private:
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
