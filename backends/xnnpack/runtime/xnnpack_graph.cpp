#include "backends/xnnpack/runtime/xnnpack_graph.h"

#include <cstdlib>
#include <cstring>

#include "backends/xnnpack/runtime/payload_verifier.h"
#include "runtime/threads/threadpool.h"

namespace pteron {
namespace xnnpack {

static_assert(kExtraBytes == XNN_EXTRA_BYTES, "payload format assumes XNN_EXTRA_BYTES == 16");
static_assert(kMaxDims == XNN_MAX_TENSOR_DIMS, "payload format assumes 6-d tensors at most");

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid_parameter";
    case xnn_status_invalid_state:
      return "invalid_state";
    case xnn_status_unsupported_parameter:
      return "unsupported_parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported_hardware";
    case xnn_status_out_of_memory:
      return "out_of_memory";
  }
  return "unknown";
}

bool ensure_xnnpack_initialized() {
  // xnn_initialize runs its set-up once per process and is cheap to call again.
  return xnn_initialize(nullptr) == xnn_status_success;
}

namespace {

// The smallest page size of supported hosts: an over-read past a buffer's end faults only when
// it crosses into another page.
constexpr uintptr_t kOverreadPage = 4096;

xnn_datatype to_xnn(fb::DataType dtype) {
  switch (dtype) {
    case fb::DataType::Float32:
      return xnn_datatype_fp32;
    case fb::DataType::Float16:
      return xnn_datatype_fp16;
    case fb::DataType::QInt8:
      return xnn_datatype_qint8;
    case fb::DataType::QInt32:
      return xnn_datatype_qint32;
    case fb::DataType::QCInt8:
      return xnn_datatype_qcint8;
    case fb::DataType::QCInt32:
      return xnn_datatype_qcint32;
    default:
      return xnn_datatype_invalid;
  }
}

uint32_t same_padding_flag(bool same) { return same ? XNN_FLAG_TENSORFLOW_SAME_PADDING : 0; }

// Defines one node; the payload was verified, so ids, arity and shapes are known good.
xnn_status define_node(xnn_subgraph_t sg, const fb::Node& n) {
  const auto* ins = n.inputs();
  const uint32_t x = ins->Get(0);
  const uint32_t in1 = ins->size() > 1 ? ins->Get(1) : XNN_INVALID_VALUE_ID;
  const uint32_t bias = ins->size() > 2 ? ins->Get(2) : XNN_INVALID_VALUE_ID;
  const uint32_t y = n.outputs()->Get(0);
  const float lo = n.output_min();
  const float hi = n.output_max();
  switch (n.op_type()) {
    case fb::Op::Conv2d: {
      const fb::Conv2d& a = *n.op_as_Conv2d();
      return xnn_define_convolution_2d(
          sg, a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
          a.kernel_height(), a.kernel_width(), a.stride_height(), a.stride_width(),
          a.dilation_height(), a.dilation_width(), a.groups(), a.group_input_channels(),
          a.group_output_channels(), lo, hi, x, in1, bias, y, same_padding_flag(a.same_padding()));
    }
    case fb::Op::DepthwiseConv2d: {
      const fb::DepthwiseConv2d& a = *n.op_as_DepthwiseConv2d();
      return xnn_define_depthwise_convolution_2d(
          sg, a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
          a.kernel_height(), a.kernel_width(), a.stride_height(), a.stride_width(),
          a.dilation_height(), a.dilation_width(), a.depth_multiplier(), a.input_channels(), lo, hi,
          x, in1, bias, y, same_padding_flag(a.same_padding()));
    }
    case fb::Op::Deconv2d: {
      const fb::Deconv2d& a = *n.op_as_Deconv2d();
      return xnn_define_deconvolution_2d(
          sg, a.padding_top(), a.padding_right(), a.padding_bottom(), a.padding_left(),
          a.adjustment_height(), a.adjustment_width(), a.kernel_height(), a.kernel_width(),
          a.stride_height(), a.stride_width(), a.dilation_height(), a.dilation_width(), a.groups(),
          a.group_input_channels(), a.group_output_channels(), lo, hi, x, in1, bias, y, 0);
    }
    case fb::Op::FullyConnected: {
      const fb::FullyConnected& a = *n.op_as_FullyConnected();
      const uint32_t flags = (a.transpose_weights() ? XNN_FLAG_TRANSPOSE_WEIGHTS : 0) |
                             (a.reshape_2d() ? XNN_FLAG_TENSORFLOW_RESHAPE_2D : 0);
      return xnn_define_fully_connected(sg, lo, hi, x, in1, bias, y, flags);
    }
    case fb::Op::Binary:
      switch (n.op_as_Binary()->op()) {
        case fb::BinaryOp::Add:
          return xnn_define_add2(sg, lo, hi, x, in1, y, 0);
        case fb::BinaryOp::Subtract:
          return xnn_define_subtract(sg, lo, hi, x, in1, y, 0);
        case fb::BinaryOp::Multiply:
          return xnn_define_multiply2(sg, lo, hi, x, in1, y, 0);
        case fb::BinaryOp::Divide:
          return xnn_define_divide(sg, lo, hi, x, in1, y, 0);
        case fb::BinaryOp::Maximum:
          return xnn_define_maximum2(sg, x, in1, y, 0);
        case fb::BinaryOp::Minimum:
          return xnn_define_minimum2(sg, x, in1, y, 0);
        case fb::BinaryOp::SquaredDifference:
          return xnn_define_squared_difference(sg, x, in1, y, 0);
      }
      return xnn_status_unsupported_parameter;
    case fb::Op::Unary:
      switch (n.op_as_Unary()->op()) {
        case fb::UnaryOp::Abs:
          return xnn_define_abs(sg, x, y, 0);
        case fb::UnaryOp::BankersRounding:
          return xnn_define_bankers_rounding(sg, x, y, 0);
        case fb::UnaryOp::Ceiling:
          return xnn_define_ceiling(sg, x, y, 0);
        case fb::UnaryOp::Floor:
          return xnn_define_floor(sg, x, y, 0);
        case fb::UnaryOp::Negate:
          return xnn_define_negate(sg, x, y, 0);
        case fb::UnaryOp::Square:
          return xnn_define_square(sg, x, y, 0);
        case fb::UnaryOp::SquareRoot:
          return xnn_define_square_root(sg, x, y, 0);
        case fb::UnaryOp::Hardswish:
          return xnn_define_hardswish(sg, x, y, 0);
        case fb::UnaryOp::Sigmoid:
          return xnn_define_sigmoid(sg, x, y, 0);
        case fb::UnaryOp::Softmax:
          return xnn_define_softmax(sg, x, y, 0);
        case fb::UnaryOp::Convert:
          return xnn_define_convert(sg, x, y, 0);
      }
      return xnn_status_unsupported_parameter;
    case fb::Op::Clamp:
      return xnn_define_clamp(sg, lo, hi, x, y, 0);
    case fb::Op::Elu:
      return xnn_define_elu(sg, n.op_as_Elu()->alpha(), x, y, 0);
    case fb::Op::LeakyRelu:
      return xnn_define_leaky_relu(sg, n.op_as_LeakyRelu()->negative_slope(), x, y, 0);
    case fb::Op::PRelu:
      return xnn_define_prelu(sg, x, in1, y, 0);
    case fb::Op::MaxPool2d: {
      const fb::MaxPool2d& a = *n.op_as_MaxPool2d();
      return xnn_define_max_pooling_2d(sg, a.padding_top(), a.padding_right(), a.padding_bottom(),
                                       a.padding_left(), a.pooling_height(), a.pooling_width(),
                                       a.stride_height(), a.stride_width(), a.dilation_height(),
                                       a.dilation_width(), lo, hi, x, y,
                                       same_padding_flag(a.same_padding()));
    }
    case fb::Op::AvgPool2d: {
      const fb::AvgPool2d& a = *n.op_as_AvgPool2d();
      return xnn_define_average_pooling_2d(sg, a.padding_top(), a.padding_right(),
                                           a.padding_bottom(), a.padding_left(), a.pooling_height(),
                                           a.pooling_width(), a.stride_height(), a.stride_width(),
                                           lo, hi, x, y, same_padding_flag(a.same_padding()));
    }
    case fb::Op::GlobalAvgPool2d:
      return xnn_define_global_average_pooling_2d(sg, lo, hi, x, y, 0);
    case fb::Op::ConstantPad: {
      const fb::ConstantPad& a = *n.op_as_ConstantPad();
      size_t pre[kMaxDims] = {}, post[kMaxDims] = {};
      for (uint32_t d = 0; d < a.pre_paddings()->size(); ++d) {
        pre[d] = a.pre_paddings()->Get(d);
        post[d] = a.post_paddings()->Get(d);
      }
      return xnn_define_static_constant_pad(sg, pre, post, a.padding_value(), x, y, 0);
    }
    case fb::Op::StaticReshape: {
      const auto* shape = n.op_as_StaticReshape()->new_shape();
      const uint32_t rank = shape ? shape->size() : 0;
      size_t dims[kMaxDims] = {};
      for (uint32_t d = 0; d < rank; ++d) dims[d] = shape->Get(d);
      return xnn_define_static_reshape(sg, rank, dims, x, y, 0);
    }
    case fb::Op::ResizeBilinear2d: {
      const fb::ResizeBilinear2d& a = *n.op_as_ResizeBilinear2d();
      const uint32_t flags = (a.align_corners() ? XNN_FLAG_ALIGN_CORNERS : 0) |
                             (a.tensorflow_legacy() ? XNN_FLAG_TENSORFLOW_LEGACY_MODE : 0);
      return xnn_define_static_resize_bilinear_2d(sg, a.new_height(), a.new_width(), x, y, flags);
    }
    case fb::Op::DepthToSpace:
      return xnn_define_depth_to_space(sg, x, y, n.op_as_DepthToSpace()->block_size(), 0);
    default:
      return xnn_status_unsupported_parameter;
  }
}

// Deletes a subgraph when the scope ends.
struct SubgraphGuard {
  xnn_subgraph_t subgraph = nullptr;
  ~SubgraphGuard() {
    if (subgraph != nullptr) xnn_delete_subgraph(subgraph);
  }
};

}  // namespace

