// The Vulkan backend as a program uses it: registration and device availability, a multi-node
// region (an MLP) replayed many times from one recording, several delegates sharing the one
// device context, argument checks, and payloads the verifier must refuse.
#include <cstring>
#include <string>

#include "backends/vulkan/runtime/payload_verifier.h"
#include "backends/vulkan/runtime/vulkan_context.h"
#include "runtime/trace/event_tracer.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace pteron::vulkan::testing {
namespace {

TEST(VulkanBackend, RegisteredAndAvailable) {
  BackendInterface* b = find_backend("PteronVulkanBackend");
  ASSERT_NE(b, nullptr);
  EXPECT_TRUE(b->is_available()) << last_error_message();
  EXPECT_STRNE(device_name(), "");
}

// x[B, 24] -> linear(24 -> 32) + relu -> linear(32 -> 10) -> + residual r[B, 10] -> softmax.
struct Mlp : MlpWeights {
  std::vector<uint8_t> payload(uint32_t batch) const {
    PayloadBuilder b;
    const uint32_t x = b.add_input({batch, 24}, 0);
    const uint32_t r = b.add_input({batch, 10}, 1);
    const uint32_t cw1 = b.add_constant({32, 24}, w1), cb1 = b.add_constant({32}, b1);
    const uint32_t cw2 = b.add_constant({10, 32}, w2), cb2 = b.add_constant({10}, b2);
    const uint32_t h = b.add_tensor({batch, 32});
    const uint32_t o = b.add_tensor({batch, 10});
    const uint32_t s = b.add_tensor({batch, 10});
    const uint32_t y = b.add_output({batch, 10}, 2);
    const uint32_t hidden = b.add_output({batch, 32}, 3);  // an output other nodes also read
    b.add_node(fb::OpType::Linear, {x, cw1, cb1}, h);
    b.add_node(fb::OpType::Clamp, {h}, hidden, {.output_min = 0.0f});
    b.add_node(fb::OpType::Linear, {hidden, cw2, cb2}, o);
    b.add_node(fb::OpType::Add, {o, r}, s);
    b.add_node(fb::OpType::Softmax, {s}, y);
    return b.build();
  }
};

TEST(VulkanBackend, MlpRegionReplaysOneRecording) {
  const Mlp mlp;
  const int32_t batch = 5;
  Delegate d;
  ASSERT_EQ(d.init(mlp.payload(batch)), Error::Ok) << last_error_message();
  EXPECT_EQ(delegate_recordings(d.handle()), 1);
  for (uint32_t iter = 0; iter < 4; ++iter) {
    TestTensor x({batch, 24}, random_floats(batch * 24, 50 + iter));
    TestTensor r({batch, 10}, random_floats(batch * 10, 60 + iter));
    TestTensor y({batch, 10}), hidden({batch, 32});
    ASSERT_EQ(d.execute({x.value(), r.value(), y.value(), hidden.value()}), Error::Ok)
        << last_error_message();
    expect_close(y.read(), mlp.reference(x, r, batch), 1e-5f, 1e-5f, "mlp");
    for (float v : hidden.read()) ASSERT_GE(v, 0.0f);
  }
  EXPECT_EQ(delegate_recordings(d.handle()), 1);  // replayed, never re-recorded
}

// Records the delegate events a traced call reports.
struct EventLog : ExecutionObserver {
  std::vector<std::string> begun;
  int open = 0;
  int32_t begin_delegate_event(const char* name, int32_t) override {
    begun.push_back(name);
    ++open;
    return static_cast<int32_t>(begun.size() - 1);
  }
  void end_delegate_event(int32_t) override { --open; }
};

TEST(VulkanBackend, TracedCallReportsItsPhases) {
  const Mlp mlp;
  Delegate d;
  ASSERT_EQ(d.init(mlp.payload(2)), Error::Ok);
  TestTensor x({2, 24}), r({2, 10}), y({2, 10}), h({2, 32});
  EventLog log;
  ASSERT_EQ(d.execute({x.value(), r.value(), y.value(), h.value()}, &log), Error::Ok);
  EXPECT_EQ(log.begun,
            (std::vector<std::string>{"vulkan: copy inputs", "vulkan: run command buffer",
                                      "vulkan: copy outputs"}));
  EXPECT_EQ(log.open, 0);
}

// Traced through the event tracer: one event per dispatch from the device's timestamps, named
// by op, carrying the payload node's debug id (its graph node), nested in the host's "run
// command buffer" event. Untraced calls keep replaying the recording without queries.
TEST(VulkanBackend, TracedCallTimesEveryDispatch) {
  // conv (debug id 0) -> reshape (1, no dispatch) -> matmul (2) -> cat (3, two dispatches) ->
  // relu (4).
  PayloadBuilder b;
  const uint32_t x = b.add_input({1, 3, 8, 8}, 0);
  const uint32_t cw = b.add_constant({4, 3, 3, 3}, random_floats(4 * 27, 7));
  const uint32_t mw = b.add_constant({64, 5}, random_floats(64 * 5, 8));
  const uint32_t c = b.add_tensor({1, 4, 8, 8}), r = b.add_tensor({4, 64});
  const uint32_t m = b.add_tensor({4, 5}), cat = b.add_tensor({8, 5});
  const uint32_t y = b.add_output({8, 5}, 1);
  b.set_debug_id(0);
  b.add_node(fb::OpType::Conv2d, {x, cw}, c,
             {.stride = {1, 1}, .padding = {1, 1}, .dilation = {1, 1}});
  b.set_debug_id(1);
  b.add_node(fb::OpType::Reshape, {c}, r);
  b.set_debug_id(2);
  b.add_node(fb::OpType::MatMul, {r, mw}, m);
  b.set_debug_id(3);
  b.add_node(fb::OpType::Cat, {m, m}, cat, {.axis = 0});
  b.set_debug_id(4);
  b.add_node(fb::OpType::Clamp, {cat}, y, {.output_min = 0.0f});
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  TestTensor tx({1, 3, 8, 8}, random_floats(192, 9)), ty({8, 5});
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok);  // untraced
  EXPECT_EQ(delegate_recordings(d.handle()), 1);

