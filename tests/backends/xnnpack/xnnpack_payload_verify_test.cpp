// Malformed payloads: the backend treats its payload as untrusted input and must reject every
// inconsistency with an error and a message, never crash. Payloads here are written field by
// field (RawPayload) so each test breaks exactly one thing; truncation and byte-flip sweeps
// cover the rest.
#include <functional>
#include <random>

#include "backends/xnnpack/runtime/payload_format.h"
#include "tests/backends/xnnpack/xnnpack_test_util.h"

namespace pteron::xnnpack::testing {
namespace {

struct RawTensor {
  uint32_t id = 0;
  fb::DataType dtype = fb::DataType::Float32;
  std::vector<uint32_t> dims;
  float scale = 0.0f;
  int32_t zero_point = 0;
  std::vector<float> channel_scales;
  uint32_t channel_dim = 0;
  bool constant = false;
  uint64_t offset = 0, size = 0;
  fb::ExternalKind external = fb::ExternalKind::Internal;
  uint32_t arg = 0;
  std::vector<uint8_t> dim_order;
  std::string key;  // Tensor.constant_key (the program's named data)
};

struct RawNode {
  fb::Op type = fb::Op::Clamp;
  std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)> op;
  std::vector<uint32_t> inputs, outputs;
  float min = -INFINITY, max = INFINITY;
};

struct RawPayload {
  uint32_t version = kPayloadVersion;
  std::vector<RawTensor> tensors;
  std::vector<RawNode> nodes;
  uint32_t num_args = 2;
  std::vector<uint8_t> blob;
  int64_t blob_offset = -1;  // -1: right after the flatbuffer, 16-aligned
  int64_t blob_size = -1;    // -1: blob.size()
  const char* identifier = "PXN1";
};

std::vector<uint8_t> serialize(const RawPayload& r) {
  auto write = [&](uint64_t blob_offset) {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    for (const RawTensor& t : r.tensors) {
      tensors.push_back(fb::CreateTensorDirect(
          fbb, t.id, t.dtype, &t.dims, t.scale, t.zero_point,
          t.channel_scales.empty() ? nullptr : &t.channel_scales, t.channel_dim, t.constant,
          t.offset, t.size, t.external, t.arg, t.dim_order.empty() ? nullptr : &t.dim_order,
          t.key.empty() ? nullptr : t.key.c_str()));
    }
    std::vector<flatbuffers::Offset<fb::Node>> nodes;
    for (const RawNode& n : r.nodes) {
      const auto op = n.op ? n.op(fbb) : fb::CreateClamp(fbb).Union();
      nodes.push_back(fb::CreateNodeDirect(fbb, n.type, op, &n.inputs, &n.outputs, n.min, n.max));
    }
    const auto tv = fbb.CreateVector(tensors);
    const auto nv = fbb.CreateVector(nodes);
    fb::PayloadBuilder root(fbb);
    root.add_version(r.version);
    root.add_tensors(tv);
    root.add_nodes(nv);
    root.add_num_args(r.num_args);
    root.add_constant_data_offset(blob_offset);
    root.add_constant_data_size(r.blob_size >= 0 ? uint64_t(r.blob_size) : r.blob.size());
    fbb.Finish(root.Finish(), r.identifier);
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  const size_t probe = write(0xfff0).size();
  const uint64_t offset = r.blob_offset >= 0 ? uint64_t(r.blob_offset) : (probe + 15) / 16 * 16;
  std::vector<uint8_t> bytes = write(offset);
  if (r.blob_offset < 0) {
    bytes.resize(offset);
    bytes.insert(bytes.end(), r.blob.begin(), r.blob.end());
  }
  return bytes;
}

// A valid payload: y = clamp(conv3x3(x, w, b), 0, 6), x [1,4,4,2] NHWC -> y [1,4,4,3].
RawPayload base_payload() {
  RawPayload r;
  const std::vector<float> w = random_floats(3 * 3 * 3 * 2, 1);
  const std::vector<float> b = {0.1f, -0.2f, 0.3f};
  r.blob.resize(272, 0);
  std::memcpy(r.blob.data(), w.data(), 216);
  std::memcpy(r.blob.data() + 240, b.data(), 12);
  r.tensors = {
      {.id = 0, .dims = {1, 4, 4, 2}, .external = fb::ExternalKind::Input, .arg = 0},
      {.id = 1, .dims = {3, 3, 3, 2}, .constant = true, .offset = 0, .size = 216},
      {.id = 2, .dims = {3}, .constant = true, .offset = 240, .size = 12},
      {.id = 3, .dims = {1, 4, 4, 3}},
      {.id = 4, .dims = {1, 4, 4, 3}, .external = fb::ExternalKind::Output, .arg = 1},
  };
  RawNode conv;
  conv.type = fb::Op::Conv2d;
  conv.op = [](flatbuffers::FlatBufferBuilder& fbb) {
    return fb::CreateConv2d(fbb, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 2, 3).Union();
  };
  conv.inputs = {0, 1, 2};
  conv.outputs = {3};
  RawNode clamp;
  clamp.inputs = {3};
  clamp.outputs = {4};
  clamp.min = 0.0f;
  clamp.max = 6.0f;
  r.nodes = {conv, clamp};
  return r;
}

const std::vector<CompileSpecView>& one_thread() {
  static const uint8_t one[] = {'1'};
  static const std::vector<CompileSpecView> specs = {{"threads", Span<const uint8_t>(one, 1)}};
  return specs;
}

// Init must fail with a message containing `needle`.
void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& needle) {
  clear_error_message();
  Delegate d;
  const Error err = d.init(bytes, one_thread());
  EXPECT_NE(err, Error::Ok) << "accepted; wanted an error mentioning '" << needle << "'";
  const std::string message = last_error_message();
  EXPECT_NE(message.find(needle), std::string::npos)
      << "message '" << message << "' lacks '" << needle << "'";
}

void expect_rejected(const std::function<void(RawPayload&)>& mutate, const std::string& needle) {
  RawPayload r = base_payload();
  mutate(r);
  expect_rejected(serialize(r), needle);
}

TEST(XnnpackPayloadVerify, BasePayloadRuns) {
  // Every test below breaks one field of this payload, so it must itself be valid.
  Delegate d;
  ASSERT_EQ(d.init(serialize(base_payload()), one_thread()), Error::Ok) << last_error_message();
  TestTensor x(ScalarType::Float, {1, 4, 4, 2}), y(ScalarType::Float, {1, 4, 4, 3});
  x.fill(random_floats(32, 2));
  EXPECT_EQ(d.execute({x.value(), y.value()}), Error::Ok) << last_error_message();
}

TEST(XnnpackPayloadVerify, EnvelopeErrors) {
  expect_rejected(std::vector<uint8_t>{}, "truncated");
  expect_rejected([](RawPayload& r) { r.identifier = "PXN2"; }, "identifier");
  expect_rejected([](RawPayload& r) { r.version = 3; }, "version 3");
  expect_rejected([](RawPayload& r) { r.blob_offset = 1 << 20; }, "constant blob");
  expect_rejected([](RawPayload& r) { r.blob_size = 1 << 20; }, "constant blob");
  expect_rejected([](RawPayload& r) { r.tensors.clear(); }, "no tensors");
  expect_rejected([](RawPayload& r) { r.nodes.clear(); }, "no nodes");
  expect_rejected([](RawPayload& r) { r.num_args = 1u << 30; }, "num_args");
}

TEST(XnnpackPayloadVerify, NamedConstants) {
  // A version-1 runtime would read a named constant from blob offset 0: version 2 only.
  expect_rejected([](RawPayload& r) { r.tensors[1].key = "w"; },
                  "names program data in a version-1 payload");
  auto named = [](RawPayload& r) {
    r.version = kPayloadVersionNamedConstants;
    r.tensors[1].key = "pteron.xnnpack.c.w";
  };
  expect_rejected(
      [&](RawPayload& r) {
        named(r);
        r.tensors[1].offset = 16;
      },
      "with offset 16 (must be 0)");
  expect_rejected(
      [&](RawPayload& r) {
        named(r);
        r.tensors[1].key = "two words";
      },
      "non-printable");
  expect_rejected(
      [&](RawPayload& r) {
        named(r);
        r.tensors[1].key = std::string(kMaxConstantKeyBytes + 1, 'k');
      },
      "named-data key of 257 bytes");
  // Valid, but a delegate initialised without its program cannot find the bytes.
  expect_rejected(named, "no program was given to read it from");
}

TEST(XnnpackPayloadVerify, TensorErrors) {
  expect_rejected([](RawPayload& r) { r.tensors[3].id = 7; }, "id 7 is out of range");
  expect_rejected([](RawPayload& r) { r.tensors[3].id = 2; }, "id 2 is used twice");
  expect_rejected([](RawPayload& r) { r.tensors[3].dtype = fb::DataType(42); }, "invalid dtype");
  expect_rejected([](RawPayload& r) { r.tensors[3].dtype = fb::DataType::QUInt8; }, "quint8");
  expect_rejected([](RawPayload& r) { r.tensors[3].dims = {1, 1, 1, 1, 1, 1, 1}; }, "at most 6");
  expect_rejected([](RawPayload& r) { r.tensors[3].dims = {1, 0, 4, 3}; }, "dim 1 is 0");
  expect_rejected([](RawPayload& r) { r.tensors[3].dims = {65536, 65536, 65536}; },
                  "larger than 2^36");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[3].dtype = fb::DataType::QInt8;
        r.tensors[3].scale = 0.0f;
      },
      "scale 0 must be positive");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[3].dtype = fb::DataType::QInt8;
        r.tensors[3].scale = 0.5f;
        r.tensors[3].zero_point = 300;
      },
      "zero point 300");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[1].dtype = fb::DataType::QCInt8;
        r.tensors[1].size = 54;
        r.tensors[1].channel_scales = {0.1f, 0.1f};
      },
      "2 channel scales for 3 channels");
  expect_rejected(
      [](RawPayload& r) {  // this XNNPACK reads scales[0 .. dims[0]) whatever channel_dim is
        r.tensors[1].dtype = fb::DataType::QCInt8;
        r.tensors[1].size = 54;
        r.tensors[1].channel_dim = 3;
        r.tensors[1].channel_scales = {0.1f, 0.1f};
      },
      "exceeds the channel count");
  expect_rejected([](RawPayload& r) { r.tensors[0].dim_order = {0, 1, 1, 3}; }, "permutation");
  expect_rejected([](RawPayload& r) { r.tensors[0].dim_order = {0, 2, 1}; }, "dim_order has 3");
}

