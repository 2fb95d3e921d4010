// Bounded dynamic shapes in the Vulkan delegate ("resize at execute"): a region whose sizes
// are expressions of its input's batch runs every size up to the planned bound from one init,
// re-recording its command buffer only when the sizes change; the verifier refuses size
// expressions that could exceed the planned sizes or read a dim no input has; sizes outside a
// symbol's range are refused with the argument, dim and bounds; corrupted dynamic payloads
// never crash.
#include <string>

#include "backends/vulkan/runtime/payload_verifier.h"
#include "tests/backends/vulkan/vulkan_test_util.h"

namespace pteron::vulkan::testing {
namespace {

constexpr uint32_t kMaxBatch = 8;

SizeProgram batch() { return SizeProgram::symbol(0); }
SizeProgram fixed(int64_t v) { return SizeProgram::constant(v); }

// x[B, 24] -> linear(24 -> 32) + relu -> linear(32 -> 10) -> + r[B, 10] -> softmax, B in
// [1, 8] read from x's dim 0; r and both outputs follow it.
struct DynamicMlp : MlpWeights {
  std::vector<uint8_t> payload() const {
    PayloadBuilder b;
    const uint32_t x = b.add_input({kMaxBatch, 24}, 0);
    const uint32_t r = b.add_input({kMaxBatch, 10}, 1);
    const uint32_t cw1 = b.add_constant({32, 24}, w1), cb1 = b.add_constant({32}, b1);
    const uint32_t cw2 = b.add_constant({10, 32}, w2), cb2 = b.add_constant({10}, b2);
    const uint32_t h = b.add_tensor({kMaxBatch, 32});
    const uint32_t hr = b.add_tensor({kMaxBatch, 32});
    const uint32_t o = b.add_tensor({kMaxBatch, 10});
    const uint32_t s = b.add_tensor({kMaxBatch, 10});
    const uint32_t y = b.add_output({kMaxBatch, 10}, 2);
    b.add_symbol(0, 0, 1, kMaxBatch);
    for (uint32_t t : {x, r, o, s, y}) b.set_sym_dims(t, {batch(), fixed(10)});
    b.set_sym_dims(x, {batch(), fixed(24)});
    for (uint32_t t : {h, hr}) b.set_sym_dims(t, {batch(), fixed(32)});
    b.add_node(fb::OpType::Linear, {x, cw1, cb1}, h);
    b.add_node(fb::OpType::Clamp, {h}, hr, {.output_min = 0.0f});
    b.add_node(fb::OpType::Linear, {hr, cw2, cb2}, o);
    b.add_node(fb::OpType::Add, {o, r}, s);
    b.add_node(fb::OpType::Softmax, {s}, y);
    return b.build();
  }
};

TEST(VulkanDynamic, RunsEverySizeAndReRecordsOnlyWhenSizesChange) {
  const DynamicMlp mlp;
  Delegate d;
  ASSERT_EQ(d.init(mlp.payload()), Error::Ok) << last_error_message();
  const uint64_t device_bytes = delegate_device_bytes(d.handle());
  int recordings = delegate_recordings(d.handle());
  int32_t previous = kMaxBatch;  // init recorded at the bound
  uint32_t seed = 10;
  for (int32_t b : {8, 3, 3, 8, 1, 1, 5, 8}) {
    TestTensor x({b, 24}, random_floats(b * 24, ++seed));
    TestTensor r({b, 10}, random_floats(b * 10, ++seed));
    TestTensor y({b, 10});
    ASSERT_EQ(d.execute({x.value(), r.value(), y.value()}), Error::Ok) << last_error_message();
    expect_close(y.read(), mlp.reference(x, r, b), 1e-5f, 1e-5f, "dynamic mlp");
    recordings += b != previous;  // a new size re-records, the same one replays
    EXPECT_EQ(delegate_recordings(d.handle()), recordings) << "batch " << b;
    previous = b;
  }
  EXPECT_EQ(delegate_device_bytes(d.handle()), device_bytes);  // planned once, at the bound
}

TEST(VulkanDynamic, SizesOutsideTheRangeAreRefusedNamingTheArgument) {
  const DynamicMlp mlp;
  Delegate d;
  ASSERT_EQ(d.init(mlp.payload()), Error::Ok) << last_error_message();
  TestTensor x({9, 24}), r({9, 10}), y({9, 10});
  EXPECT_EQ(d.execute({x.value(), r.value(), y.value()}), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message())
                .find("arg 0 (input): size 9 in dim 0 is outside the region's bounds [1, 8]"),
            std::string::npos)
      << last_error_message();
  // An input whose sizes disagree with what the symbols give (r's batch is x's).
  TestTensor x2({2, 24}), r2({3, 10}), y2({2, 10});
  EXPECT_EQ(d.execute({x2.value(), r2.value(), y2.value()}), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("arg 1 (input)"), std::string::npos)
      << last_error_message();
  // The delegate still runs after refusals.
  TestTensor x3({2, 24}, random_floats(48, 7)), r3({2, 10}, random_floats(20, 8)), y3({2, 10});
  ASSERT_EQ(d.execute({x3.value(), r3.value(), y3.value()}), Error::Ok) << last_error_message();
  expect_close(y3.read(), mlp.reference(x3, r3, 2), 1e-5f, 1e-5f, "after refusals");
}

void expect_refused(const std::vector<uint8_t>& payload, const char* needle) {
  const fb::Payload* p = nullptr;
  EXPECT_NE(verify_payload(Span<const uint8_t>(payload.data(), payload.size()), &p), Error::Ok)
      << needle;
  EXPECT_NE(std::string(last_error_message()).find(needle), std::string::npos)
      << "message: " << last_error_message();
  Delegate d;
  EXPECT_NE(d.init(payload), Error::Ok);
}

// x[8, 4] -> clamp -> y[8, 4] with symbol 0 = x's dim 0 in [lo, hi]; `y_dim0` is y's size
// expression for dim 0.
std::vector<uint8_t> one_clamp(SizeProgram y_dim0, uint32_t arg = 0, uint32_t dim = 0,
                               uint32_t lo = 1, uint32_t hi = kMaxBatch) {
  PayloadBuilder b;
  const uint32_t x = b.add_input({kMaxBatch, 4}, 0);
  const uint32_t y = b.add_output({kMaxBatch, 4}, 1);
  b.add_symbol(arg, dim, lo, hi);
  b.set_sym_dims(x, {batch(), fixed(4)});
  b.set_sym_dims(y, {std::move(y_dim0), fixed(4)});
  b.add_node(fb::OpType::Clamp, {x}, y, {.output_min = 0.0f});
  return b.build();
}

TEST(VulkanDynamic, VerifierRefusesSizesBeyondThePlanOrWithoutASource) {
  {  // accepted as built
    const auto good = one_clamp(batch());
    const fb::Payload* p = nullptr;
    ASSERT_EQ(verify_payload(Span<const uint8_t>(good.data(), good.size()), &p), Error::Ok)
        << last_error_message();
  }
  // 2 * s can reach 16, planned 8.
  expect_refused(
      one_clamp(SizeProgram{{fb::SizeOp::Const, fb::SizeOp::Symbol, fb::SizeOp::Mul}, {2, 0, 2}}),
      "size expression spans [2, 16], outside [1, 8]");
  // s - 1 can reach 0.
  expect_refused(
      one_clamp(SizeProgram{{fb::SizeOp::Symbol, fb::SizeOp::Const, fb::SizeOp::Add}, {0, -1, 2}}),
      "size expression spans [0, 7]");
  // A dim of an argument the region does not have, a dim the input does not have.
  expect_refused(one_clamp(batch(), 7), "reads dim 0 of input argument 7");
  expect_refused(one_clamp(batch(), 0, 2), "reads dim 2 of input argument 0");
  // The symbol's range must end at the planned size and start at 1 or more.
  expect_refused(one_clamp(batch(), 0, 0, 1, 9), "ending at the planned dim");
  expect_refused(one_clamp(batch(), 0, 0, 0, 8), "ending at the planned dim");
  // Malformed programs.
  expect_refused(one_clamp(SizeProgram{{fb::SizeOp::Symbol, fb::SizeOp::Add}, {0, 2}}),
                 "combines more values than it holds");
  expect_refused(one_clamp(SizeProgram{{fb::SizeOp::Symbol}, {3}}),
                 "names a symbol the payload does not have");
  expect_refused(one_clamp(SizeProgram{{fb::SizeOp::Symbol, fb::SizeOp::Symbol}, {0, 0}}),
                 "leaves other than one value");
  expect_refused(one_clamp(SizeProgram{
                     {fb::SizeOp::Symbol, fb::SizeOp::Const, fb::SizeOp::FloorDiv}, {0, 0, 2}}),
                 "divides by a range that is not >= 1");
  expect_refused(one_clamp(SizeProgram{{fb::SizeOp::Symbol}, {0, 1}}), "one argument each");
  expect_refused(one_clamp(SizeProgram{{static_cast<fb::SizeOp>(40)}, {0}}), "unknown step");
}

// A derived size at run time (a reshape to [2 * s, 2], planned [16, 2]) and the verifier's
// interval bounds with Python's floor semantics: (s + 5) // 3 * 4 over [1, 8] spans [8, 16],
// s % 3 - 1 spans [-1, 1].
TEST(VulkanDynamic, DerivedSizesAndTheirBounds) {
  PayloadBuilder b;
  const uint32_t x = b.add_input({kMaxBatch, 4}, 0);
  const uint32_t t = b.add_tensor({2 * kMaxBatch, 2});
  const uint32_t y = b.add_output({2 * kMaxBatch, 2}, 1);
  b.add_symbol(0, 0, 1, kMaxBatch);
  b.set_sym_dims(x, {batch(), fixed(4)});
  const SizeProgram twice{{fb::SizeOp::Const, fb::SizeOp::Symbol, fb::SizeOp::Mul}, {2, 0, 2}};
  b.set_sym_dims(t, {twice, fixed(2)});
  b.set_sym_dims(y, {twice, fixed(2)});
  b.add_node(fb::OpType::Reshape, {x}, t);
  b.add_node(fb::OpType::Clamp, {t}, y, {.output_min = 0.0f});
  Delegate d;
  ASSERT_EQ(d.init(b.build()), Error::Ok) << last_error_message();
  for (int32_t s : {8, 2, 5}) {
    std::vector<float> in = random_floats(s * 4, s);
    TestTensor tx({s, 4}, in), ty({2 * s, 2});
    ASSERT_EQ(d.execute({tx.value(), ty.value()}), Error::Ok) << last_error_message();
    for (float& v : in) v = v < 0.0f ? 0.0f : v;
    EXPECT_EQ(ty.read(), in) << "s = " << s;
  }
  const auto range = [](SizeProgram e) {
    PayloadBuilder pb;
    const uint32_t t = pb.add_input({kMaxBatch, 4}, 0);
    const uint32_t o = pb.add_output({kMaxBatch, 4}, 1);
    pb.add_symbol(0, 0, 1, kMaxBatch);
    pb.set_sym_dims(t, {batch(), fixed(4)});
    pb.set_sym_dims(o, {std::move(e), fixed(4)});
    pb.add_node(fb::OpType::Clamp, {t}, o);
    const auto bytes = pb.build();
    const fb::Payload* p = nullptr;
    verify_payload(Span<const uint8_t>(bytes.data(), bytes.size()), &p);
    return std::string(last_error_message());
  };
  EXPECT_NE(
      range(SizeProgram{{fb::SizeOp::Symbol, fb::SizeOp::Const, fb::SizeOp::Add, fb::SizeOp::Const,
                         fb::SizeOp::FloorDiv, fb::SizeOp::Const, fb::SizeOp::Mul},
                        {0, 5, 2, 3, 2, 4, 2}})
          .find("spans [8, 16]"),
      std::string::npos);
  EXPECT_NE(range(SizeProgram{{fb::SizeOp::Symbol, fb::SizeOp::Const, fb::SizeOp::Mod,
                               fb::SizeOp::Const, fb::SizeOp::Add},
                              {0, 3, 2, -1, 2}})
                .find("spans [-1, 1]"),
            std::string::npos);
}

// Every single-byte corruption of a dynamic payload is refused, or loads and runs (or refuses
// the arguments) without crashing, at sizes inside and outside the range.
TEST(VulkanDynamic, CorruptedPayloadsNeverCrash) {
  const std::vector<uint8_t> good = one_clamp(batch());
  size_t accepted = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    std::vector<uint8_t> bad = good;
    bad[i] ^= 0x5a;
    Delegate d;
    if (d.init(bad) != Error::Ok) continue;
    ++accepted;
    for (int32_t s : {3, 8, 9}) {
      TestTensor tx({s, 4}), ty({s, 4});
      d.execute({tx.value(), ty.value()});  // Ok, or refused with a message
    }
  }
  EXPECT_LT(accepted, good.size());
}

}  // namespace
}  // namespace pteron::vulkan::testing
