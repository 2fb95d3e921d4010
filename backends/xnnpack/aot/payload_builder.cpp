#include "backends/xnnpack/aot/payload_builder.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "backends/xnnpack/runtime/payload_format.h"
#include "backends/xnnpack/runtime/xnnpack_graph.h"
#include "runtime/core/error.h"

namespace pteron::xnnpack {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

const char* binary_op_name(BinaryOp op) {
  static const char* const kNames[] = {"add",     "subtract", "multiply",          "divide",
                                       "maximum", "minimum",  "squared_difference"};
  return kNames[static_cast<size_t>(op)];
}
const char* unary_op_name(UnaryOp op) {
  static const char* const kNames[] = {"abs",     "bankers_rounding", "ceiling",     "floor",
                                       "negate",  "square",           "square_root", "hardswish",
                                       "sigmoid", "softmax",          "convert"};
  return kNames[static_cast<size_t>(op)];
}

size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

template <typename T>
std::span<const uint8_t> as_u8(std::span<const T> data) {
  return {reinterpret_cast<const uint8_t*>(data.data()), data.size_bytes()};
}

}  // namespace

size_t dtype_bytes(DType dtype) { return dtype_size(static_cast<fb::DataType>(dtype)); }

std::string node_kind_name(const NodeAttrs& attrs) {
  return std::visit(Overloaded{
                        [](const Conv2d&) -> std::string { return "conv2d"; },
                        [](const DepthwiseConv2d&) -> std::string { return "depthwise_conv2d"; },
                        [](const Deconv2d&) -> std::string { return "deconv2d"; },
                        [](const FullyConnected&) -> std::string { return "fully_connected"; },
                        [](const Binary& b) -> std::string { return binary_op_name(b.op); },
                        [](const Unary& u) -> std::string { return unary_op_name(u.op); },
                        [](const Clamp&) -> std::string { return "clamp"; },
                        [](const Elu&) -> std::string { return "elu"; },
                        [](const LeakyRelu&) -> std::string { return "leaky_relu"; },
                        [](const PRelu&) -> std::string { return "prelu"; },
                        [](const MaxPool2d&) -> std::string { return "max_pool2d"; },
                        [](const AvgPool2d&) -> std::string { return "avg_pool2d"; },
                        [](const GlobalAvgPool2d&) -> std::string { return "global_avg_pool2d"; },
                        [](const ConstantPad&) -> std::string { return "constant_pad"; },
                        [](const StaticReshape&) -> std::string { return "static_reshape"; },
                        [](const ResizeBilinear2d&) -> std::string { return "resize_bilinear2d"; },
                        [](const DepthToSpace&) -> std::string { return "depth_to_space"; },
                    },
                    attrs);
}

const PayloadBuilder::TensorEntry& PayloadBuilder::tensor(TensorId id) const {
  if (id >= tensors_.size()) {
    throw std::invalid_argument("XNNPACK payload builder: tensor id " + std::to_string(id) +
                                " does not exist (" + std::to_string(tensors_.size()) +
                                " tensors)");
  }
  return tensors_[id];
}

size_t PayloadBuilder::element_count(const std::vector<uint32_t>& dims) const {
  size_t n = 1;
  for (uint32_t d : dims) n *= d;
  return n;
}

TensorId PayloadBuilder::add_tensor(DType dtype, std::vector<uint32_t> dims, Quant quant) {
  TensorEntry e;
  e.dtype = dtype;
  e.dims = std::move(dims);
  e.quant = std::move(quant);
  tensors_.push_back(std::move(e));
  return static_cast<TensorId>(tensors_.size() - 1);
}

TensorId PayloadBuilder::add_constant(DType dtype, std::vector<uint32_t> dims,
                                      std::span<const uint8_t> data, Quant quant) {
  const size_t expected = element_count(dims) * dtype_bytes(dtype);
  if (data.size() != expected) {
    throw std::invalid_argument("XNNPACK payload builder: constant has " +
                                std::to_string(data.size()) + " bytes; its dims and dtype need " +
                                std::to_string(expected));
  }
  const TensorId id = add_tensor(dtype, std::move(dims), std::move(quant));
  tensors_[id].constant = true;
  tensors_[id].data.assign(data.begin(), data.end());
  return id;
}

