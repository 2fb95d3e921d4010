#include "backends/xnnpack/runtime/payload_verifier.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <vector>

namespace pteron {
namespace xnnpack {

const char* dtype_name(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
      return "fp32";
    case fb::DataType::Float16:
      return "fp16";
    case fb::DataType::QInt8:
      return "qint8";
    case fb::DataType::QUInt8:
      return "quint8";
    case fb::DataType::QInt32:
      return "qint32";
    case fb::DataType::QCInt8:
      return "qcint8";
    case fb::DataType::QCInt32:
      return "qcint32";
    default:
      return "invalid";
  }
}

size_t dtype_size(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
    case fb::DataType::QInt32:
    case fb::DataType::QCInt32:
      return 4;
    case fb::DataType::Float16:
      return 2;
    case fb::DataType::QInt8:
    case fb::DataType::QUInt8:
    case fb::DataType::QCInt8:
      return 1;
    default:
      return 0;
  }
}

namespace {

const char* binary_name(fb::BinaryOp op) {
  switch (op) {
    case fb::BinaryOp::Add:
      return "add";
    case fb::BinaryOp::Subtract:
      return "subtract";
    case fb::BinaryOp::Multiply:
      return "multiply";
    case fb::BinaryOp::Divide:
      return "divide";
    case fb::BinaryOp::Maximum:
      return "maximum";
    case fb::BinaryOp::Minimum:
      return "minimum";
    case fb::BinaryOp::SquaredDifference:
      return "squared_difference";
  }
  return "binary?";
}

const char* unary_name(fb::UnaryOp op) {
  switch (op) {
    case fb::UnaryOp::Abs:
      return "abs";
    case fb::UnaryOp::BankersRounding:
      return "bankers_rounding";
    case fb::UnaryOp::Ceiling:
      return "ceiling";
    case fb::UnaryOp::Floor:
      return "floor";
    case fb::UnaryOp::Negate:
      return "negate";
    case fb::UnaryOp::Square:
      return "square";
    case fb::UnaryOp::SquareRoot:
      return "square_root";
    case fb::UnaryOp::Hardswish:
      return "hardswish";
    case fb::UnaryOp::Sigmoid:
      return "sigmoid";
    case fb::UnaryOp::Softmax:
      return "softmax";
    case fb::UnaryOp::Convert:
      return "convert";
  }
  return "unary?";
}

}  // namespace

const char* op_name(const fb::Node& node) {
  switch (node.op_type()) {
    case fb::Op::Conv2d:
      return "conv2d";
    case fb::Op::DepthwiseConv2d:
      return "depthwise_conv2d";
    case fb::Op::Deconv2d:
      return "deconv2d";
    case fb::Op::FullyConnected:
      return "fully_connected";
    case fb::Op::Binary:
      return binary_name(node.op_as_Binary()->op());
    case fb::Op::Unary:
      return unary_name(node.op_as_Unary()->op());
    case fb::Op::Clamp:
      return "clamp";
    case fb::Op::Elu:
      return "elu";
    case fb::Op::LeakyRelu:
      return "leaky_relu";
    case fb::Op::PRelu:
      return "prelu";
    case fb::Op::MaxPool2d:
      return "max_pool2d";
    case fb::Op::AvgPool2d:
      return "avg_pool2d";
    case fb::Op::GlobalAvgPool2d:
      return "global_avg_pool2d";
    case fb::Op::ConstantPad:
      return "constant_pad";
    case fb::Op::StaticReshape:
      return "static_reshape";
    case fb::Op::ResizeBilinear2d:
      return "resize_bilinear2d";
    case fb::Op::DepthToSpace:
      return "depth_to_space";
    default:
      return "?";
  }
}

namespace {

using fb::DataType;

constexpr uint32_t kNoProducer = 0xffffffffu;

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
const char* dims_str(const uint32_t* dims, uint32_t rank, char* buf, size_t size) {
  size_t n = static_cast<size_t>(snprintf(buf, size, "["));
  for (uint32_t i = 0; i < rank && n < size; ++i) {
    n += static_cast<size_t>(snprintf(buf + n, size - n, i ? ", %u" : "%u", dims[i]));
  }
  if (n < size) snprintf(buf + n, size - n, "]");
  return buf;
}

bool positive_normal(float s) { return s > 0.0f && std::isnormal(s); }

// Output extent of a windowed op along one axis (XNNPACK's rule); false when the window does
// not fit the padded input.
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

class Verifier {
 public:
  Verifier(const fb::Payload& p, size_t payload_size) : p_(p), payload_size_(payload_size) {}