  std::vector<TraceEvent> buffer(64);
  EventTracer tracer(Span<TraceEvent>(buffer.data(), buffer.size()));
  for (int run = 0; run < 2; ++run) {
    tracer.clear();
    tracer.begin_instruction(0);  // stands for the program's delegate call
    ASSERT_EQ(d.execute({tx.value(), ty.value()}, &tracer), Error::Ok) << last_error_message();
    tracer.end_instruction(0);
    const Span<const TraceEvent> events = tracer.events();
    ASSERT_EQ(events.size(), 1u + 3u + 5u);
    const TraceEvent& call = events[0];
    const TraceEvent& run_cb = events[2];
    ASSERT_STREQ(run_cb.name, "vulkan: run command buffer");
    std::vector<std::string> names;
    std::vector<int32_t> ids;
    uint64_t sum = 0;
    // call, copy inputs, run command buffer, its 5 dispatches, copy outputs.
    ASSERT_STREQ(events[8].name, "vulkan: copy outputs");
    for (size_t i = 3; i < 8; ++i) {
      const TraceEvent& e = events[i];
      EXPECT_EQ(e.kind, TraceEvent::Kind::DelegateNode);
      EXPECT_EQ(e.instruction, 0);
      EXPECT_LE(run_cb.start, e.start);
      EXPECT_LE(e.start, e.end);
      EXPECT_LE(e.end, run_cb.end);
      if (i > 3) EXPECT_LE(events[i - 1].end, e.start);  // in order, not overlapping
      names.push_back(e.name);
      ids.push_back(e.delegate_debug_id);
      sum += e.end - e.start;
    }
    EXPECT_EQ(names, (std::vector<std::string>{"vulkan: conv2d", "vulkan: linear", "vulkan: cat",
                                               "vulkan: cat", "vulkan: clamp"}));
    EXPECT_EQ(ids, (std::vector<int32_t>{0, 2, 3, 3, 4}));
    EXPECT_LE(sum, call.end - call.start);
  }
  EXPECT_EQ(delegate_recordings(d.handle()), 2);              // the timestamped one, recorded once
  ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok);  // untraced again
  EXPECT_EQ(delegate_recordings(d.handle()), 2);
}