TensorId PayloadBuilder::add_constant(DType dtype, std::vector<uint32_t> dims,
                                      std::span<const float> data, Quant quant) {
  return add_constant(dtype, std::move(dims), as_u8(data), std::move(quant));
}
TensorId PayloadBuilder::add_constant(DType dtype, std::vector<uint32_t> dims,
                                      std::span<const int8_t> data, Quant quant) {
  return add_constant(dtype, std::move(dims), as_u8(data), std::move(quant));
}
TensorId PayloadBuilder::add_constant(DType dtype, std::vector<uint32_t> dims,
                                      std::span<const int32_t> data, Quant quant) {
  return add_constant(dtype, std::move(dims), as_u8(data), std::move(quant));
}

void PayloadBuilder::mark_external(TensorId id, ExternalKind kind, uint32_t arg_index,
                                   std::vector<uint8_t> dim_order) {
  tensor(id);  // throws on a bad id
  TensorEntry& e = tensors_[id];
  if (e.constant) {
    throw std::invalid_argument("XNNPACK payload builder: constant tensor " + std::to_string(id) +
                                " cannot be external");
  }
  e.external = static_cast<uint8_t>(kind);
  e.arg_index = arg_index;
  e.dim_order = std::move(dim_order);
}

size_t PayloadBuilder::add_node(const NodeAttrs& attrs, std::vector<TensorId> inputs,
                                std::vector<TensorId> outputs, OutputRange range) {
  for (TensorId id : inputs) tensor(id);
  for (TensorId id : outputs) tensor(id);
  if (const Clamp* c = std::get_if<Clamp>(&attrs)) range = OutputRange{c->min, c->max};
  nodes_.push_back(NodeEntry{attrs, std::move(inputs), std::move(outputs), range});
  return nodes_.size() - 1;
}

namespace {

// Writes one node's operator table; returns the union member offset.
flatbuffers::Offset<void> write_op(flatbuffers::FlatBufferBuilder& fbb, const NodeAttrs& attrs,
                                   fb::Op* type) {
  return std::visit(
      Overloaded{
          [&](const Conv2d& a) {
            *type = fb::Op::Conv2d;
            return fb::CreateConv2d(fbb, a.padding.top, a.padding.right, a.padding.bottom,
                                    a.padding.left, a.kernel_height, a.kernel_width,
                                    a.stride_height, a.stride_width, a.dilation_height,
                                    a.dilation_width, a.groups, a.group_input_channels,
                                    a.group_output_channels, a.same_padding)
                .Union();
          },
          [&](const DepthwiseConv2d& a) {
            *type = fb::Op::DepthwiseConv2d;
            return fb::CreateDepthwiseConv2d(fbb, a.padding.top, a.padding.right, a.padding.bottom,
                                             a.padding.left, a.kernel_height, a.kernel_width,
                                             a.stride_height, a.stride_width, a.dilation_height,
                                             a.dilation_width, a.depth_multiplier, a.input_channels,
                                             a.same_padding)
                .Union();
          },
          [&](const Deconv2d& a) {
            *type = fb::Op::Deconv2d;
            return fb::CreateDeconv2d(fbb, a.padding.top, a.padding.right, a.padding.bottom,
                                      a.padding.left, a.adjustment_height, a.adjustment_width,
                                      a.kernel_height, a.kernel_width, a.stride_height,
                                      a.stride_width, a.dilation_height, a.dilation_width, a.groups,
                                      a.group_input_channels, a.group_output_channels)
                .Union();
          },
          [&](const FullyConnected& a) {
            *type = fb::Op::FullyConnected;
            return fb::CreateFullyConnected(fbb, a.transpose_weights, a.reshape_2d).Union();
          },
          [&](const Binary& a) {
            *type = fb::Op::Binary;
            return fb::CreateBinary(fbb, static_cast<fb::BinaryOp>(a.op)).Union();
          },
          [&](const Unary& a) {
            *type = fb::Op::Unary;
            return fb::CreateUnary(fbb, static_cast<fb::UnaryOp>(a.op)).Union();
          },
          [&](const Clamp&) {
            *type = fb::Op::Clamp;
            return fb::CreateClamp(fbb).Union();
          },
          [&](const Elu& a) {
            *type = fb::Op::Elu;
            return fb::CreateElu(fbb, a.alpha).Union();
          },
          [&](const LeakyRelu& a) {
            *type = fb::Op::LeakyRelu;
            return fb::CreateLeakyRelu(fbb, a.negative_slope).Union();
          },
          [&](const PRelu&) {
            *type = fb::Op::PRelu;
            return fb::CreatePRelu(fbb).Union();
          },
          [&](const MaxPool2d& a) {
            *type = fb::Op::MaxPool2d;
            return fb::CreateMaxPool2d(fbb, a.padding.top, a.padding.right, a.padding.bottom,
                                       a.padding.left, a.pooling_height, a.pooling_width,
                                       a.stride_height, a.stride_width, a.dilation_height,
                                       a.dilation_width, a.same_padding)
                .Union();
          },
          [&](const AvgPool2d& a) {
            *type = fb::Op::AvgPool2d;
            return fb::CreateAvgPool2d(fbb, a.padding.top, a.padding.right, a.padding.bottom,
                                       a.padding.left, a.pooling_height, a.pooling_width,
                                       a.stride_height, a.stride_width, a.same_padding)
                .Union();
          },
          [&](const GlobalAvgPool2d&) {
            *type = fb::Op::GlobalAvgPool2d;
            return fb::CreateGlobalAvgPool2d(fbb).Union();
          },
          [&](const ConstantPad& a) {
            *type = fb::Op::ConstantPad;
            return fb::CreateConstantPadDirect(fbb, &a.pre, &a.post, a.value).Union();
          },
          [&](const StaticReshape& a) {
            *type = fb::Op::StaticReshape;
            return fb::CreateStaticReshapeDirect(fbb, &a.new_shape).Union();
          },
          [&](const ResizeBilinear2d& a) {
            *type = fb::Op::ResizeBilinear2d;
            return fb::CreateResizeBilinear2d(fbb, a.new_height, a.new_width, a.align_corners,
                                              a.tensorflow_legacy)
                .Union();
          },
          [&](const DepthToSpace& a) {
            *type = fb::Op::DepthToSpace;
            return fb::CreateDepthToSpace(fbb, a.block_size).Union();
          },
      },
      attrs);
}

}  // namespace

