// Constant methods in the compiler: the LLM metadata a KV-cache decoder's graph implies, the
// checks on given values, the CLI's NAME=VALUE syntax, and the emitted plans read back by the
// runtime's reader.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/compile_error.h"
#include "compiler/emit/constant_methods.h"
#include "compiler/emit/program_emitter.h"
#include "runtime/host/host_method.h"
#include "runtime/llm/metadata.h"

namespace pteron::compiler {
namespace {

using ir::ScalarType;
using ir::TensorSpec;

ir::ConstantData zeros(const TensorSpec& spec) {
  return ir::ConstantData::owned(std::vector<uint8_t>(spec.nbytes()), "cache");
}

// A decoder's interface: token ids and position in, logits out, caches of `lengths` as state.
ir::Graph decoder(const std::vector<int64_t>& cache_lengths, ScalarType logits = ScalarType::Float,
                  bool dynamic_tokens = false) {
  ir::Graph g;
  TensorSpec tokens = TensorSpec::contiguous(ScalarType::Long, {1, 4});
  if (dynamic_tokens) {
    tokens.min_sizes = {1, 1};
    tokens.sym_sizes = {nullptr, ir::SymExpr::sym("s0")};
  }
  g.add_input("input_ids", tokens);
  g.add_input("cache_position", TensorSpec::contiguous(ScalarType::Long, {1}));
  for (size_t i = 0; i < cache_lengths.size(); ++i) {
    const TensorSpec cache = TensorSpec::contiguous(ScalarType::Float, {1, 2, cache_lengths[i], 8});
    g.add_state("k_cache_" + std::to_string(i), cache, zeros(cache));
  }
  // A rank-1 counter is state too, but no cache.
  const TensorSpec counter = TensorSpec::contiguous(ScalarType::Long, {1});
  g.add_state("position", counter, zeros(counter));
  const ir::ValueId out = g.add_input("logits", TensorSpec::contiguous(logits, {1, 4, 64}));
  g.set_outputs({out});
  return g;
}

std::string described(const std::vector<ConstantMethod>& methods) {
  std::string s;
  for (const ConstantMethod& m : methods) s += (s.empty() ? "" : " ") + describe_constant_method(m);
  return s;
}

TEST(ConstantMethods, DecoderCachesGiveTheLlmMetadata) {
  const auto derived = derive_llm_metadata(decoder({24, 24}));
  // Two [1, 2, 24, 8] caches: one layer's keys and values, 2 KV heads of 8; 4 tokens per call.
  EXPECT_EQ(described(derived),
            "get_max_seq_len=4 get_max_context_len=24 use_kv_cache=true "
            "use_sdpa_with_kv_cache=false get_vocab_size=64 enable_dynamic_shape=false "
            "get_n_layers=1 get_n_kv_heads=2 get_head_dim=8");
  for (const ConstantMethod& m : derived) EXPECT_TRUE(m.derived);
  // An odd number of caches is no set of key/value pairs: no layer count.
  EXPECT_EQ(described(derive_llm_metadata(decoder({16}, ScalarType::Float, true))),
            "get_max_seq_len=4 get_max_context_len=16 use_kv_cache=true "
            "use_sdpa_with_kv_cache=false get_vocab_size=64 enable_dynamic_shape=true");
  // Integer "logits" are not logits: no vocabulary size.
  EXPECT_EQ(described(derive_llm_metadata(decoder({16}, ScalarType::Long))),
            "get_max_seq_len=4 get_max_context_len=16 use_kv_cache=true "
            "use_sdpa_with_kv_cache=false enable_dynamic_shape=false");
  // A call takes at most the cache's positions.
  EXPECT_EQ(described(derive_llm_metadata(decoder({2}, ScalarType::Long))).substr(0, 39),
            "get_max_seq_len=2 get_max_context_len=2");
}

TEST(ConstantMethods, ReadsAJsonObjectOfMethods) {
  EXPECT_EQ(described(constant_methods_from_json(
                R"({"get_bos_id": 1, "get_eos_ids": [2, 3], "f": 0.5, "s": "x", "b": true})", "j")),
            "get_bos_id=1 get_eos_ids=[2, 3] f=0.5 s=\"x\" b=true");
  for (const char* bad : {"[1]", "{", "{\"a\": {\"b\": 1}}", "{\"a\": [[1]]}", "{\"a\": null}",
                          "{\"a\": 18446744073709551615}"})
    EXPECT_THROW(constant_methods_from_json(bad, "j"), CompileError) << bad;
}

TEST(ConstantMethods, NoCacheOrCachesOfSeveralLengthsGiveNothing) {
  EXPECT_TRUE(derive_llm_metadata(decoder({})).empty());
  // Sliding-window and global caches: no one length to state.
  EXPECT_TRUE(derive_llm_metadata(decoder({16, 32})).empty());
}

TEST(ConstantMethods, GivenMethodsReplaceDerivedOnes) {
  const std::vector<ConstantMethod> given = {parse_constant_method("get_max_seq_len=8"),
                                             parse_constant_method("get_eos_ids=[2]")};
  const auto merged = merge_constant_methods(derive_llm_metadata(decoder({24})), given);
  EXPECT_EQ(described(merged),
            "get_max_context_len=24 use_kv_cache=true use_sdpa_with_kv_cache=false "
            "get_vocab_size=64 enable_dynamic_shape=false get_max_seq_len=8 get_eos_ids=[2]");
}

TEST(ConstantMethods, ParsesTheCliSyntax) {
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=128")), "a=128");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=-3")), "a=-3");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=true")), "a=true");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=0.25")), "a=0.25");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=3.0")), "a=3.0");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=\"x y\"")), "a=\"x y\"");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=[1, 2,3]")), "a=[1, 2, 3]");
  EXPECT_EQ(describe_constant_method(parse_constant_method("a=[]")), "a=[]");
  const ConstantMethod list = parse_constant_method("get_eos_ids=[2,31999]");
  EXPECT_TRUE(list.list);
  EXPECT_EQ(constant_method_spec(list), "L2#1#1($,$)");
  EXPECT_EQ(constant_method_spec(parse_constant_method("a=1")), "$");
  EXPECT_EQ(constant_method_spec(parse_constant_method("a=[]")), "L0()");
  for (const char* bad : {"a", "=1", "a=", "a=abc", "a=[1,2", "a=1e999", "a=99999999999999999999"})
    EXPECT_THROW(parse_constant_method(bad), CompileError) << bad;
}

