// Checks every node shares: ids and data flow of its inputs and outputs, its fused output
// range, arity, dims and dtypes; and the per-operator dispatch to the op families.
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "backends/xnnpack/runtime/verify/verifier.h"

namespace pteron::xnnpack::detail {

const char* dims_str(const uint32_t* dims, uint32_t rank, char* buf, size_t size) {
  size_t n = static_cast<size_t>(snprintf(buf, size, "["));
  for (uint32_t i = 0; i < rank && n < size; ++i) {
    n += static_cast<size_t>(snprintf(buf + n, size - n, i ? ", %u" : "%u", dims[i]));
  }
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

bool positive_normal(float s) { return s > 0.0f && std::isnormal(s); }

bool window_output(uint64_t in, uint64_t pad_a, uint64_t pad_b, uint64_t kernel, uint64_t stride,
                   uint64_t dilation, bool same, uint64_t* out) {
  if (same) {
    *out = (in + stride - 1) / stride;
    return true;
  }
  const uint64_t effective = (kernel - 1) * dilation + 1;
  const uint64_t padded = in + pad_a + pad_b;
  if (padded < effective) return false;
  *out = (padded - effective) / stride + 1;
  return true;
}

Error Verifier::check_nodes() {
  const auto* nodes = p_.nodes();
  const uint32_t n = nodes ? nodes->size() : 0;
  if (n == 0) return fail(Error::InvalidProgram, "XNNPACK payload has no nodes");
  for (uint32_t k = 0; k < n; ++k) {
    node_index_ = k;
    node_ = nodes->Get(k);
    if (node_->op_type() == fb::Op::NONE || node_->op_type() > fb::Op::MAX ||
        node_->op() == nullptr) {
      return fail(Error::NotSupported, "XNNPACK payload node %u has unknown operator type %d", k,
                  static_cast<int>(node_->op_type()));
    }
    PTERON_TRY(check_node_io());
    PTERON_TRY(check_range());
    PTERON_TRY(check_op());
    for (uint32_t i = 0; i < num_inputs_; ++i) info_[inputs_[i]].consumed = true;
    for (uint32_t o = 0; o < num_outputs_; ++o) info_[outputs_[o]].producer = k;
  }
  return Error::Ok;
}

Error Verifier::node_fail(const char* fmt, ...) {
  char detail[192];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof(detail), fmt, args);
  va_end(args);
  return fail(Error::InvalidProgram, "XNNPACK payload node %u (%s): %s", node_index_,
              op_name(*node_), detail);
}

Error Verifier::node_unsupported(const char* fmt, ...) {
  char detail[192];
  va_list args;
  va_start(args, fmt);
  vsnprintf(detail, sizeof(detail), fmt, args);
  va_end(args);
  return fail(Error::NotSupported, "XNNPACK node %u (%s): %s", node_index_, op_name(*node_),
              detail);
}

// Ids in range; inputs available (constant, external input or produced earlier); outputs
// writable and produced once.
Error Verifier::check_node_io() {
  const auto* in = node_->inputs();
  const auto* out = node_->outputs();
  num_inputs_ = in ? in->size() : 0;
  num_outputs_ = out ? out->size() : 0;
  if (num_inputs_ > 3 || num_outputs_ > 1) {
    return node_fail("has %u inputs and %u outputs (at most 3 and 1)", num_inputs_, num_outputs_);
  }
  for (uint32_t i = 0; i < num_inputs_; ++i) {
    const uint32_t id = in->Get(i);
    if (id >= info_.size()) return node_fail("input %u is tensor %u, which does not exist", i, id);
    const TensorInfo& ti = info_[id];
    if (!ti.constant && ti.external != fb::ExternalKind::Input && ti.producer == kNoProducer) {
      return node_fail(
          "input %u (tensor %u) is not a constant, an external input or the "
          "output of an earlier node",
          i, id);
    }
    inputs_[i] = id;
  }
  for (uint32_t o = 0; o < num_outputs_; ++o) {
    const uint32_t id = out->Get(o);
    if (id >= info_.size()) return node_fail("output is tensor %u, which does not exist", id);
    const TensorInfo& ti = info_[id];
    if (ti.constant || ti.external == fb::ExternalKind::Input) {
      return node_fail("output tensor %u is a constant or an external input", id);
    }
    if (ti.producer != kNoProducer) {
      return node_fail("output tensor %u is already produced by node %u", id, ti.producer);
    }
    outputs_[o] = id;
  }
  return Error::Ok;
}

bool Verifier::takes_range() const {
  switch (node_->op_type()) {
    case fb::Op::Conv2d:
    case fb::Op::DepthwiseConv2d:
    case fb::Op::Deconv2d:
    case fb::Op::FullyConnected:
    case fb::Op::Clamp:
    case fb::Op::MaxPool2d:
    case fb::Op::AvgPool2d:
    case fb::Op::GlobalAvgPool2d:
      return true;
    case fb::Op::Binary: {
      const fb::BinaryOp op = node_->op_as_Binary()->op();
      return op == fb::BinaryOp::Add || op == fb::BinaryOp::Subtract ||
             op == fb::BinaryOp::Multiply || op == fb::BinaryOp::Divide;
    }
    default:
      return false;
  }
}

Error Verifier::check_range() {
  const float lo = node_->output_min();
  const float hi = node_->output_max();
  if (std::isnan(lo) || std::isnan(hi) || !(lo < hi)) {
    return node_fail("output range [%g, %g] is empty or NaN", static_cast<double>(lo),
                     static_cast<double>(hi));
  }
  if (!takes_range() && (lo != -INFINITY || hi != INFINITY)) {
    return node_fail("this operator takes no fused output range");
  }
  return Error::Ok;
}

Error Verifier::arity(uint32_t min_inputs, uint32_t max_inputs) {
  if (num_inputs_ < min_inputs || num_inputs_ > max_inputs || num_outputs_ != 1) {
    return node_fail("needs %u..%u inputs and 1 output, has %u and %u", min_inputs, max_inputs,
                     num_inputs_, num_outputs_);
  }
  return Error::Ok;
}

Error Verifier::expect_dims(const char* what, const TensorInfo& t, const uint32_t* dims,
                            uint32_t rank) {
  bool same = t.rank == rank;
  for (uint32_t d = 0; same && d < rank; ++d) same = t.dims[d] == dims[d];
  if (same) return Error::Ok;
  char want[80], have[80];
  return node_fail("%s (tensor %u) must have dims %s, has %s", what, t.t->id(),
                   dims_str(dims, rank, want, sizeof(want)),
                   dims_str(t.dims, t.rank, have, sizeof(have)));
}

Error Verifier::expect_rank(const char* what, const TensorInfo& t, uint32_t rank) {
  if (t.rank == rank) return Error::Ok;
  return node_fail("%s (tensor %u) must be %u-d, is %u-d", what, t.t->id(), rank, t.rank);
}

Error Verifier::expect_constant(const char* what, const TensorInfo& t) {
  if (t.constant) return Error::Ok;
  return node_unsupported("%s (tensor %u) must be a constant (this XNNPACK packs it at load)", what,
                          t.t->id());
}

Error Verifier::expect_same_quant(const TensorInfo& a, const TensorInfo& b) {
  if (a.dtype != DataType::QInt8) return Error::Ok;
  if (a.t->scale() == b.t->scale() && a.t->zero_point() == b.t->zero_point()) return Error::Ok;
  return node_unsupported("qint8 input and output need the same scale and zero point");
}

// All of `count` inputs and the output have one of the allowed dtypes (the same one).
Error Verifier::expect_uniform_dtype(uint32_t count, bool allow_qint8) {
  const DataType dt = out().dtype;
  bool ok = dt == DataType::Float32 || (allow_qint8 && dt == DataType::QInt8);
  for (uint32_t i = 0; ok && i < count; ++i) ok = in(i).dtype == dt;
  if (ok) return Error::Ok;
  return node_unsupported("dtypes (input %s, output %s) unsupported: this XNNPACK takes %s",
                          dtype_name(in(0).dtype), dtype_name(dt),
                          allow_qint8 ? "fp32 or qint8" : "fp32 only");
}

Error Verifier::pads_zero_if_same(bool same, uint32_t t, uint32_t r, uint32_t b, uint32_t l) {
  if (same && (t | r | b | l) != 0) return node_fail("same_padding needs explicit pads of 0");
  return Error::Ok;
}

Error Verifier::check_op() {
  switch (node_->op_type()) {
    case fb::Op::Conv2d:
      return check_conv2d(*node_->op_as_Conv2d());
    case fb::Op::DepthwiseConv2d:
      return check_depthwise(*node_->op_as_DepthwiseConv2d());
    case fb::Op::Deconv2d:
      return check_deconv2d(*node_->op_as_Deconv2d());
    case fb::Op::FullyConnected:
      return check_fully_connected(*node_->op_as_FullyConnected());
    case fb::Op::Binary:
      return check_binary(*node_->op_as_Binary());
    case fb::Op::Unary:
      return check_unary(*node_->op_as_Unary());
    case fb::Op::Clamp:
      PTERON_TRY(arity(1, 1));
      PTERON_TRY(expect_uniform_dtype(1, true));
      PTERON_TRY(expect_same_quant(in(0), out()));
      return expect_dims("output", out(), in(0).dims, in(0).rank);
    case fb::Op::Elu: {
      PTERON_TRY(arity(1, 1));
      PTERON_TRY(expect_uniform_dtype(1, true));
      if (!positive_normal(node_->op_as_Elu()->alpha())) {
        return node_fail("alpha must be positive and normal");
      }
      return expect_dims("output", out(), in(0).dims, in(0).rank);
    }
    case fb::Op::LeakyRelu:
      PTERON_TRY(arity(1, 1));
      PTERON_TRY(expect_uniform_dtype(1, false));
      if (!std::isfinite(node_->op_as_LeakyRelu()->negative_slope())) {
        return node_fail("negative_slope must be finite");
      }
      return expect_dims("output", out(), in(0).dims, in(0).rank);
    case fb::Op::PRelu:
      return check_prelu();
    case fb::Op::MaxPool2d:
      return check_max_pool(*node_->op_as_MaxPool2d());
    case fb::Op::AvgPool2d:
      return check_avg_pool(*node_->op_as_AvgPool2d());
    case fb::Op::GlobalAvgPool2d: {
      PTERON_TRY(arity(1, 1));
      PTERON_TRY(expect_uniform_dtype(1, true));
      PTERON_TRY(expect_rank("input", in(0), 4));
      const uint32_t dims[4] = {in(0).dims[0], 1, 1, in(0).dims[3]};
      return expect_dims("output", out(), dims, 4);
    }
    case fb::Op::ConstantPad:
      return check_pad(*node_->op_as_ConstantPad());
    case fb::Op::StaticReshape:
      return check_reshape(*node_->op_as_StaticReshape());
    case fb::Op::ResizeBilinear2d:
      return check_resize(*node_->op_as_ResizeBilinear2d());
    case fb::Op::DepthToSpace:
      return check_depth_to_space(*node_->op_as_DepthToSpace());
    default:
      return node_fail("unknown operator");  // excluded by check_nodes
  }
}

}  // namespace pteron::xnnpack::detail