  Error run() {
    if (p_.version() != kPayloadVersion) {
      return fail(Error::NotSupported,
                  "XNNPACK payload version %u is not supported (this runtime reads version %u)",
                  p_.version(), kPayloadVersion);
    }
    PTERON_TRY(check_blob());
    PTERON_TRY(check_tensors());
    PTERON_TRY(check_nodes());
    for (size_t id = 0; id < info_.size(); ++id) {
      const TensorInfo& ti = info_[id];
      if (ti.external == fb::ExternalKind::Output && ti.producer == kNoProducer) {
        return fail(Error::InvalidProgram,
                    "XNNPACK payload: external output tensor %zu is not produced by any node", id);
      }
      // XNNPACK's optimizer deletes values nobody reads but keeps their producer, which then
      // writes through a null pointer.
      if (ti.producer != kNoProducer && !ti.consumed && ti.external != fb::ExternalKind::Output) {
        return fail(Error::InvalidProgram,
                    "XNNPACK payload: tensor %zu (output of node %u) is never used; make it an "
                    "external output or drop its node",
                    id, ti.producer);
      }
    }
    return Error::Ok;
  }

 private:
  Error check_blob() {
    const uint64_t offset = p_.constant_data_offset();
    const uint64_t size = p_.constant_data_size();
    if (offset % kConstantAlignment != 0 || offset > payload_size_ ||
        size > payload_size_ - offset) {
      return fail(Error::InvalidProgram,
                  "XNNPACK payload: constant blob [%llu, +%llu) is misaligned or outside the "
                  "%zu-byte payload",
                  static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                  payload_size_);
    }
    return Error::Ok;
  }

  Error tensor_fail(uint32_t index, const char* fmt, ...) __attribute__((format(printf, 3, 4))) {
    char detail[192];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof(detail), fmt, args);
    va_end(args);
    return fail(Error::InvalidProgram, "XNNPACK payload tensor #%u: %s", index, detail);
  }

  Error check_tensors() {
    const auto* tensors = p_.tensors();
    const uint32_t n = tensors ? tensors->size() : 0;
    if (n == 0) return fail(Error::InvalidProgram, "XNNPACK payload has no tensors");
    if (p_.num_args() >= (1u << 20)) {
      return fail(Error::InvalidProgram, "XNNPACK payload: num_args %u is implausible",
                  p_.num_args());
    }
    info_.assign(n, TensorInfo{});
    std::vector<bool> arg_used(p_.num_args(), false);
    for (uint32_t i = 0; i < n; ++i) {
      const fb::Tensor* t = tensors->Get(i);
      const uint32_t id = t->id();
      if (id >= n) return tensor_fail(i, "id %u is out of range (%u tensors)", id, n);
      TensorInfo& ti = info_[id];
      if (ti.t != nullptr) return tensor_fail(i, "id %u is used twice", id);
      ti.t = t;
      ti.dtype = t->dtype();
      switch (ti.dtype) {
        case DataType::Float32:
        case DataType::Float16:
        case DataType::QInt8:
        case DataType::QInt32:
        case DataType::QCInt8:
        case DataType::QCInt32:
          break;
        case DataType::QUInt8:
          return fail(Error::NotSupported, "XNNPACK payload tensor %u: quint8 is not supported",
                      id);
        default:
          return tensor_fail(i, "id %u has invalid dtype %d", id, static_cast<int>(ti.dtype));
      }
      const auto* dims = t->dims();
      ti.rank = dims ? dims->size() : 0;
      if (ti.rank > kMaxDims) {
        return tensor_fail(i, "tensor %u has %u dims; XNNPACK allows at most %zu", id, ti.rank,
                           kMaxDims);
      }
      for (uint32_t d = 0; d < ti.rank; ++d) {
        const uint32_t v = dims->Get(d);
        if (v == 0 || v > kMaxDimSize) {
          return tensor_fail(i, "tensor %u dim %u is %u (must be 1 .. 2^31-1)", id, d, v);
        }
        ti.dims[d] = v;
        ti.numel *= v;
        if (ti.numel * dtype_size(ti.dtype) > kMaxTensorBytes) {
          return tensor_fail(i, "tensor %u is larger than 2^36 bytes", id);
        }
      }
      PTERON_TRY(check_quant(i, ti));
      ti.external = t->external();
      if (ti.external != fb::ExternalKind::Internal && ti.external != fb::ExternalKind::Input &&
          ti.external != fb::ExternalKind::Output) {
        return tensor_fail(i, "tensor %u has invalid external kind %d", id,
                           static_cast<int>(ti.external));
      }
      ti.constant = t->is_constant();
      if (ti.constant) PTERON_TRY(check_constant(i, ti));
      if (ti.external != fb::ExternalKind::Internal) {
        if (ti.constant) return tensor_fail(i, "tensor %u is both constant and external", id);
        if (ti.dtype == DataType::QCInt8 || ti.dtype == DataType::QCInt32) {
          return tensor_fail(i, "tensor %u: per-channel %s cannot be external", id,
                             dtype_name(ti.dtype));
        }
        const uint32_t arg = t->arg_index();
        if (arg >= arg_used.size()) {
          return tensor_fail(i, "tensor %u: arg_index %u is out of range (%u args)", id, arg,
                             p_.num_args());
        }
        if (arg_used[arg]) return tensor_fail(i, "tensor %u: arg_index %u is bound twice", id, arg);
        arg_used[arg] = true;
        PTERON_TRY(check_dim_order(i, ti));
      }
    }
    return Error::Ok;
  }