void expect_refused(const std::vector<std::string>& specs, const std::string& want) {
  std::vector<ConstantMethod> methods;
  for (const std::string& s : specs) methods.push_back(parse_constant_method(s));
  try {
    check_constant_methods(methods, {"forward"});
    ADD_FAILURE() << "not refused: " << want;
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(ConstantMethods, RefusesWhatTheRuntimeWouldRefuse) {
  expect_refused({"get_max_seq_len=0"},
                 "'get_max_seq_len' (get_max_seq_len=0): a length must be positive");
  expect_refused({"get_max_context_len=1.5"}, "an int is needed, not a float");
  expect_refused({"get_vocab_size=\"big\""}, "an int is needed, not a string");
  expect_refused({"get_bos_id=[1]"}, "LLM metadata takes one value, not a list");
  expect_refused({"get_eos_ids=[1,-1]"}, "a token id must not be negative");
  expect_refused({"use_kv_cache=2"}, "a flag is true or false, not an int 2");
  expect_refused({"get_vocab_size=10", "get_eos_ids=[3,10]"},
                 "token id 10 is outside the vocabulary (get_vocab_size=10)");
  expect_refused({"forward=1"}, "'forward' has the name of a method of the program");
  expect_refused({"a=1", "a=2"}, "'a' is given twice");
  expect_refused({"get_eos_ids=[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"}, "at most 16 ids");
  // Other names take any value, and flags take 0/1.
  std::vector<ConstantMethod> fine = {parse_constant_method("anything=[1, true, 0.5, \"s\"]"),
                                      parse_constant_method("use_kv_cache=1"),
                                      parse_constant_method("get_vocab_size=10"),
                                      parse_constant_method("get_eos_ids=9")};
  EXPECT_NO_THROW(check_constant_methods(fine, {"forward"}));
}

TEST(ConstantMethods, EmittedPlansReadBackThroughTheRuntime) {
  std::vector<ConstantMethod> methods = derive_llm_metadata(decoder({24}));
  methods.push_back(parse_constant_method("get_eos_ids=[2,7]"));
  methods.push_back(parse_constant_method("get_bos_id=1"));
  methods.push_back(parse_constant_method("label=\"tiny\""));
  check_constant_methods(methods, {});
  // A program of constant methods only is still a program.
  const std::vector<uint8_t> bytes = emit_program({}, nullptr, {}, methods);
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto read = llm::read_llm_metadata((*program)->program());
  ASSERT_TRUE(read.ok()) << last_error_message();
  const llm::LlmMetadata& m = read.get();
  EXPECT_EQ(m.max_seq_len, 4);
  EXPECT_EQ(m.max_context_len, 24);
  EXPECT_EQ(m.vocab_size, 64);
  EXPECT_EQ(m.use_kv_cache, true);
  EXPECT_EQ(m.use_sdpa_with_kv_cache, false);
  EXPECT_EQ(m.enable_dynamic_shape, false);
  EXPECT_EQ(m.bos_id, 1);
  ASSERT_EQ(m.eos_ids.count, 2u);
  EXPECT_EQ(m.eos_ids.ids[1], 7);
  auto label = HostMethod::load(**program, "label");
  ASSERT_TRUE(label.ok()) << last_error_message();
  ASSERT_EQ((*label)->method().execute(), Error::Ok);
  const EValue& v = (*label)->method().output(0);
  ASSERT_EQ(v.tag, Tag::String);
  EXPECT_EQ(std::string(v.string.data(), v.string.size()), "tiny");
}

}  // namespace
}  // namespace pteron::compiler