CompiledGraph::~CompiledGraph() {
  if (runtime_ != nullptr) xnn_delete_runtime(runtime_);
  free(aligned_copy_);
  for (void* copy : constant_copies_) free(copy);
}

Error CompiledGraph::locate_constants(const fb::Payload& p, const uint8_t* blob,
                                      const NamedDataResolver& resolve,
                                      std::vector<const void*>* data) {
  const auto* tensors = p.tensors();
  data->assign(tensors->size(), nullptr);
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* t = tensors->Get(i);
    if (!t->is_constant()) continue;
    const flatbuffers::String* key = t->constant_key();
    if (key == nullptr) {
      (*data)[i] = blob + t->constant_offset();
      continue;
    }
    if (!resolve) {
      return fail(Error::InvalidProgram,
                  "XNNPACK payload constant %u is the program's named data '%s', and no program "
                  "was given to read it from",
                  t->id(), key->c_str());
    }
    Span<const uint8_t> bytes;
    PTERON_TRY(resolve(key->c_str(), &bytes));
    const uint64_t size = t->constant_size();
    if (bytes.size() < size) {
      return fail(Error::InvalidProgram,
                  "XNNPACK payload constant %u: named data '%s' holds %zu bytes, the tensor "
                  "needs %llu",
                  t->id(), key->c_str(), bytes.size(), static_cast<unsigned long long>(size));
    }
    const uint8_t* src = bytes.data();
    const uintptr_t last = reinterpret_cast<uintptr_t>(src) + (size == 0 ? 0 : size - 1);
    const bool in_place = reinterpret_cast<uintptr_t>(src) % kConstantAlignment == 0 &&
                          (bytes.size() >= size + kExtraBytes ||
                           last / kOverreadPage == (last + kExtraBytes) / kOverreadPage);
    if (!in_place) {
      const size_t padded =
          (size + kExtraBytes + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
      void* copy = aligned_alloc(kConstantAlignment, padded);
      if (copy == nullptr) {
        return fail(Error::OutOfMemory, "XNNPACK delegate: no memory for constant %u's %llu bytes",
                    t->id(), static_cast<unsigned long long>(size));
      }
      constant_copies_.push_back(copy);
      memcpy(copy, src, size);
      memset(static_cast<uint8_t*>(copy) + size, 0, padded - size);
      src = static_cast<const uint8_t*>(copy);
    }
    (*data)[i] = src;
  }
  return Error::Ok;
}