TEST(XnnpackPayloadVerify, ConstantAndArgumentErrors) {
  expect_rejected([](RawPayload& r) { r.tensors[1].offset = 4096; }, "outside");
  expect_rejected([](RawPayload& r) { r.tensors[1].offset = 4; }, "misaligned");
  expect_rejected([](RawPayload& r) { r.tensors[2].offset = 256; }, "extra bytes");
  expect_rejected([](RawPayload& r) { r.tensors[2].size = 8; }, "has 8 bytes");
  expect_rejected([](RawPayload& r) { r.tensors[1].offset = ~uint64_t{0} & ~uint64_t{15}; },
                  "outside");
  expect_rejected([](RawPayload& r) { r.tensors[4].arg = 5; }, "arg_index 5 is out of range");
  expect_rejected([](RawPayload& r) { r.tensors[4].arg = 0; }, "bound twice");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[2].external = fb::ExternalKind::Input;
        r.tensors[2].arg = 1;
      },
      "both constant and external");
  expect_rejected([](RawPayload& r) { r.tensors[4].external = fb::ExternalKind(9); },
                  "invalid external kind");
}

TEST(XnnpackPayloadVerify, GraphErrors) {
  expect_rejected([](RawPayload& r) { r.nodes[0].inputs[0] = 99; }, "tensor 99, which does not");
  expect_rejected([](RawPayload& r) { r.nodes[1].outputs = {99}; }, "tensor 99, which does not");
  expect_rejected([](RawPayload& r) { std::swap(r.nodes[0], r.nodes[1]); }, "earlier node");
  expect_rejected([](RawPayload& r) { r.nodes[1].outputs = {3}; }, "already produced by node 0");
  expect_rejected([](RawPayload& r) { r.nodes[1].outputs = {1}; }, "constant or an external");
  expect_rejected([](RawPayload& r) { r.nodes[0].inputs = {0, 1, 2, 2}; }, "at most 3");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors.push_back({.id = 5, .dims = {1}, .external = fb::ExternalKind::Output, .arg = 2});
        r.num_args = 3;
      },
      "output tensor 5 is not produced");
  expect_rejected(  // XNNPACK would drop the unread tensor 5 and leave node 2 writing nowhere
      [](RawPayload& r) {
        r.tensors.push_back({.id = 5, .dims = {1, 4, 4, 3}});
        RawNode extra;
        extra.inputs = {3};
        extra.outputs = {5};
        r.nodes.push_back(extra);
      },
      "tensor 5 (output of node 2) is never used");
  expect_rejected([](RawPayload& r) { r.nodes[1].type = fb::Op(200); },
                  "unknown operator type 200");
  expect_rejected(
      [](RawPayload& r) {
        r.nodes[1].min = 6.0f;
        r.nodes[1].max = 0.0f;
      },
      "empty or NaN");
  expect_rejected([](RawPayload& r) { r.nodes[1].min = NAN; }, "empty or NaN");
  expect_rejected(
      [](RawPayload& r) {
        r.nodes[1].type = fb::Op::Unary;
        r.nodes[1].op = [](flatbuffers::FlatBufferBuilder& fbb) {
          return fb::CreateUnary(fbb, fb::UnaryOp::Sigmoid).Union();
        };
      },
      "takes no fused output range");
}