  Error check_quant(uint32_t i, const TensorInfo& ti) {
    const fb::Tensor* t = ti.t;
    const uint32_t id = t->id();
    switch (ti.dtype) {
      case DataType::QInt8:
        if (t->zero_point() < -128 || t->zero_point() > 127) {
          return tensor_fail(i, "tensor %u: qint8 zero point %d is outside [-128, 127]", id,
                             t->zero_point());
        }
        [[fallthrough]];
      case DataType::QInt32:
        if (ti.dtype == DataType::QInt32 && t->zero_point() != 0) {
          return tensor_fail(i, "tensor %u: qint32 zero point must be 0, not %d", id,
                             t->zero_point());
        }
        if (!positive_normal(t->scale())) {
          return tensor_fail(i, "tensor %u: scale %g must be positive, finite and normal", id,
                             static_cast<double>(t->scale()));
        }
        return Error::Ok;
      case DataType::QCInt8:
      case DataType::QCInt32: {
        const uint32_t cd = t->channel_dim();
        if (cd >= ti.rank) {
          return tensor_fail(i, "tensor %u: channel_dim %u is out of range for rank %u", id, cd,
                             ti.rank);
        }
        const auto* scales = t->channel_scales();
        const uint32_t count = scales ? scales->size() : 0;
        if (count != ti.dims[cd]) {
          return tensor_fail(i, "tensor %u has %u channel scales for %u channels", id, count,
                             ti.dims[cd]);
        }
        // This XNNPACK checks scales[0 .. dims[0]) whatever channel_dim is; keep that read
        // inside the vector.
        if (ti.dims[0] > count) {
          return tensor_fail(i, "tensor %u: per-channel dims[0] (%u) exceeds the channel count", id,
                             ti.dims[0]);
        }
        for (uint32_t c = 0; c < count; ++c) {
          if (!positive_normal(scales->Get(c))) {
            return tensor_fail(i, "tensor %u: channel %u scale %g must be positive and normal", id,
                               c, static_cast<double>(scales->Get(c)));
          }
        }
        return Error::Ok;
      }
      default:
        return Error::Ok;
    }
  }

  Error check_constant(uint32_t i, const TensorInfo& ti) {
    const fb::Tensor* t = ti.t;
    const uint64_t nbytes = ti.numel * dtype_size(ti.dtype);
    const uint64_t offset = t->constant_offset();
    const uint64_t size = t->constant_size();
    const uint64_t blob = p_.constant_data_size();
    if (size != nbytes) {
      return tensor_fail(i, "constant %u has %llu bytes; its dims and dtype need %llu", t->id(),
                         static_cast<unsigned long long>(size),
                         static_cast<unsigned long long>(nbytes));
    }
    // XNNPACK may read kExtraBytes past a constant it reads at run time (e.g. a static add
    // operand), so those must lie inside the blob too.
    if (offset % kConstantAlignment != 0 || offset > blob || size + kExtraBytes > blob - offset) {
      return tensor_fail(i,
                         "constant %u range [%llu, +%llu) (+%zu extra bytes) is misaligned or "
                         "outside the %llu-byte constant blob",
                         t->id(), static_cast<unsigned long long>(offset),
                         static_cast<unsigned long long>(size), kExtraBytes,
                         static_cast<unsigned long long>(blob));
    }
    return Error::Ok;
  }

  Error check_dim_order(uint32_t i, const TensorInfo& ti) {
    const auto* order = ti.t->dim_order();
    if (order == nullptr || order->size() == 0) return Error::Ok;
    if (order->size() != ti.rank) {
      return tensor_fail(i, "tensor %u: dim_order has %u entries for rank %u", ti.t->id(),
                         order->size(), ti.rank);
    }
    uint32_t seen = 0;
    for (uint32_t d = 0; d < ti.rank; ++d) {
      const uint8_t v = order->Get(d);
      if (v >= ti.rank || (seen & (1u << v)) != 0) {
        return tensor_fail(i, "tensor %u: dim_order is not a permutation of 0..%u", ti.t->id(),
                           ti.rank - 1);
      }
      seen |= 1u << v;
    }
    return Error::Ok;
  }

  // ---- nodes ----

