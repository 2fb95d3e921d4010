// The runtime never trusts a file: every corruption is caught at load with a message naming
// what is wrong, and no input — truncated, flipped or random — crashes it.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "tests/runtime/test_program_builder.h"

namespace pteron {
namespace {

using testing::AddProgramSpec;
using testing::build_add_program;

struct Outcome {
  Error error = Error::Ok;
  std::string message;
};

// Loads, initialises and (if inputs fit) executes a program; reports the first error.
Outcome load_and_run(const std::vector<uint8_t>& bytes) {
  clear_error_message();
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  if (!program.ok()) return {program.error(), last_error_message()};
  const Program& p = (*program)->program();
  for (size_t m = 0; m < p.num_methods(); ++m) {
    auto method = HostMethod::load(**program, *p.method_name(m), HostMethodOptions{1 << 20});
    if (!method.ok()) return {method.error(), last_error_message()};
    Method& run = (*method)->method();
    std::vector<std::vector<uint8_t>> buffers;
    bool inputs_ok = true;
    for (size_t i = 0; i < run.num_inputs() && inputs_ok; ++i) {
      EValue& in = run.input(i);
      if (in.tag != Tag::Tensor) continue;
      if (in.tensor->mutable_data() == nullptr) {
        buffers.emplace_back(in.tensor->nbytes() + 1);
        inputs_ok =
            run.set_input_pointer(i, buffers.back().data(), in.tensor->nbytes()) == Error::Ok;
      }
    }
    const Error e = run.execute();
    if (e != Error::Ok) return {e, last_error_message()};
  }
  return {};
}

// Loads the add program `spec` builds and sets its inputs to 1..4 and 10..40.
void load_add(const AddProgramSpec& spec, std::unique_ptr<HostProgram>& program,
              std::unique_ptr<HostMethod>& method) {
  const auto bytes = build_add_program(spec);
  auto p = HostProgram::from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(p.ok()) << last_error_message();
  program = std::move(*p);
  auto m = HostMethod::load(*program, "forward");
  ASSERT_TRUE(m.ok()) << last_error_message();
  method = std::move(*m);
  static float x[4] = {1, 2, 3, 4}, y[4] = {10, 20, 30, 40};
  static int32_t sizes[1] = {4}, strides[1];
  static uint8_t order[1] = {0};
  Tensor tx(ScalarType::Float, 1, sizes, order, strides, x);
  ASSERT_EQ(method->method().set_input(0, tx), Error::Ok);
  Tensor ty(ScalarType::Float, 1, sizes, order, strides, y);
  ASSERT_EQ(method->method().set_input(1, ty), Error::Ok);
}

TEST(ProgramVerify, ValidProgramRunsAdd) {
  std::unique_ptr<HostProgram> program;
  std::unique_ptr<HostMethod> method;
  ASSERT_NO_FATAL_FAILURE(load_add({}, program, method));
  Method& m = method->method();
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  const float* out = m.output(0).tensor->data<const float>();
  EXPECT_EQ(out[0], 11);
  EXPECT_EQ(out[3], 44);
}

// A loop whose exit never comes: execute() stops it after its step bound; the measuring run
// (the firmware budget's) runs each instruction once, falling through the jump.
TEST(ProgramVerify, EachInstructionOnceFallsThroughJumps) {
  AddProgramSpec spec;
  spec.jump_destination = 0;
  spec.bool_value = false;
  std::unique_ptr<HostProgram> program;
  std::unique_ptr<HostMethod> method;
  ASSERT_NO_FATAL_FAILURE(load_add(spec, program, method));
  Method& m = method->method();
  ASSERT_EQ(m.execute_each_instruction_once(), Error::Ok) << last_error_message();
  EXPECT_EQ(m.output(0).tensor->data<const float>()[3], 44);
  EXPECT_EQ(m.execute(), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("does not terminate"), std::string::npos);
}

// A JumpFalse on a bool tensor reads its elements as bytes, non-zero true: the tensor here is
// planned over the input x, whose bytes are 226 or 0 (reading 226 as `bool` is undefined; the
// sanitized build of this test catches it).
TEST(ProgramVerify, JumpOnBoolTensorReadsBytes) {
  AddProgramSpec spec;
  spec.jump_destination = 0;
  spec.bool_tensor_offset = 0;
  for (const uint8_t byte : {uint8_t{226}, uint8_t{0}}) {
    std::unique_ptr<HostProgram> program;
    std::unique_ptr<HostMethod> method;
    ASSERT_NO_FATAL_FAILURE(load_add(spec, program, method));
    float x[4];
    std::memset(x, 226, sizeof(x));
    reinterpret_cast<uint8_t*>(x)[2] = byte;  // element 2 of the bool view
    int32_t sizes[1] = {4}, strides[1];
    uint8_t order[1] = {0};
    Tensor tx(ScalarType::Float, 1, sizes, order, strides, x);
    Method& m = method->method();
    ASSERT_EQ(m.set_input(0, tx), Error::Ok);
    if (byte != 0) {
      EXPECT_EQ(m.execute(), Error::Ok) << last_error_message();  // all true: falls through
    } else {
      EXPECT_EQ(m.execute(), Error::InvalidProgram);  // one false: jumps back, forever
      EXPECT_NE(std::string(last_error_message()).find("does not terminate"), std::string::npos);
    }
  }
}

struct Corruption {
  const char* name;
  AddProgramSpec spec;
  Error expected;
  const char* message;  // substring of the error message
};

std::vector<Corruption> corruptions() {
  std::vector<Corruption> c;
  auto add = [&](const char* name, auto mutate, Error e, const char* msg) {
    AddProgramSpec s;
    mutate(s);
    c.push_back({name, s, e, msg});
  };
  add(
      "arg index out of range", [](auto& s) { s.bad_arg_index = 99; }, Error::InvalidProgram,
      "refers to value 99");
  add(
      "huge arg index", [](auto& s) { s.bad_arg_index = 1000000; }, Error::InvalidProgram,
      "refers to value 1000000");
  add(
      "operator index out of range", [](auto& s) { s.op_index = 3; }, Error::InvalidProgram,
      "calls operator 3");
  add(
      "memory id out of range", [](auto& s) { s.out_memory_id = 7; }, Error::InvalidProgram,
      "memory_id 7");
  add("memory id zero", [](auto& s) { s.out_memory_id = 0; }, Error::InvalidProgram, "memory_id 0");
  add(
      "offset past arena", [](auto& s) { s.out_offset = 250; }, Error::InvalidProgram,
      "overruns arena");
  add(
      "offset far past arena", [](auto& s) { s.out_offset = uint64_t{1} << 40; },
      Error::InvalidProgram, "overruns arena");
  add(
      "negative size", [](auto& s) { s.out_size_override = -3; }, Error::InvalidProgram,
      "negative size");
  add(
      "oversized tensor", [](auto& s) { s.out_size_override = 2147483647; }, Error::InvalidProgram,
      "overruns arena");
  add(
      "negative arena size", [](auto& s) { s.arena_bytes = -1; }, Error::InvalidProgram,
      "negative size");
  add("bad dim order", [](auto& s) { s.out_dim_order = {3}; }, Error::InvalidProgram, "dim order");
  add(
      "dim order length mismatch", [](auto& s) { s.out_dim_order = {0, 1}; }, Error::InvalidProgram,
      "dim order");
  add(
      "unsupported dtype", [](auto& s) { s.out_dtype = 23; }, Error::InvalidProgram,
      "unsupported dtype");
  add(
      "output index out of range", [](auto& s) { s.output_index = 42; }, Error::InvalidProgram,
      "output 0 refers to value 42");
  add(
      "jump past the end", [](auto& s) { s.jump_destination = 17; }, Error::InvalidProgram,
      "jumps to 17");
  add(
      "jump on a float tensor",
      [](auto& s) {
        s.jump_destination = 2;
        s.jump_value = 3;
      },
      Error::InvalidProgram, "not a bool");
  add(
      "jump loop forever",
      [](auto& s) {
        s.jump_destination = 0;
        s.bool_value = false;
      },
      Error::InvalidProgram, "does not terminate");
  add(
      "int list item not an int", [](auto& s) { s.int_list_item = 0; }, Error::InvalidProgram,
      "not an int");
  add(
      "int list item out of range", [](auto& s) { s.int_list_item = 500; }, Error::InvalidProgram,
      "not an int");
  add(
      "unknown kernel", [](auto& s) { s.op_name = "aten::frobnicate"; }, Error::NotFound,
      "aten::frobnicate.out");
  add(
      "wrong kernel argument types", [](auto& s) { s.bad_arg_index = 2; }, Error::InvalidProgram,
      "argument 1: expected 'T', got Int");
  add(
      "shape mismatch at run time", [](auto& s) { s.out_size_override = 5; },
      Error::InvalidArgument, "aten::add.out");
  return c;
}

TEST(ProgramVerify, EachCorruptionIsNamed) {
  for (const Corruption& c : corruptions()) {
    const Outcome o = load_and_run(build_add_program(c.spec));
    EXPECT_EQ(o.error, c.expected) << c.name << ": " << o.message;
    EXPECT_NE(o.message.find(c.message), std::string::npos)
        << c.name << ": got '" << o.message << "'";
  }
}

TEST(ProgramVerify, WrongIdentifier) {
  auto bytes = build_add_program({});
  std::memcpy(bytes.data() + 4, "XX99", 4);
  const Outcome o = load_and_run(bytes);
  EXPECT_EQ(o.error, Error::InvalidProgram);
  EXPECT_NE(o.message.find("'XX99', expected 'ET12'"), std::string::npos) << o.message;
}

TEST(ProgramVerify, EveryTruncationFailsCleanly) {
  const auto bytes = build_add_program({});
  for (size_t len = 0; len < bytes.size(); ++len) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(len));
    const Outcome o = load_and_run(cut);
    EXPECT_NE(o.error, Error::Ok) << "truncated to " << len;
    EXPECT_FALSE(o.message.empty()) << "truncated to " << len;
  }
}