Error CompiledGraph::define_subgraph(const fb::Payload& p, const std::vector<const void*>& data,
                                     xnn_subgraph_t sg) {
  const auto* tensors = p.tensors();
  for (uint32_t i = 0; i < tensors->size(); ++i) {
    const fb::Tensor* t = tensors->Get(i);
    size_t dims[kMaxDims] = {};
    const uint32_t rank = t->dims() ? t->dims()->size() : 0;
    for (uint32_t d = 0; d < rank; ++d) dims[d] = t->dims()->Get(d);
    const void* constant = data[i];
    uint32_t flags = 0;
    if (t->external() == fb::ExternalKind::Input) flags = XNN_VALUE_FLAG_EXTERNAL_INPUT;
    if (t->external() == fb::ExternalKind::Output) flags = XNN_VALUE_FLAG_EXTERNAL_OUTPUT;
    uint32_t id_out = XNN_INVALID_VALUE_ID;
    xnn_status status;
    switch (t->dtype()) {
      case fb::DataType::Float32:
      case fb::DataType::Float16:
        status = xnn_define_tensor_value(sg, to_xnn(t->dtype()), rank, dims, constant, t->id(),
                                         flags, &id_out);
        break;
      case fb::DataType::QInt8:
      case fb::DataType::QInt32:
        status =
            xnn_define_quantized_tensor_value(sg, to_xnn(t->dtype()), t->zero_point(), t->scale(),
                                              rank, dims, constant, t->id(), flags, &id_out);
        break;
      default:
        status = xnn_define_channelwise_quantized_tensor_value(
            sg, to_xnn(t->dtype()), t->channel_scales()->data(), rank, t->channel_dim(), dims,
            constant, t->id(), flags, &id_out);
        break;
    }
    if (status != xnn_status_success || id_out != t->id()) {
      return fail(Error::NotSupported, "XNNPACK refused tensor %u (%s): %s", t->id(),
                  dtype_name(t->dtype()), status_name(status));
    }
    if (t->external() != fb::ExternalKind::Internal) {
      ExternalValue e{};
      e.id = t->id();
      e.arg_index = t->arg_index();
      e.is_input = t->external() == fb::ExternalKind::Input;
      e.dtype = t->dtype();
      e.rank = rank;
      e.nbytes = dtype_size(t->dtype());
      const auto* order = t->dim_order();
      const bool has_order = order != nullptr && order->size() == rank;
      for (uint32_t d = 0; d < rank; ++d) {
        e.dims[d] = t->dims()->Get(d);
        e.dim_order[d] = has_order ? order->Get(d) : static_cast<uint8_t>(d);
        e.nbytes *= e.dims[d];
      }
      externals_.push_back(e);
    }
  }
  const auto* nodes = p.nodes();
  for (uint32_t k = 0; k < nodes->size(); ++k) {
    const fb::Node& n = *nodes->Get(k);
    const xnn_status status = define_node(sg, n);
    if (status != xnn_status_success) {
      return fail(Error::NotSupported, "XNNPACK refused node %u (%s): %s", k, op_name(n),
                  status_name(status));
    }
  }
  return Error::Ok;
}