  Error check_nodes() {
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

  Error node_fail(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char detail[192];
    va_list args;
    va_start(args, fmt);
    vsnprintf(detail, sizeof(detail), fmt, args);
    va_end(args);
    return fail(Error::InvalidProgram, "XNNPACK payload node %u (%s): %s", node_index_,
                op_name(*node_), detail);
  }
  Error node_unsupported(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
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
  Error check_node_io() {
    const auto* in = node_->inputs();
    const auto* out = node_->outputs();
    num_inputs_ = in ? in->size() : 0;
    num_outputs_ = out ? out->size() : 0;
    if (num_inputs_ > 3 || num_outputs_ > 1) {
      return node_fail("has %u inputs and %u outputs (at most 3 and 1)", num_inputs_, num_outputs_);
    }
    for (uint32_t i = 0; i < num_inputs_; ++i) {
      const uint32_t id = in->Get(i);
      if (id >= info_.size())
        return node_fail("input %u is tensor %u, which does not exist", i, id);
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

  bool takes_range() const {
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

  Error check_range() {
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

  Error arity(uint32_t min_inputs, uint32_t max_inputs) {
    if (num_inputs_ < min_inputs || num_inputs_ > max_inputs || num_outputs_ != 1) {
      return node_fail("needs %u..%u inputs and 1 output, has %u and %u", min_inputs, max_inputs,
                       num_inputs_, num_outputs_);
    }
    return Error::Ok;
  }

  const TensorInfo& in(uint32_t i) const { return info_[inputs_[i]]; }
  const TensorInfo& out() const { return info_[outputs_[0]]; }

  Error expect_dims(const char* what, const TensorInfo& t, const uint32_t* dims, uint32_t rank) {
    bool same = t.rank == rank;
    for (uint32_t d = 0; same && d < rank; ++d) same = t.dims[d] == dims[d];
    if (same) return Error::Ok;
    char want[80], have[80];
    return node_fail("%s (tensor %u) must have dims %s, has %s", what, t.t->id(),
                     dims_str(dims, rank, want, sizeof(want)),
                     dims_str(t.dims, t.rank, have, sizeof(have)));
  }
  Error expect_rank(const char* what, const TensorInfo& t, uint32_t rank) {
    if (t.rank == rank) return Error::Ok;
    return node_fail("%s (tensor %u) must be %u-d, is %u-d", what, t.t->id(), rank, t.rank);
  }
  Error expect_constant(const char* what, const TensorInfo& t) {
    if (t.constant) return Error::Ok;
    return node_unsupported("%s (tensor %u) must be a constant (this XNNPACK packs it at load)",
                            what, t.t->id());
  }
  Error expect_same_quant(const TensorInfo& a, const TensorInfo& b) {
    if (a.dtype != DataType::QInt8) return Error::Ok;
    if (a.t->scale() == b.t->scale() && a.t->zero_point() == b.t->zero_point()) return Error::Ok;
    return node_unsupported("qint8 input and output need the same scale and zero point");
  }
  // All of `count` inputs and the output have one of the allowed dtypes (the same one).
  Error expect_uniform_dtype(uint32_t count, bool allow_qint8) {
    const DataType dt = out().dtype;
    bool ok = dt == DataType::Float32 || (allow_qint8 && dt == DataType::QInt8);
    for (uint32_t i = 0; ok && i < count; ++i) ok = in(i).dtype == dt;
    if (ok) return Error::Ok;
    return node_unsupported("dtypes (input %s, output %s) unsupported: this XNNPACK takes %s",
                            dtype_name(in(0).dtype), dtype_name(dt),
                            allow_qint8 ? "fp32 or qint8" : "fp32 only");
  }
  Error pads_zero_if_same(bool same, uint32_t t, uint32_t r, uint32_t b, uint32_t l) {
    if (same && (t | r | b | l) != 0) return node_fail("same_padding needs explicit pads of 0");
    return Error::Ok;
  }

  // Filter/bias dtypes for convolutions and fully connected.
  Error check_weight_dtypes(bool allow_per_channel, uint32_t per_channel_dim) {
    const DataType x = in(0).dtype;
    const DataType w = in(1).dtype;
    const DataType y = out().dtype;
    const bool has_bias = num_inputs_ == 3;
    const DataType b = has_bias ? in(2).dtype : DataType::Invalid;
    if (x == DataType::Float32 && w == DataType::Float32 && y == DataType::Float32 &&
        (!has_bias || b == DataType::Float32)) {
      return Error::Ok;
    }
    if (x == DataType::QInt8 && y == DataType::QInt8 && w == DataType::QInt8 &&
        (!has_bias || b == DataType::QInt32)) {
      if (in(1).t->zero_point() != 0) {
        return node_unsupported("qint8 filter zero point must be 0 (symmetric), is %d",
                                in(1).t->zero_point());
      }
      return Error::Ok;
    }
    if (x == DataType::QInt8 && y == DataType::QInt8 && w == DataType::QCInt8 &&
        (!has_bias || b == DataType::QCInt32)) {
      if (!allow_per_channel) {
        return node_unsupported(
            "per-channel (qcint8) weights are not supported by this XNNPACK "
            "for this operator; lower it as a 1x1 conv2d");
      }
      if (in(1).t->channel_dim() != per_channel_dim) {
        return node_fail("qcint8 filter channel_dim must be %u", per_channel_dim);
      }
      if (has_bias && in(2).t->channel_dim() != 0) {
        return node_fail("qcint32 bias channel_dim must be 0");
      }
      return Error::Ok;
    }
    return node_unsupported("dtypes input %s, filter %s, bias %s, output %s are unsupported",
                            dtype_name(x), dtype_name(w), has_bias ? dtype_name(b) : "none",
                            dtype_name(y));
  }

  Error check_bias(uint32_t channels) {
    if (num_inputs_ < 3) return Error::Ok;
    PTERON_TRY(expect_constant("bias", in(2)));
    const uint32_t dims[1] = {channels};
    return expect_dims("bias", in(2), dims, 1);
  }

  Error check_op() {
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

  // Convolution and depthwise convolution: a constant filter of the given dims, an optional bias
  // of oc elements, and an NHWC output of the window's size (attrs share their accessor names).
  template <typename ConvAttrs>
  Error check_filter_bias_output(const ConvAttrs& a, const uint32_t (&wdims)[4], uint32_t oc) {
    PTERON_TRY(expect_constant("filter", in(1)));
    PTERON_TRY(expect_dims("filter", in(1), wdims, 4));
    PTERON_TRY(check_bias(oc));
    const TensorInfo& x = in(0);
    uint64_t oh, ow;
    if (!window_output(x.dims[1], a.padding_top(), a.padding_bottom(), a.kernel_height(),
                       a.stride_height(), a.dilation_height(), a.same_padding(), &oh) ||
        !window_output(x.dims[2], a.padding_left(), a.padding_right(), a.kernel_width(),
                       a.stride_width(), a.dilation_width(), a.same_padding(), &ow)) {
      return node_fail("the dilated kernel is larger than the padded input");
    }
    const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(oh), static_cast<uint32_t>(ow), oc};
    return expect_dims("output", out(), odims, 4);
  }

  Error check_conv2d(const fb::Conv2d& a) {
    PTERON_TRY(arity(2, 3));
    if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
        a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
        a.groups() == 0 || a.group_input_channels() == 0 || a.group_output_channels() == 0) {
      return node_fail("kernel, stride, dilation, groups and channel counts must be >= 1");
    }
    PTERON_TRY(pads_zero_if_same(a.same_padding(), a.padding_top(), a.padding_right(),
                                 a.padding_bottom(), a.padding_left()));
    const uint64_t ic = uint64_t{a.groups()} * a.group_input_channels();
    const uint64_t oc = uint64_t{a.groups()} * a.group_output_channels();
    if (ic > kMaxDimSize || oc > kMaxDimSize) return node_fail("channel count overflows");
    PTERON_TRY(check_weight_dtypes(true, 0));
    PTERON_TRY(expect_rank("input", in(0), 4));
    const TensorInfo& x = in(0);
    if (x.dims[3] != ic) {
      return node_fail("input has %u channels; groups * group_input_channels is %llu", x.dims[3],
                       static_cast<unsigned long long>(ic));
    }
    const uint32_t wdims[4] = {static_cast<uint32_t>(oc), a.kernel_height(), a.kernel_width(),
                               a.group_input_channels()};
    return check_filter_bias_output(a, wdims, static_cast<uint32_t>(oc));
  }

  Error check_depthwise(const fb::DepthwiseConv2d& a) {
    PTERON_TRY(arity(2, 3));
    if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
        a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
        a.depth_multiplier() == 0 || a.input_channels() == 0) {
      return node_fail("kernel, stride, dilation, depth multiplier and channels must be >= 1");
    }
    PTERON_TRY(pads_zero_if_same(a.same_padding(), a.padding_top(), a.padding_right(),
                                 a.padding_bottom(), a.padding_left()));
    const uint64_t oc = uint64_t{a.input_channels()} * a.depth_multiplier();
    if (oc > kMaxDimSize) return node_fail("channel count overflows");
    PTERON_TRY(check_weight_dtypes(true, 3));
    PTERON_TRY(expect_rank("input", in(0), 4));
    const TensorInfo& x = in(0);
    if (x.dims[3] != a.input_channels()) {
      return node_fail("input has %u channels; input_channels is %u", x.dims[3],
                       a.input_channels());
    }
    const uint32_t wdims[4] = {1, a.kernel_height(), a.kernel_width(), static_cast<uint32_t>(oc)};
    return check_filter_bias_output(a, wdims, static_cast<uint32_t>(oc));
  }

  Error check_deconv2d(const fb::Deconv2d& a) {
    PTERON_TRY(arity(2, 3));
    if (a.kernel_height() == 0 || a.kernel_width() == 0 || a.stride_height() == 0 ||
        a.stride_width() == 0 || a.dilation_height() == 0 || a.dilation_width() == 0 ||
        a.groups() == 0 || a.group_input_channels() == 0 || a.group_output_channels() == 0) {
      return node_fail("kernel, stride, dilation, groups and channel counts must be >= 1");
    }
    if (a.adjustment_height() >= a.stride_height() || a.adjustment_width() >= a.stride_width()) {
      return node_fail("adjustment must be smaller than the stride");
    }
    const uint64_t ic = uint64_t{a.groups()} * a.group_input_channels();
    const uint64_t oc = uint64_t{a.groups()} * a.group_output_channels();
    if (ic > kMaxDimSize || oc > kMaxDimSize) return node_fail("channel count overflows");
    PTERON_TRY(check_weight_dtypes(false, 0));
    PTERON_TRY(expect_rank("input", in(0), 4));
    const TensorInfo& x = in(0);
    if (x.dims[3] != ic) {
      return node_fail("input has %u channels; groups * group_input_channels is %llu", x.dims[3],
                       static_cast<unsigned long long>(ic));
    }
    PTERON_TRY(expect_constant("filter", in(1)));
    const uint32_t wdims[4] = {static_cast<uint32_t>(oc), a.kernel_height(), a.kernel_width(),
                               a.group_input_channels()};
    PTERON_TRY(expect_dims("filter", in(1), wdims, 4));
    PTERON_TRY(check_bias(static_cast<uint32_t>(oc)));
    int64_t ext[2];
    const uint32_t in_hw[2] = {x.dims[1], x.dims[2]};
    const uint32_t stride[2] = {a.stride_height(), a.stride_width()};
    const uint32_t adj[2] = {a.adjustment_height(), a.adjustment_width()};
    const uint32_t kernel[2] = {a.kernel_height(), a.kernel_width()};
    const uint32_t dil[2] = {a.dilation_height(), a.dilation_width()};
    const uint32_t pad[2] = {a.padding_top(), a.padding_left()};
    const uint32_t pad2[2] = {a.padding_bottom(), a.padding_right()};
    for (int d = 0; d < 2; ++d) {
      ext[d] = int64_t{stride[d]} * (in_hw[d] - 1) + adj[d] + (int64_t{kernel[d]} - 1) * dil[d] +
               1 - int64_t{pad[d]} - int64_t{pad2[d]};
      if (ext[d] < 1 || ext[d] > static_cast<int64_t>(kMaxDimSize)) {
        return node_fail("padding leaves an empty or oversized output");
      }
    }
    const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(ext[0]),
                               static_cast<uint32_t>(ext[1]), static_cast<uint32_t>(oc)};
    return expect_dims("output", out(), odims, 4);
  }

  Error check_fully_connected(const fb::FullyConnected& a) {
    PTERON_TRY(arity(2, 3));
    PTERON_TRY(check_weight_dtypes(false, 0));
    PTERON_TRY(expect_constant("filter", in(1)));
    PTERON_TRY(expect_rank("filter", in(1), 2));
    const uint32_t in_ch = a.transpose_weights() ? in(1).dims[0] : in(1).dims[1];
    const uint32_t out_ch = a.transpose_weights() ? in(1).dims[1] : in(1).dims[0];
    PTERON_TRY(check_bias(out_ch));
    const TensorInfo& x = in(0);
    if (a.reshape_2d()) {
      if (x.numel % in_ch != 0) {
        return node_fail("input has %llu elements, not a multiple of %u input channels",
                         static_cast<unsigned long long>(x.numel), in_ch);
      }
      const uint32_t odims[2] = {static_cast<uint32_t>(x.numel / in_ch), out_ch};
      return expect_dims("output", out(), odims, 2);
    }
    if (x.rank == 0 || x.dims[x.rank - 1] != in_ch) {
      return node_fail("input's last dim must be the %u input channels", in_ch);
    }
    uint32_t odims[kMaxDims];
    for (uint32_t d = 0; d < x.rank; ++d) odims[d] = x.dims[d];
    odims[x.rank - 1] = out_ch;
    return expect_dims("output", out(), odims, x.rank);
  }

  Error check_binary(const fb::Binary& a) {
    PTERON_TRY(arity(2, 2));
    const bool qint8_ok = a.op() == fb::BinaryOp::Add || a.op() == fb::BinaryOp::Subtract ||
                          a.op() == fb::BinaryOp::Multiply;
    if (static_cast<int>(a.op()) > static_cast<int>(fb::BinaryOp::MAX)) {
      return node_fail("unknown binary operator %d", static_cast<int>(a.op()));
    }
    PTERON_TRY(expect_uniform_dtype(2, qint8_ok));
    // Numpy broadcasting, aligned at the last dim.
    const TensorInfo& x = in(0);
    const TensorInfo& y = in(1);
    const uint32_t rank = x.rank > y.rank ? x.rank : y.rank;
    uint32_t dims[kMaxDims];
    for (uint32_t d = 0; d < rank; ++d) {
      const uint32_t xd = d + x.rank >= rank ? x.dims[d + x.rank - rank] : 1;
      const uint32_t yd = d + y.rank >= rank ? y.dims[d + y.rank - rank] : 1;
      if (xd != yd && xd != 1 && yd != 1) {
        return node_fail("inputs do not broadcast (dim %u: %u vs %u)", d, xd, yd);
      }
      dims[d] = xd == 1 ? yd : xd;
    }
    return expect_dims("output", out(), dims, rank);
  }

  Error check_unary(const fb::Unary& a) {
    PTERON_TRY(arity(1, 1));
    const DataType x = in(0).dtype;
    const DataType y = out().dtype;
    switch (a.op()) {
      case fb::UnaryOp::Convert: {
        const bool ok =
            (x == DataType::Float32 && (y == DataType::Float16 || y == DataType::QInt8)) ||
            ((x == DataType::Float16 || x == DataType::QInt8) && y == DataType::Float32);
        if (!ok) {
          return node_unsupported("conversion %s -> %s is unsupported", dtype_name(x),
                                  dtype_name(y));
        }
        break;
      }
      case fb::UnaryOp::Sigmoid:
        PTERON_TRY(expect_uniform_dtype(1, true));
        break;
      case fb::UnaryOp::Abs:
      case fb::UnaryOp::BankersRounding:
      case fb::UnaryOp::Ceiling:
      case fb::UnaryOp::Floor:
      case fb::UnaryOp::Negate:
      case fb::UnaryOp::Square:
      case fb::UnaryOp::SquareRoot:
      case fb::UnaryOp::Hardswish:
      case fb::UnaryOp::Softmax:
        PTERON_TRY(expect_uniform_dtype(1, false));
        break;
      default:
        return node_fail("unknown unary operator %d", static_cast<int>(a.op()));
    }
    return expect_dims("output", out(), in(0).dims, in(0).rank);
  }

  Error check_prelu() {
    PTERON_TRY(arity(2, 2));
    PTERON_TRY(expect_uniform_dtype(2, false));
    PTERON_TRY(expect_constant("slope", in(1)));
    const TensorInfo& x = in(0);
    const uint32_t channels[1] = {x.rank == 0 ? 1u : x.dims[x.rank - 1]};
    PTERON_TRY(expect_dims("slope", in(1), channels, 1));
    return expect_dims("output", out(), x.dims, x.rank);
  }

  Error check_pool(uint32_t pt, uint32_t pr, uint32_t pb, uint32_t pl, uint32_t kh, uint32_t kw,
                   uint32_t sh, uint32_t sw, uint32_t dh, uint32_t dw, bool same) {
    if (kh == 0 || kw == 0 || sh == 0 || sw == 0 || dh == 0 || dw == 0) {
      return node_fail("pooling size, stride and dilation must be >= 1");
    }
    if (uint64_t{kh} * kw < 2) return node_unsupported("a 1x1 pool is not supported");
    PTERON_TRY(pads_zero_if_same(same, pt, pr, pb, pl));
    PTERON_TRY(expect_rank("input", in(0), 4));
    const TensorInfo& x = in(0);
    uint64_t oh, ow;
    if (!window_output(x.dims[1], pt, pb, kh, sh, dh, same, &oh) ||
        !window_output(x.dims[2], pl, pr, kw, sw, dw, same, &ow)) {
      return node_fail("the pooling window is larger than the padded input");
    }
    const uint32_t odims[4] = {x.dims[0], static_cast<uint32_t>(oh), static_cast<uint32_t>(ow),
                               x.dims[3]};
    return expect_dims("output", out(), odims, 4);
  }

  Error check_max_pool(const fb::MaxPool2d& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, true));
    PTERON_TRY(expect_same_quant(in(0), out()));
    return check_pool(a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
                      a.pooling_height(), a.pooling_width(), a.stride_height(), a.stride_width(),
                      a.dilation_height(), a.dilation_width(), a.same_padding());
  }

  Error check_avg_pool(const fb::AvgPool2d& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, false));
    return check_pool(a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
                      a.pooling_height(), a.pooling_width(), a.stride_height(), a.stride_width(), 1,
                      1, a.same_padding());
  }

  Error check_pad(const fb::ConstantPad& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, true));
    PTERON_TRY(expect_same_quant(in(0), out()));
    const TensorInfo& x = in(0);
    const auto* pre = a.pre_paddings();
    const auto* post = a.post_paddings();
    if ((pre ? pre->size() : 0) != x.rank || (post ? post->size() : 0) != x.rank) {
      return node_fail("needs %u pre and post paddings", x.rank);
    }
    if (!std::isfinite(a.padding_value())) return node_fail("padding value must be finite");
    uint32_t dims[kMaxDims];
    for (uint32_t d = 0; d < x.rank; ++d) {
      const uint64_t v = uint64_t{x.dims[d]} + pre->Get(d) + post->Get(d);
      if (v > kMaxDimSize) return node_fail("padded dim %u overflows", d);
      dims[d] = static_cast<uint32_t>(v);
    }
    return expect_dims("output", out(), dims, x.rank);
  }

  Error check_reshape(const fb::StaticReshape& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, true));
    PTERON_TRY(expect_same_quant(in(0), out()));
    const auto* shape = a.new_shape();
    const uint32_t rank = shape ? shape->size() : 0;
    if (rank > kMaxDims) return node_fail("new_shape has %u dims", rank);
    uint32_t dims[kMaxDims];
    for (uint32_t d = 0; d < rank; ++d) dims[d] = shape->Get(d);
    PTERON_TRY(expect_dims("output", out(), dims, rank));
    if (out().numel != in(0).numel) {
      return node_fail("input has %llu elements, output %llu",
                       static_cast<unsigned long long>(in(0).numel),
                       static_cast<unsigned long long>(out().numel));
    }
    return Error::Ok;
  }

  Error check_resize(const fb::ResizeBilinear2d& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, true));
    PTERON_TRY(expect_same_quant(in(0), out()));
    if (a.align_corners() && a.tensorflow_legacy()) {
      return node_fail("align_corners and tensorflow_legacy are exclusive");
    }
    if (a.new_height() == 0 || a.new_width() == 0 || a.new_height() > kMaxDimSize ||
        a.new_width() > kMaxDimSize) {
      return node_fail("new size must be >= 1");
    }
    PTERON_TRY(expect_rank("input", in(0), 4));
    const uint32_t dims[4] = {in(0).dims[0], a.new_height(), a.new_width(), in(0).dims[3]};
    return expect_dims("output", out(), dims, 4);
  }

  Error check_depth_to_space(const fb::DepthToSpace& a) {
    PTERON_TRY(arity(1, 1));
    PTERON_TRY(expect_uniform_dtype(1, false));
    PTERON_TRY(expect_rank("input", in(0), 4));
    const uint32_t b = a.block_size();
    if (b < 2 || b > 65535) return node_fail("block size must be >= 2");
    const TensorInfo& x = in(0);
    const uint64_t bb = uint64_t{b} * b;
    if (x.dims[3] % bb != 0) {
      return node_fail("input channels %u are not a multiple of block_size^2", x.dims[3]);
    }
    const uint64_t h = uint64_t{x.dims[1]} * b;
    const uint64_t w = uint64_t{x.dims[2]} * b;
    if (h > kMaxDimSize || w > kMaxDimSize) return node_fail("output size overflows");
    const uint32_t dims[4] = {x.dims[0], static_cast<uint32_t>(h), static_cast<uint32_t>(w),
                              static_cast<uint32_t>(x.dims[3] / bb)};
    return expect_dims("output", out(), dims, 4);
  }

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

}  // namespace

Error verify_payload(Span<const uint8_t> payload, const fb::Payload** root) {
  if (payload.size() < 8 || payload.data() == nullptr) {
    return fail(Error::InvalidProgram, "XNNPACK payload is %zu bytes: truncated", payload.size());
  }
  if (!flatbuffers::BufferHasIdentifier(payload.data(), fb::PayloadIdentifier())) {
    return fail(Error::InvalidProgram,
                "delegate payload is not an XNNPACK payload (identifier is not \"%s\")",
                fb::PayloadIdentifier());
  }
  // Tables and vectors are bounded by the buffer; the limits stop pathological nesting.
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 10'000'000;
  flatbuffers::Verifier verifier(payload.data(), payload.size(), options);
  if (!fb::VerifyPayloadBuffer(verifier)) {
    return fail(Error::InvalidProgram,
                "XNNPACK payload flatbuffer verification failed: corrupt or truncated");
  }
  const fb::Payload* p = fb::GetPayload(payload.data());
  Verifier v(*p, payload.size());
  PTERON_TRY(v.run());
  *root = p;
  return Error::Ok;
}

}  // namespace xnnpack
}  // namespace pteron