std::string constant_key(std::span<const uint8_t> bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  char key[64];
  std::snprintf(key, sizeof key, "pteron.xnnpack.c.%016llx.%zu", static_cast<unsigned long long>(h),
                bytes.size());
  return key;
}

std::vector<uint8_t> PayloadBuilder::build() const { return build_impl(SIZE_MAX, nullptr); }

std::vector<uint8_t> PayloadBuilder::build_sharing(size_t min_bytes,
                                                   std::vector<NamedConstant>* named) const {
  return build_impl(min_bytes, named);
}

std::vector<uint8_t> PayloadBuilder::build_impl(size_t named_min_bytes,
                                                std::vector<NamedConstant>* named) const {
  // Named constants: the program's named data under a key of their bytes.
  std::vector<std::string> keys(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorEntry& t = tensors_[i];
    if (!t.constant || t.data.empty() || t.data.size() < named_min_bytes) continue;
    keys[i] = constant_key(t.data);
    named->push_back({keys[i], t.data});
  }
  // Constants: each 16-byte aligned and followed by >= 16 spare bytes (XNN_EXTRA_BYTES).
  std::vector<uint64_t> offsets(tensors_.size(), 0);
  size_t blob_size = 0;
  bool any_named = false;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensors_[i].constant) continue;
    if (!keys[i].empty()) {
      any_named = true;
      continue;
    }
    offsets[i] = blob_size;
    blob_size = round_up(blob_size + tensors_[i].data.size() + kExtraBytes, kConstantAlignment);
  }
  uint32_t num_args = 0;
  for (const TensorEntry& t : tensors_) {
    if (t.external != 0 && t.arg_index + 1 > num_args) num_args = t.arg_index + 1;
  }
  if (num_args_ >= 0) num_args = static_cast<uint32_t>(num_args_);

  // The blob offset is stored inside the flatbuffer it follows: build once to learn the size
  // (the field is always written, so the size does not depend on its value), then for real.
  auto serialise = [&](uint64_t blob_offset) {
    flatbuffers::FlatBufferBuilder fbb(1024);
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorEntry& t = tensors_[i];
      const bool per_channel = t.dtype == DType::kQCInt8 || t.dtype == DType::kQCInt32;
      tensors.push_back(fb::CreateTensorDirect(
          fbb, static_cast<uint32_t>(i), static_cast<fb::DataType>(t.dtype), &t.dims, t.quant.scale,
          t.quant.zero_point, per_channel ? &t.quant.channel_scales : nullptr, t.quant.channel_dim,
          t.constant, offsets[i], t.constant ? t.data.size() : 0,
          static_cast<fb::ExternalKind>(t.external), t.arg_index,
          t.dim_order.empty() ? nullptr : &t.dim_order,
          keys[i].empty() ? nullptr : keys[i].c_str()));
    }
    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (const NodeEntry& n : nodes_) {
      fb::Op type = fb::Op::NONE;
      const flatbuffers::Offset<void> op = write_op(fbb, n.attrs, &type);
      nodes.push_back(
          fb::CreateNodeDirect(fbb, type, op, &n.inputs, &n.outputs, n.range.min, n.range.max));
    }
    const auto producer = fbb.CreateString("pteron");
    const auto tensor_vec = fbb.CreateVector(tensors);
    const auto node_vec = fbb.CreateVector(nodes);
    fb::PayloadBuilder root(fbb);
    root.add_version(any_named ? kPayloadVersionNamedConstants : kPayloadVersion);
    root.add_tensors(tensor_vec);
    root.add_nodes(node_vec);
    root.add_num_args(num_args);
    root.add_constant_data_offset(blob_offset);
    root.add_constant_data_size(blob_size);
    root.add_fp16_inference(fp16_inference_);
    root.add_producer(producer);
    fbb.Finish(root.Finish(), fb::PayloadIdentifier());
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  const size_t probe = serialise(~uint64_t{0} & ~uint64_t{15}).size();
  const uint64_t blob_offset = round_up(probe, kConstantAlignment);
  std::vector<uint8_t> bytes = serialise(blob_offset);
  if (bytes.size() != probe) throw std::logic_error("XNNPACK payload size changed between passes");
  bytes.resize(blob_offset + blob_size, 0);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    if (!tensors_[i].constant || tensors_[i].data.empty() || !keys[i].empty()) continue;
    std::memcpy(bytes.data() + blob_offset + offsets[i], tensors_[i].data.data(),
                tensors_[i].data.size());
  }
  return bytes;
}