TEST(VulkanBackend, DelegatesShareTheDeviceContext) {
  Result<Context*> a = shared_context();
  ASSERT_TRUE(a.ok());
  const Mlp mlp;
  Delegate d1, d2;
  ASSERT_EQ(d1.init(mlp.payload(2)), Error::Ok);
  ASSERT_EQ(d2.init(mlp.payload(7)), Error::Ok);
  Result<Context*> b = shared_context();
  EXPECT_EQ(*a, *b);
  // Interleaved calls on the two regions each give their own results.
  TestTensor x2({2, 24}, random_floats(48, 5)), r2({2, 10}, random_floats(20, 6));
  TestTensor x7({7, 24}, random_floats(168, 7)), r7({7, 10}, random_floats(70, 8));
  TestTensor y2({2, 10}), h2({2, 32}), y7({7, 10}), h7({7, 32});
  ASSERT_EQ(d1.execute({x2.value(), r2.value(), y2.value(), h2.value()}), Error::Ok);
  ASSERT_EQ(d2.execute({x7.value(), r7.value(), y7.value(), h7.value()}), Error::Ok);
  expect_close(y2.read(), mlp.reference(x2, r2, 2), 1e-5f, 1e-5f, "region 1");
  expect_close(y7.read(), mlp.reference(x7, r7, 7), 1e-5f, 1e-5f, "region 2");
}

TEST(VulkanBackend, RefusesWrongArguments) {
  const Mlp mlp;
  Delegate d;
  ASSERT_EQ(d.init(mlp.payload(3)), Error::Ok);
  TestTensor x({3, 24}), r({3, 10}), y({3, 10}), h({3, 32});
  EXPECT_EQ(d.execute({x.value(), r.value(), y.value()}), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("expects 4 arguments"), std::string::npos);
  TestTensor bad_shape({4, 24});
  EXPECT_EQ(d.execute({bad_shape.value(), r.value(), y.value(), h.value()}),
            Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("arg 0 (input)"), std::string::npos);
  TestTensor bad_dtype({3, 10}, ScalarType::Int);
  EXPECT_EQ(d.execute({x.value(), bad_dtype.value(), y.value(), h.value()}),
            Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("expected Float"), std::string::npos);
  EValue not_tensor = EValue::from_int(1);
  EXPECT_EQ(d.execute({x.value(), r.value(), &not_tensor, h.value()}), Error::InvalidArgument);
}

// Verifies `payload` and expects InvalidProgram with `needle` in the message.
void expect_refused(const std::vector<uint8_t>& payload, const char* needle) {
  const fb::Payload* p = nullptr;
  const Error e = verify_payload(Span<const uint8_t>(payload.data(), payload.size()), &p);
  EXPECT_NE(e, Error::Ok) << needle;
  EXPECT_NE(std::string(last_error_message()).find(needle), std::string::npos)
      << "message: " << last_error_message();
  // The backend refuses it the same way, creating nothing.
  Delegate d;
  EXPECT_NE(d.init(payload), Error::Ok);
}

