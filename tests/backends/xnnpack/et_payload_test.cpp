// ExecuTorch's XNNPACK payloads (backends/xnnpack/runtime/et_payload.h) built here with the
// generated builder of schema/executorch_xnnpack.fbs: a well-formed graph is read, and each
// malformed or unsupported part is refused in one line naming it. (ExecuTorch-written programs
// run end to end in tests/interop/test_executorch_xnnpack.py.)
#include "backends/xnnpack/runtime/et_payload.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backends/xnnpack/schema/executorch_xnnpack_generated.h"

namespace pteron::xnnpack::et {
namespace {

namespace f = ::pteron::xnnpack::et_fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

struct Spec {
  bool quantized = false;
  bool transpose = false;    // a node type Debian's XNNPACK lacks
  bool read_before = false;  // the add reads its own output
  uint32_t filter_id = 1;
  uint32_t duplicate_id = 99;  // value 3 takes this id when < 4
};

// x [2, 4] -> fully connected (filter [3, 4], constant 1 of the payload's data) -> h -> h + h -> y.
std::vector<uint8_t> payload(const Spec& s, std::vector<uint8_t>* constants = nullptr) {
  FlatBufferBuilder b;
  const auto value = [&](uint32_t id, std::vector<uint32_t> dims, uint32_t constant,
                         uint32_t flags) {
    auto t = f::CreateXNNTensorValueDirect(b, f::XNNDatatype::xnn_datatype_fp32,
                                           static_cast<uint32_t>(dims.size()), &dims, constant,
                                           flags == 0   ? 0xFFFFFFFFu
                                           : flags == 1 ? 0
                                                        : 1,
                                           flags, id);
    if (s.quantized && id == 1) {
      auto q = f::CreateXNNQuantizedTensorValue(
          b,
          f::CreateXNNTensorValueDirect(b, f::XNNDatatype::xnn_datatype_qbint4, 2, &dims, constant,
                                        0xFFFFFFFFu, 0, id),
          f::XNNQuantParams::PerChannelGroupQuant, f::CreatePerChannelGroupQuant(b).Union());
      return f::CreateXValue(b, f::XValueUnion::XNNQuantizedTensorValue, q.Union());
    }
    return f::CreateXValue(b, f::XValueUnion::XNNTensorValue, t.Union());
  };
  std::vector<Offset<f::XValue>> values = {
      value(0, {2, 4}, 0, 1), value(1, {3, 4}, 1, 0), value(2, {2, 3}, 0, 0),
      value(s.duplicate_id < 4 ? s.duplicate_id : 3, {2, 3}, 0, 2)};
  std::vector<Offset<f::XNode>> nodes;
  if (s.transpose) {
    nodes.push_back(
        f::CreateXNode(b, f::XNodeUnion::XNNStaticTranspose, f::CreateUnread(b).Union()));
  }
  nodes.push_back(
      f::CreateXNode(b, f::XNodeUnion::XNNFullyConnected,
                     f::CreateXNNFullyConnected(b, 0, s.filter_id, 0xFFFFFFFFu, 2, 0).Union()));
  const uint32_t add_in = s.read_before ? 3 : 2;
  nodes.push_back(
      f::CreateXNode(b, f::XNodeUnion::XNNAdd, f::Create_XNNNode2x1(b, add_in, 2, 3, 0).Union()));
  std::vector<uint32_t> inputs = {0}, outputs = {3};
  std::vector<Offset<f::ConstantDataOffset>> data = {
      f::CreateConstantDataOffsetDirect(b, 0, 0, ""),
      f::CreateConstantDataOffsetDirect(b, 0, 48, "")};
  b.Finish(f::CreateXNNGraphDirect(b, "1", &nodes, &values, 2, &inputs, &outputs, nullptr, nullptr,
                                   &data),
           "XN01");
  // ExecuTorch's header, the flatbuffer, then 48 bytes of constant data.
  const uint64_t fb_size = b.GetSize(), c_offset = 32 + (fb_size + 15) / 16 * 16;
  std::vector<uint8_t> out(c_offset + 48, 0);
  const auto put = [&](size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  put(4, 0x30304858, 4);  // "XH00"
  put(8, 30, 2);
  put(10, 32, 4);
  put(14, fb_size, 4);
  put(18, c_offset, 4);
  put(22, 48, 8);
  for (uint64_t i = 0; i < fb_size; ++i) out[32 + i] = b.GetBufferPointer()[i];
  if (constants != nullptr) *constants = out;
  return out;
}

std::string refused(const std::vector<uint8_t>& bytes) {
  Graph g;
  const Error e = read_payload(Span<const uint8_t>(bytes.data(), bytes.size()), g);
  EXPECT_NE(e, Error::Ok);
  const std::string message = last_error_message();
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

TEST(EtXnnpackPayload, ReadsAWellFormedGraph) {
  const std::vector<uint8_t> bytes = payload({});
  Graph g;
  ASSERT_EQ(read_payload(Span<const uint8_t>(bytes.data(), bytes.size()), g), Error::Ok)
      << last_error_message();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].kind, NodeKind::FullyConnected);
  EXPECT_EQ(g.nodes[1].kind, NodeKind::Add);
  EXPECT_TRUE(g.values[1].is_constant);
  EXPECT_EQ(g.values[1].nbytes, 48u);
  EXPECT_EQ(g.values[0].input_arg, 0);
  EXPECT_EQ(g.values[3].output_arg, 1);
}

TEST(EtXnnpackPayload, RefusesWhatDebiansXnnpackLacksNamingIt) {
  Spec q;
  q.quantized = true;
  EXPECT_NE(refused(payload(q)).find("value 1 is quantized (xnn_datatype_qbint4)"),
            std::string::npos);
  Spec t;
  t.transpose = true;
  EXPECT_NE(refused(payload(t))
                .find("node 0 is XNNStaticTranspose, which Debian's XNNPACK (2022) does not have"),
            std::string::npos);
}

TEST(EtXnnpackPayload, RefusesMalformedPayloadsInOneLine) {
  Spec before;
  before.read_before = true;
  EXPECT_NE(refused(payload(before)).find("node 1 reads value 3 before any node writes it"),
            std::string::npos);
  Spec filter;
  filter.filter_id = 0;
  EXPECT_NE(refused(payload(filter)).find("(XNNFullyConnected): the filter is no 2-D constant"),
            std::string::npos);
  Spec duplicate;
  duplicate.duplicate_id = 2;
  EXPECT_NE(refused(payload(duplicate)).find("value 3 has id 2: ids are 0 to 3, each once"),
            std::string::npos);
  std::vector<uint8_t> bytes = payload({});
  std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + 20);
  EXPECT_NE(refused(truncated).find("header is truncated"), std::string::npos);
  std::vector<uint8_t> short_data(bytes.begin(), bytes.end() - 8);
  EXPECT_NE(refused(short_data).find("header is corrupt"), std::string::npos);
  std::vector<uint8_t> flipped = bytes;
  flipped[32 + 3] = 0x7F;  // the root table's offset points far past the buffer
  EXPECT_NE(refused(flipped).find("verification failed: corrupt or truncated"), std::string::npos);
  std::vector<uint8_t> other(64, 0);
  EXPECT_NE(refused(other).find("not an ExecuTorch XNNPACK payload"), std::string::npos);
}

}  // namespace
}  // namespace pteron::xnnpack::et