TEST(ProgramVerify, EveryByteFlipIsSafe) {
  const auto bytes = build_add_program({});
  size_t rejected = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (uint8_t mask : {0xffu, 0x01u, 0x80u}) {
      std::vector<uint8_t> flipped = bytes;
      flipped[i] ^= mask;
      const Outcome o = load_and_run(flipped);  // must not crash; sanitizers check memory
      if (o.error != Error::Ok) {
        ++rejected;
        EXPECT_FALSE(o.message.empty()) << "byte " << i;
      }
    }
  }
  EXPECT_GT(rejected, bytes.size());  // most flips break something, and say so
}

TEST(ProgramVerify, RandomBytesWithIdentifierAreRejected) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes(8 + rng() % 600);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    std::memcpy(bytes.data() + 4, "ET12", 4);
    const Outcome o = load_and_run(bytes);
    EXPECT_NE(o.error, Error::Ok);
  }
}

// A file may hold any double where an int Scalar is expected (the fuzzer found add.out's alpha
// = -1e158 on int tensors): converting must not be undefined behaviour (this binary runs under
// UBSan in make test).
TEST(ProgramVerify, ScalarAsIntOfAnyDouble) {
  EXPECT_EQ(EValue::from_double(2.9).scalar_as_int(), 2);
  EXPECT_EQ(EValue::from_double(-2.9).scalar_as_int(), -2);
  EXPECT_EQ(EValue::from_double(-1.06404e158).scalar_as_int(), 0);
  EXPECT_EQ(EValue::from_double(1e19).scalar_as_int(), 0);
  EXPECT_EQ(EValue::from_double(std::numeric_limits<double>::quiet_NaN()).scalar_as_int(), 0);
  EXPECT_EQ(EValue::from_int(-7).scalar_as_int(), -7);
  EXPECT_EQ(EValue::from_bool(true).scalar_as_int(), 1);
}