TEST(XnnpackPayloadVerify, NodeShapeAndOperandErrors) {
  expect_rejected([](RawPayload& r) { r.tensors[3].dims = {1, 4, 4, 4}; },
                  "output (tensor 3) must have dims [1, 4, 4, 3], has [1, 4, 4, 4]");
  expect_rejected([](RawPayload& r) { r.tensors[0].dims = {1, 4, 4, 3}; }, "input has 3 channels");
  expect_rejected([](RawPayload& r) { r.tensors[0].dims = {4, 4, 2}; }, "must be 4-d");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[1] = {
            .id = 1, .dims = {3, 3, 3, 2}, .external = fb::ExternalKind::Input, .arg = 2};
        r.num_args = 3;
      },
      "filter (tensor 1) must be a constant");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[2].dims = {4};
        r.tensors[2].size = 16;
      },
      "bias (tensor 2) must have dims [3]");
  expect_rejected(
      [](RawPayload& r) {  // 3x3 kernel dilated to 7x7, no padding, on a 4x4 input
        r.nodes[0].op = [](flatbuffers::FlatBufferBuilder& fbb) {
          return fb::CreateConv2d(fbb, 0, 0, 0, 0, 3, 3, 1, 1, 3, 3, 1, 2, 3).Union();
        };
      },
      "larger than the padded input");
  expect_rejected(
      [](RawPayload& r) {
        r.nodes[0].op = [](flatbuffers::FlatBufferBuilder& fbb) {
          return fb::CreateConv2d(fbb, 1, 1, 1, 1, 3, 3, 0, 1, 1, 1, 1, 2, 3).Union();
        };
      },
      "must be >= 1");
  expect_rejected(
      [](RawPayload& r) {
        r.nodes[0].op = [](flatbuffers::FlatBufferBuilder& fbb) {
          return fb::CreateConv2d(fbb, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, 1, 2, 3, true).Union();
        };
      },
      "same_padding needs explicit pads of 0");
  expect_rejected(
      [](RawPayload& r) {
        r.tensors[4].dtype = fb::DataType::QInt8;
        r.tensors[4].scale = 0.1f;
      },
      "unsupported");
}