Error CompiledGraph::init(Span<const uint8_t> payload, pthreadpool_t threadpool,
                          bool fp16_hint_allowed, const NamedDataResolver& resolve) {
  if (!ensure_xnnpack_initialized()) {
    return fail(Error::NotSupported, "XNNPACK cannot be initialised on this CPU");
  }
  // Flatbuffer scalars and constants are read in place, so they need the alignment the
  // builder gave them relative to the payload start.
  const uint8_t* base = payload.data();
  if (reinterpret_cast<uintptr_t>(base) % kConstantAlignment != 0) {
    const size_t size =
        (payload.size() + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
    aligned_copy_ = aligned_alloc(kConstantAlignment, size == 0 ? kConstantAlignment : size);
    if (aligned_copy_ == nullptr) {
      return fail(Error::OutOfMemory,
                  "XNNPACK delegate: no memory for a %zu-byte aligned copy "
                  "of its payload",
                  size);
    }
    memcpy(aligned_copy_, base, payload.size());
    base = static_cast<const uint8_t*>(aligned_copy_);
  }
  const fb::Payload* p = nullptr;
  PTERON_TRY(verify_payload(Span<const uint8_t>(base, payload.size()), &p));
  num_args_ = p->num_args();

  SubgraphGuard guard;
  const xnn_status created = xnn_create_subgraph(p->tensors()->size(), 0, &guard.subgraph);
  if (created != xnn_status_success) {
    return fail(Error::OutOfMemory, "XNNPACK could not create a subgraph of %u values: %s",
                p->tensors()->size(), status_name(created));
  }
  std::vector<const void*> constants;
  PTERON_TRY(locate_constants(*p, base + p->constant_data_offset(), resolve, &constants));
  PTERON_TRY(define_subgraph(*p, constants, guard.subgraph));
  // XNN_FLAG_YIELD_WORKERS: the pool's workers sleep after the runtime's last operator instead
  // of spinning for the next call, as every other parallel call of the process does under that
  // setting (runtime/threads/threadpool.h). Within one call they spin between operators.
  const uint32_t flags =
      (spin_workers() ? 0 : XNN_FLAG_YIELD_WORKERS) |
      (p->fp16_inference() && fp16_hint_allowed ? XNN_FLAG_HINT_FP16_INFERENCE : 0);
  const xnn_status status = xnn_create_runtime_v2(guard.subgraph, threadpool, flags, &runtime_);
  if (status != xnn_status_success) {
    runtime_ = nullptr;
    return fail(status == xnn_status_out_of_memory ? Error::OutOfMemory : Error::NotSupported,
                "XNNPACK could not create a runtime for the payload's %u nodes: %s (an operator "
                "refused its parameters, e.g. quantisation scales)",
                p->nodes()->size(), status_name(status));
  }
  return Error::Ok;
}

Error dry_run_payload(Span<const uint8_t> payload) {
  CompiledGraph graph;
  return graph.init(payload, nullptr, true);
}

}  // namespace xnnpack
}  // namespace pteron