// A zero dim leaves the other dims' product as the outermost stride: the fuzzer found sizes
// [0, 2^24 + 1, ...] that passed the element-count check (0 elements) and overflowed int64
// computing strides (tests/fuzz/regressions/zero-dim-huge-strides.pte, under UBSan in make test).
// The verifier and resize() count a zero dim as 1.
TEST(ProgramVerify, ZeroDimsDoNotHideStridesBeyond32Bits) {
  const int32_t hidden[3] = {0, 65536, 65536}, fits[3] = {0, 4, 4};
  EXPECT_EQ(checked_numel(Span<const int32_t>(hidden, 3), INT32_MAX), -1);
  EXPECT_EQ(checked_numel(Span<const int32_t>(fits, 3), INT32_MAX), 0);
  int32_t sizes[3] = {1, 4, 4}, strides[3];
  uint8_t order[3] = {0, 1, 2};
  float data[16];
  Tensor t(ScalarType::Float, 3, sizes, order, strides, data, ShapeDynamism::DynamicBound);
  EXPECT_EQ(t.resize(Span<const int32_t>(hidden, 3)), Error::OutOfRange);
  EXPECT_EQ(t.resize(Span<const int32_t>(fits, 3)), Error::Ok);
  EXPECT_EQ(t.stride(0), 16);
}

}  // namespace
}  // namespace pteron
