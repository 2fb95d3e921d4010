// The XNNPACK payload verifier's internals (not a public header): the Verifier, whose checks
// are split by what they verify (the files named in the class). The entry point is
// verify_payload (payload_verifier.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/xnnpack/runtime/payload_format.h"
#include "runtime/core/error.h"

namespace pteron::xnnpack::detail {

using fb::DataType;

inline constexpr uint32_t kNoProducer = 0xffffffffu;

// What the checks need to know about one tensor, indexed by id.
struct TensorInfo {
  const fb::Tensor* t = nullptr;
  DataType dtype = DataType::Invalid;
  uint32_t rank = 0;
  uint32_t dims[kMaxDims] = {};
  uint64_t numel = 1;
  bool constant = false;
  fb::ExternalKind external = fb::ExternalKind::Internal;
  uint32_t producer = kNoProducer;  // index of the node writing it
  bool consumed = false;            // read by some node
};

// "[1, 8, 8, 3]" into `buf`.
const char* dims_str(const uint32_t* dims, uint32_t rank, char* buf, size_t size);
bool positive_normal(float s);
// Output extent of a windowed op along one axis (XNNPACK's rule); false when the window does
// not fit the padded input.
bool window_output(uint64_t in, uint64_t pad_a, uint64_t pad_b, uint64_t kernel, uint64_t stride,
                   uint64_t dilation, bool same, uint64_t* out);

class Verifier {
 public:
  Verifier(const fb::Payload& p, size_t payload_size) : p_(p), payload_size_(payload_size) {}
  Error run();

 private:
  const TensorInfo& in(uint32_t i) const { return info_[inputs_[i]]; }
  const TensorInfo& out() const { return info_[outputs_[0]]; }

  // verify/tensors.cpp: the constant blob and every tensor
  Error check_blob();
  Error tensor_fail(uint32_t index, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  Error check_tensors();
  Error check_quant(uint32_t i, const TensorInfo& ti);
  Error check_constant(uint32_t i, const TensorInfo& ti);
  Error check_dim_order(uint32_t i, const TensorInfo& ti);

  // verify/nodes.cpp: every node's inputs, outputs and range; the per-op dispatch
  Error check_nodes();
  Error node_fail(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  Error node_unsupported(const char* fmt, ...) __attribute__((format(printf, 2, 3)));
  Error check_node_io();
  bool takes_range() const;
  Error check_range();
  Error arity(uint32_t min_inputs, uint32_t max_inputs);
  Error expect_dims(const char* what, const TensorInfo& t, const uint32_t* dims, uint32_t rank);
  Error expect_rank(const char* what, const TensorInfo& t, uint32_t rank);
  Error expect_constant(const char* what, const TensorInfo& t);
  Error expect_same_quant(const TensorInfo& a, const TensorInfo& b);
  Error expect_uniform_dtype(uint32_t count, bool allow_qint8);
  Error pads_zero_if_same(bool same, uint32_t t, uint32_t r, uint32_t b, uint32_t l);
  Error check_op();

  // verify/conv_linear.cpp: convolutions and fully connected
  Error check_weight_dtypes(bool allow_per_channel, uint32_t per_channel_dim);
  Error check_bias(uint32_t channels);
  template <typename ConvAttrs>
  Error check_filter_bias_output(const ConvAttrs& a, const uint32_t (&wdims)[4], uint32_t oc);
  Error check_conv2d(const fb::Conv2d& a);
  Error check_depthwise(const fb::DepthwiseConv2d& a);
  Error check_deconv2d(const fb::Deconv2d& a);
  Error check_fully_connected(const fb::FullyConnected& a);

  // verify/elementwise.cpp: binary, unary and prelu
  Error check_binary(const fb::Binary& a);
  Error check_unary(const fb::Unary& a);
  Error check_prelu();

  // verify/pool_shape.cpp: pools and shape operators
  Error check_pool(uint32_t pt, uint32_t pr, uint32_t pb, uint32_t pl, uint32_t kh, uint32_t kw,
                   uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, bool same);
  Error check_max_pool(const fb::MaxPool2d& a);
  Error check_avg_pool(const fb::AvgPool2d& a);
  Error check_pad(const fb::ConstantPad& a);
  Error check_reshape(const fb::StaticReshape& a);
  Error check_resize(const fb::ResizeBilinear2d& a);
  Error check_depth_to_space(const fb::DepthToSpace& a);

  const fb::Payload& p_;
  const size_t payload_size_;
  std::vector<TensorInfo> info_;
  uint32_t node_index_ = 0;
  const fb::Node* node_ = nullptr;
  uint32_t num_inputs_ = 0;
  uint32_t num_outputs_ = 0;
  uint32_t inputs_[3] = {};
  uint32_t outputs_[1] = {};
};

}  // namespace pteron::xnnpack::detail