std::string PayloadBuilder::check_node(const NodeAttrs& attrs, const std::vector<TensorId>& inputs,
                                       const std::vector<TensorId>& outputs,
                                       OutputRange range) const {
  PayloadBuilder one;
  std::map<TensorId, TensorId> remap;
  uint32_t next_arg = 0;
  auto copy = [&](TensorId id, bool is_output) {
    if (id >= tensors_.size()) {
      throw std::invalid_argument("XNNPACK payload builder: tensor id " + std::to_string(id) +
                                  " does not exist");
    }
    auto it = remap.find(id);
    if (it != remap.end()) return it->second;
    TensorEntry e = tensors_[id];
    e.external = 0;
    e.dim_order.clear();
    if (!e.constant) {
      e.external = static_cast<uint8_t>(is_output ? ExternalKind::kOutput : ExternalKind::kInput);
      e.arg_index = next_arg++;
    }
    one.tensors_.push_back(std::move(e));
    const TensorId new_id = static_cast<TensorId>(one.tensors_.size() - 1);
    remap[id] = new_id;
    return new_id;
  };
  std::vector<TensorId> in, out;
  for (TensorId id : inputs) in.push_back(copy(id, false));
  for (TensorId id : outputs) out.push_back(copy(id, true));
  one.add_node(attrs, std::move(in), std::move(out), range);
  return one.validate();
}

std::string PayloadBuilder::validate() const { return check_payload(build()); }

std::string check_payload(std::span<const uint8_t> payload) {
  clear_error_message();
  const Error err = dry_run_payload(Span<const uint8_t>(payload.data(), payload.size()));
  if (err == Error::Ok) return "";
  std::string message = last_error_message();
  return message.empty() ? std::string("rejected (") + error_name(err) + ")" : message;
}

}  // namespace pteron::xnnpack