// A builder payload exercising most node kinds, XNNPACK's fusions (pad into conv, clamp into
// conv) and a quantised branch: x -> pad -> conv -> clamp -> depthwise -> mul -> max pool ->
// reshape -> fc -> softmax -> y, and reshape -> quantize -> add -> dequantize -> z.
std::vector<uint8_t> sweep_payload() {
  constexpr DType f32 = DType::kFloat32;
  PayloadBuilder b;
  const auto cw = random_floats(4 * 3 * 3 * 2, 3);
  const auto dw = random_floats(3 * 3 * 4, 4);
  const auto db = random_floats(4, 5);
  const auto k = random_floats(4, 6);
  const auto fw = random_floats(5 * 16, 7);
  const auto qk = random_int8(16, 8);
  const TensorId x = b.add_tensor(f32, {1, 6, 6, 2});
  const TensorId p = b.add_tensor(f32, {1, 8, 8, 2});
  const TensorId c = b.add_tensor(f32, {1, 6, 6, 4});
  const TensorId r = b.add_tensor(f32, {1, 6, 6, 4});
  const TensorId d = b.add_tensor(f32, {1, 3, 3, 4});
  const TensorId m = b.add_tensor(f32, {1, 3, 3, 4});
  const TensorId mp = b.add_tensor(f32, {1, 2, 2, 4});
  const TensorId f = b.add_tensor(f32, {1, 16});
  const TensorId g = b.add_tensor(f32, {1, 5});
  const TensorId y = b.add_tensor(f32, {1, 5});
  const TensorId q = b.add_tensor(DType::kQInt8, {1, 16}, Quant::per_tensor(0.05f, 2));
  const TensorId qa = b.add_tensor(DType::kQInt8, {1, 16}, Quant::per_tensor(0.1f, -3));
  const TensorId z = b.add_tensor(f32, {1, 16});
  b.mark_external(x, ExternalKind::kInput, 0);
  b.mark_external(y, ExternalKind::kOutput, 1);
  b.mark_external(z, ExternalKind::kOutput, 2);
  b.add_node(ConstantPad{.pre = {0, 1, 1, 0}, .post = {0, 1, 1, 0}}, {x}, {p});
  b.add_node(Conv2d{.kernel_height = 3,
                    .kernel_width = 3,
                    .group_input_channels = 2,
                    .group_output_channels = 4},
             {p, b.add_constant(f32, {4, 3, 3, 2}, std::span<const float>(cw))}, {c});
  b.add_node(Clamp{0.0f, 6.0f}, {c}, {r});
  b.add_node(DepthwiseConv2d{.kernel_height = 3,
                             .kernel_width = 3,
                             .stride_height = 2,
                             .stride_width = 2,
                             .input_channels = 4,
                             .padding = Padding::uniform(1)},
             {r, b.add_constant(f32, {1, 3, 3, 4}, std::span<const float>(dw)),
              b.add_constant(f32, {4}, std::span<const float>(db))},
             {d});
  b.add_node(Binary{BinaryOp::kMultiply}, {d, b.add_constant(f32, {4}, std::span<const float>(k))},
             {m}, OutputRange::relu6());
  b.add_node(MaxPool2d{.pooling_height = 2, .pooling_width = 2}, {m}, {mp});
  b.add_node(StaticReshape{.new_shape = {1, 16}}, {mp}, {f});
  b.add_node(FullyConnected{}, {f, b.add_constant(f32, {5, 16}, std::span<const float>(fw))}, {g});
  b.add_node(Unary{UnaryOp::kSoftmax}, {g}, {y});
  b.add_node(Unary{UnaryOp::kConvert}, {f}, {q});
  b.add_node(Binary{BinaryOp::kAdd},
             {q, b.add_constant(DType::kQInt8, {16}, std::span<const int8_t>(qk),
                                Quant::per_tensor(0.02f, 1))},
             {qa});
  b.add_node(Unary{UnaryOp::kConvert}, {qa}, {z});
  return b.build();
}