TEST(VulkanBackend, VerifierRefusesMalformedPayloads) {
  const std::vector<float> w(12, 0.5f);
  {  // not a flatbuffer; truncated
    expect_refused({1, 2, 3, 4, 5, 6, 7, 8, 9}, "not a valid PVK1");
    auto good = Mlp().payload(2);
    good.resize(good.size() / 3);
    expect_refused(good, "");
  }
  {  // K mismatch
    PayloadBuilder b;
    const uint32_t x = b.add_input({2, 5}, 0);
    const uint32_t c = b.add_constant({3, 4}, w);
    const uint32_t y = b.add_output({2, 3}, 1);
    b.add_node(fb::OpType::Linear, {x, c}, y);
    expect_refused(b.build(), "disagree on K");
  }
  {  // broadcast to a wrong output shape
    PayloadBuilder b;
    const uint32_t x = b.add_input({2, 3}, 0), z = b.add_input({4, 3}, 1);
    const uint32_t y = b.add_output({2, 3}, 2);
    b.add_node(fb::OpType::Mul, {x, z}, y);
    expect_refused(b.build(), "broadcast");
  }
  {  // reading a tensor nothing wrote
    PayloadBuilder b;
    const uint32_t t = b.add_tensor({4});
    const uint32_t y = b.add_output({4}, 0);
    b.add_node(fb::OpType::Clamp, {t}, y);
    expect_refused(b.build(), "before anything writes it");
  }
  {  // an output written twice
    PayloadBuilder b;
    const uint32_t x = b.add_input({4}, 0);
    const uint32_t y = b.add_output({4}, 1);
    b.add_node(fb::OpType::Clamp, {x}, y);
    b.add_node(fb::OpType::Softmax, {x}, y);
    expect_refused(b.build(), "already written");
  }
  {  // argument indices with a gap
    PayloadBuilder b;
    const uint32_t x = b.add_input({4}, 0);
    const uint32_t y = b.add_output({4}, 5);
    b.add_node(fb::OpType::Clamp, {x}, y);
    expect_refused(b.build(), "arg_index");
  }
  {  // tensor index out of range
    PayloadBuilder b;
    const uint32_t x = b.add_input({4}, 0);
    b.add_output({4}, 1);
    b.add_node(fb::OpType::Clamp, {x}, x);
    expect_refused(b.build(), "an input");
  }
  {  // clamp with min > max
    PayloadBuilder b;
    const uint32_t x = b.add_input({4}, 0);
    const uint32_t y = b.add_output({4}, 1);
    b.add_node(fb::OpType::Clamp, {x}, y, {.output_min = 2.0f, .output_max = 1.0f});
    expect_refused(b.build(), "output_min > output_max");
  }
  {  // a zero-sized dim
    PayloadBuilder b;
    const uint32_t x = b.add_input({0, 4}, 0);
    const uint32_t y = b.add_output({0, 4}, 1);
    b.add_node(fb::OpType::Clamp, {x}, y);
    expect_refused(b.build(), "dim 0 is 0");
  }
  // Upsample and Pad attributes and shapes.
  const auto one = [](std::vector<uint32_t> in, std::vector<uint32_t> out, fb::OpType op,
                      NodeAttrs a) {
    PayloadBuilder b;
    const uint32_t x = b.add_input(std::move(in), 0);
    const uint32_t y = b.add_output(std::move(out), 1);
    b.add_node(op, {x}, y, a);
    return b.build();
  };
  expect_refused(one({2, 8, 8}, {2, 16, 16}, fb::OpType::Upsample, {}), "[N, C, H, W]");
  expect_refused(one({1, 2, 8, 8}, {1, 3, 16, 16}, fb::OpType::Upsample, {}), "same N and C");
  expect_refused(one({1, 2, 8, 8}, {1, 2, 16, 16}, fb::OpType::Upsample, {.scales = {2.0}}),
                 "scales need 2 entries");
  expect_refused(one({1, 2, 8, 8}, {1, 2, 16, 16}, fb::OpType::Upsample, {.scales = {2.0, -1.0}}),
                 "negative or not finite");
  expect_refused(one({3, 5}, {3, 8}, fb::OpType::Pad, {}), "pads need 4 entries");
  expect_refused(one({3, 5}, {3, 9}, fb::OpType::Pad, {.pads = {1, 2, 0, 0}}),
                 "the input's plus the pads");
  expect_refused(one({5}, {10}, fb::OpType::Pad, {.pads = {1, 2, 1, 1}}),
                 "a 1-D tensor pads its last dim only");
  expect_refused(one({3, 5}, {3, 10}, fb::OpType::Pad,
                     {.pads = {5, 0, 0, 0}, .pad_mode = fb::PadMode::Reflect}),
                 "reflection pads must be smaller");
}

// Every single-byte corruption of a small payload is either refused or, if still valid, loads
// and runs (or refuses the arguments) without crashing.
TEST(VulkanBackend, CorruptedPayloadsNeverCrash) {
  PayloadBuilder b;
  const std::vector<float> w(8, 0.25f);
  const uint32_t x = b.add_input({2, 4}, 0);
  const uint32_t c = b.add_constant({2, 4}, w);
  const uint32_t h = b.add_tensor({2, 2});
  const uint32_t y = b.add_output({2, 2}, 1);
  b.add_node(fb::OpType::Linear, {x, c}, h);
  b.add_node(fb::OpType::Softmax, {h}, y);
  const std::vector<uint8_t> good = b.build();
  size_t accepted = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x5a;
    const fb::Payload* p = nullptr;
    if (verify_payload(Span<const uint8_t>(bad.data(), bad.size()), &p) != Error::Ok) continue;
    ++accepted;
    Delegate d;
    if (d.init(bad) != Error::Ok) continue;
    TestTensor tx({2, 4}), ty({2, 2});
    d.execute({tx.value(), ty.value()});  // Ok, or an argument refused with a message
  }
  EXPECT_LT(accepted, good.size());
}

}  // namespace
}  // namespace pteron::vulkan::testing