TEST(XnnpackPayloadVerify, EveryTruncationIsRejected) {
  const std::vector<uint8_t> full = sweep_payload();
  for (size_t len = 0; len < full.size(); ++len) {
    clear_error_message();
    Delegate d;
    const std::vector<uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
    ASSERT_NE(d.init(cut, one_thread()), Error::Ok) << "accepted a payload cut to " << len;
    ASSERT_STRNE(last_error_message(), "") << "no message for a payload cut to " << len;
  }
}

// Init on a corrupted payload either fails with a message or yields a delegate that executes
// (or refuses the arguments) without crashing.
struct SweepArgs {
  TestTensor x{ScalarType::Float, {1, 6, 6, 2}};
  TestTensor y{ScalarType::Float, {1, 5}};
  TestTensor z{ScalarType::Float, {1, 16}};
  SweepArgs() { x.fill(random_floats(72, 9)); }
};

size_t run_corrupted(const std::vector<uint8_t>& bytes, SweepArgs& a) {
  clear_error_message();
  Delegate d;
  if (d.init(bytes, one_thread()) != Error::Ok) {
    EXPECT_STRNE(last_error_message(), "");
    return 1;
  }
  const Error run = d.execute({a.x.value(), a.y.value(), a.z.value()});
  if (run != Error::Ok) EXPECT_STRNE(last_error_message(), "");
  return 0;
}

TEST(XnnpackPayloadVerify, ByteFlipsNeverCrash) {
  const std::vector<uint8_t> full = sweep_payload();
  SweepArgs args;
  {  // the uncorrupted payload runs
    Delegate d;
    ASSERT_EQ(d.init(full, one_thread()), Error::Ok) << last_error_message();
    ASSERT_EQ(d.execute({args.x.value(), args.y.value(), args.z.value()}), Error::Ok)
        << last_error_message();
  }
  size_t rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    std::vector<uint8_t> bytes = full;
    bytes[i] ^= 0xff;
    rejected += run_corrupted(bytes, args);
  }
  // Most bytes are structure; flips of constant data, padding and some scalars are legal.
  EXPECT_GT(rejected, full.size() / 4);

  std::mt19937 gen(7);
  std::uniform_int_distribution<size_t> pos(0, full.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  for (int iter = 0; iter < 400; ++iter) {
    std::vector<uint8_t> bytes = full;
    const int n = 1 + iter % 4;
    for (int j = 0; j < n; ++j) bytes[pos(gen)] = static_cast<uint8_t>(byte(gen));
    run_corrupted(bytes, args);
  }
}

}  // namespace
}  // namespace pteron::xnnpack::testing
