// LLM metadata methods as ExecuTorch writes them (exir/emit/_emitter.py, _emit_prim_getters:
// a plan per constant whose values are the outputs, one chain with no instructions, no
// operators, non_const_buffer_sizes [0], the value's pytree spec as container_meta_type):
// the executor runs them, read_llm_metadata returns their values and refuses malformed ones
// with one line naming the method.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "runtime/llm/metadata.h"
#include "schema/program_generated.h"

namespace pteron {
namespace {

struct Val {
  fb::KernelTypes type = fb::KernelTypes::Int;
  int64_t i = 0;
  double d = 0;
  bool b = false;
};
Val Int(int64_t v) { return {fb::KernelTypes::Int, v}; }
Val Bool(bool v) { return {fb::KernelTypes::Bool, 0, 0, v}; }
Val Double(double v) { return {fb::KernelTypes::Double, 0, v}; }
Val String() { return {fb::KernelTypes::String}; }

struct PlanSpec {
  std::string name;
  std::vector<Val> values;
  bool list = false;         // the constant was a Python list (spec "L<n>#1...(...)")
  bool takes_input = false;  // a (malformed) metadata method with a tensor input
  int64_t arena = 0;         // > 0: a (malformed) planned arena of this size
};

std::string pytree_spec(const PlanSpec& p) {
  if (!p.list) return "$";
  std::string s = "L";
  s += std::to_string(p.values.size());
  for (size_t i = 0; i < p.values.size(); ++i) s += "#1";
  s += "(";
  for (size_t i = 0; i < p.values.size(); ++i) s += i ? ",$" : "$";
  return s + ")";
}

std::vector<uint8_t> build(const std::vector<PlanSpec>& specs) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::ExecutionPlan>> plans;
  for (const PlanSpec& p : specs) {
    std::vector<flatbuffers::Offset<fb::EValue>> values;
    std::vector<int32_t> inputs, outputs;
    if (p.takes_input) {
      std::vector<int32_t> sizes = {2};
      std::vector<uint8_t> order = {0};
      auto t = fb::CreateTensor(b, fb::ScalarType::FLOAT, 0, b.CreateVector(sizes),
                                b.CreateVector(order));
      values.push_back(fb::CreateEValue(b, fb::KernelTypes::Tensor, t.Union()));
      inputs.push_back(0);
    }
    for (const Val& v : p.values) {
      outputs.push_back(static_cast<int32_t>(values.size()));
      switch (v.type) {
        case fb::KernelTypes::Int:
          values.push_back(fb::CreateEValue(b, v.type, fb::CreateInt(b, v.i).Union()));
          break;
        case fb::KernelTypes::Bool:
          values.push_back(fb::CreateEValue(b, v.type, fb::CreateBool(b, v.b).Union()));
          break;
        case fb::KernelTypes::Double:
          values.push_back(fb::CreateEValue(b, v.type, fb::CreateDouble(b, v.d).Union()));
          break;
        default:
          values.push_back(fb::CreateEValue(b, fb::KernelTypes::String,
                                            fb::CreateString(b, b.CreateString("x")).Union()));
          break;
      }
    }
    std::vector<flatbuffers::Offset<fb::Instruction>> none;
    auto chain = fb::CreateChain(b, b.CreateVector(std::vector<int32_t>{}),
                                 b.CreateVector(std::vector<int32_t>{}), b.CreateVector(none));
    std::vector<flatbuffers::Offset<fb::Chain>> chains = {chain};
    std::vector<int64_t> buffer_sizes = {0};
    if (p.arena > 0) buffer_sizes.push_back(p.arena);
    auto meta = fb::CreateContainerMetadata(b, b.CreateString(""), b.CreateString(pytree_spec(p)));
    plans.push_back(fb::CreateExecutionPlan(
        b, b.CreateString(p.name), meta, b.CreateVector(values), b.CreateVector(inputs),
        b.CreateVector(outputs), b.CreateVector(chains),
        b.CreateVector(std::vector<flatbuffers::Offset<fb::Operator>>{}),
        b.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegate>>{}),
        b.CreateVector(buffer_sizes)));
  }
  auto program = fb::CreateProgram(b, 0, b.CreateVector(plans));
  fb::FinishProgramBuffer(b, program);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

struct Read {
  std::unique_ptr<HostProgram> program;
  Error error = Error::Ok;
  std::string message;
  llm::LlmMetadata metadata;
};

Read read(const std::vector<PlanSpec>& specs) {
  const std::vector<uint8_t> bytes = build(specs);
  Read r;
  auto program = HostProgram::from_bytes(bytes.data(), bytes.size());
  EXPECT_TRUE(program.ok()) << last_error_message();
  if (!program.ok()) return r;
  r.program = std::move(program.get());
  clear_error_message();
  auto m = llm::read_llm_metadata(r.program->program());
  r.error = m.error();
  r.message = last_error_message();
  if (m.ok()) r.metadata = m.get();
  return r;
}

// What ExecuTorch's Llama export writes (examples/models/llama/export_llama_lib.py).
std::vector<PlanSpec> llama_metadata() {
  return {{"get_max_seq_len", {Int(128)}},
          {"get_max_context_len", {Int(256)}},
          {"get_vocab_size", {Int(32000)}},
          {"get_bos_id", {Int(1)}},
          {"get_eos_ids", {Int(2), Int(32000 - 1)}, true},
          {"use_kv_cache", {Bool(true)}},
          {"use_sdpa_with_kv_cache", {Bool(false)}},
          {"enable_dynamic_shape", {Bool(false)}},
          {"get_n_layers", {Int(32)}},
          {"get_dtype", {Int(6)}}};  // not LLM metadata pteron reads: ignored
}

// What optimum-executorch writes (exporters/executorch/utils.py save_config_to_constant_methods).
std::vector<PlanSpec> optimum_metadata() {
  return {{"get_dtype", {Int(6)}},
          {"get_bos_id", {Int(1)}},
          {"get_eos_id", {Int(2), Int(7)}, true},
          {"get_head_dim", {Double(64.0)}},
          {"get_n_kv_heads", {Int(8)}},
          {"get_n_layers", {Int(16)}},
          {"get_vocab_size", {Int(128)}},
          {"get_max_batch_size", {Int(1)}},
          {"get_max_seq_len", {Int(64)}},
          {"use_kv_cache", {Bool(true)}},
          {"use_sdpa_with_kv_cache", {Bool(true)}},
          {"enable_dynamic_shape", {Bool(true)}}};
}

TEST(LlmMetadata, ReadsEveryFieldExecuTorchWrites) {
  Read r = read(llama_metadata());
  ASSERT_EQ(r.error, Error::Ok) << r.message;
  const llm::LlmMetadata& m = r.metadata;
  EXPECT_EQ(m.max_seq_len, 128);
  EXPECT_EQ(m.max_context_len, 256);
  EXPECT_EQ(m.vocab_size, 32000);
  EXPECT_EQ(m.bos_id, 1);
  ASSERT_TRUE(m.eos_ids.present);
  ASSERT_EQ(m.eos_ids.count, 2u);
  EXPECT_EQ(m.eos_ids.ids[0], 2);
  EXPECT_EQ(m.eos_ids.ids[1], 31999);
  EXPECT_EQ(m.use_kv_cache, true);
  EXPECT_EQ(m.use_sdpa_with_kv_cache, false);
  EXPECT_EQ(m.enable_dynamic_shape, false);
  EXPECT_EQ(m.n_layers, 32);
  EXPECT_EQ(m.stop_ids(), &m.eos_ids);
  EXPECT_FALSE(m.empty());
}

TEST(LlmMetadata, ReadsEveryFieldOptimumExecuTorchWrites) {
  Read r = read(optimum_metadata());
  ASSERT_EQ(r.error, Error::Ok) << r.message;
  const llm::LlmMetadata& m = r.metadata;
  EXPECT_FALSE(m.eos_ids.present);
  ASSERT_EQ(m.stop_ids(), &m.eos_id);  // get_eos_id ends a generation when get_eos_ids is absent
  ASSERT_EQ(m.eos_id.count, 2u);
  EXPECT_EQ(m.eos_id.ids[1], 7);
  EXPECT_EQ(m.head_dim, 64);  // a whole float
  EXPECT_EQ(m.n_kv_heads, 8);
  EXPECT_EQ(m.n_layers, 16);
  EXPECT_EQ(m.max_batch_size, 1);
  EXPECT_EQ(m.max_seq_len, 64);
  EXPECT_EQ(m.use_sdpa_with_kv_cache, true);
  Read both = read({{"get_eos_ids", {Int(3)}}, {"get_eos_id", {Int(4)}}});
  ASSERT_EQ(both.error, Error::Ok) << both.message;
  EXPECT_EQ(both.metadata.stop_ids(), &both.metadata.eos_ids);
  EXPECT_EQ(read({{"get_bos_id", {Int(1)}}}).metadata.stop_ids(), nullptr);
}

TEST(LlmMetadata, TheExecutorRunsConstantMethodsAndReturnsTheirValues) {
  Read r = read(llama_metadata());
  ASSERT_TRUE(r.program);
  auto method = HostMethod::load(*r.program, "get_eos_ids");
  ASSERT_TRUE(method.ok()) << last_error_message();
  Method& m = (*method)->method();
  EXPECT_EQ(m.num_inputs(), 0u);
  EXPECT_EQ(m.num_instructions(), 0u);
  ASSERT_EQ(m.execute(), Error::Ok) << last_error_message();
  ASSERT_EQ(m.num_outputs(), 2u);
  EXPECT_EQ(m.output(0).tag, Tag::Int);
  EXPECT_EQ(m.output(0).i, 2);
  EXPECT_EQ(m.output(1).i, 31999);
  auto flag = HostMethod::load(*r.program, "use_kv_cache");
  ASSERT_TRUE(flag.ok()) << last_error_message();
  ASSERT_EQ((*flag)->method().execute(), Error::Ok);
  EXPECT_EQ((*flag)->method().output(0).tag, Tag::Bool);
  EXPECT_TRUE((*flag)->method().output(0).b);
}

TEST(LlmMetadata, MissingMethodsLeaveFieldsEmpty) {
  Read r = read({{"get_dtype", {Int(6)}}});
  ASSERT_EQ(r.error, Error::Ok) << r.message;
  EXPECT_TRUE(r.metadata.empty());
  Read some = read({{"get_max_seq_len", {Int(16)}}});
  ASSERT_EQ(some.error, Error::Ok) << some.message;
  EXPECT_EQ(some.metadata.max_seq_len, 16);
  EXPECT_FALSE(some.metadata.vocab_size.has_value());
  EXPECT_FALSE(some.metadata.eos_ids.present);
}

TEST(LlmMetadata, EosIdsMayBeOneIntOrAnEmptyList) {
  // Qualcomm's export writes config.eos_token_id, an int for most models.
  Read one = read({{"get_eos_ids", {Int(7)}}});
  ASSERT_EQ(one.error, Error::Ok) << one.message;
  ASSERT_EQ(one.metadata.eos_ids.count, 1u);
  EXPECT_EQ(one.metadata.eos_ids.ids[0], 7);
  Read empty = read({{"get_eos_ids", {}, true}});
  ASSERT_EQ(empty.error, Error::Ok) << empty.message;
  EXPECT_TRUE(empty.metadata.eos_ids.present);
  EXPECT_EQ(empty.metadata.eos_ids.count, 0u);
}

TEST(LlmMetadata, FlagsMayBeIntsZeroOrOne) {
  Read r = read({{"use_kv_cache", {Int(0)}}, {"enable_dynamic_shape", {Int(1)}}});
  ASSERT_EQ(r.error, Error::Ok) << r.message;
  EXPECT_EQ(r.metadata.use_kv_cache, false);
  EXPECT_EQ(r.metadata.enable_dynamic_shape, true);
}

void expect_refused(const std::vector<PlanSpec>& specs, const std::string& want) {
  Read r = read(specs);
  EXPECT_EQ(r.error, Error::InvalidProgram) << want;
  EXPECT_NE(r.message.find(want), std::string::npos) << r.message;
  EXPECT_EQ(r.message.find('\n'), std::string::npos) << r.message;
}

TEST(LlmMetadata, MalformedValuesAreRefusedNamingTheMethod) {
  expect_refused({{"get_max_seq_len", {Int(-5)}}},
                 "metadata method 'get_max_seq_len' returns -5; a length must be positive");
  expect_refused({{"get_vocab_size", {Int(0)}}},
                 "'get_vocab_size' returns 0; a length must be positive");
  expect_refused({{"get_vocab_size", {Double(32000.0)}}},
                 "'get_vocab_size' returns a double, not an int");
  expect_refused({{"get_max_context_len", {Bool(true)}}},
                 "'get_max_context_len' returns a bool, not an int");
  expect_refused({{"get_max_seq_len", {Int(1), Int(2)}, true}},
                 "'get_max_seq_len' returns 2 values; it returns one");
  expect_refused({{"get_bos_id", {Int(-1)}}},
                 "'get_bos_id' returns -1; an id must not be negative");
  expect_refused({{"get_eos_ids", {Int(2), Int(-3)}, true}},
                 "'get_eos_ids' value 1 is -3; an id must not be negative");
  expect_refused({{"get_eos_ids", {Int(2), String()}, true}},
                 "'get_eos_ids' value 1 is a string, not an int");
  expect_refused({{"use_kv_cache", {Int(2)}}},
                 "'use_kv_cache' returns 2; a flag is true, false, 0 or 1");
  expect_refused({{"enable_dynamic_shape", {Double(1.0)}}},
                 "'enable_dynamic_shape' returns a double, not a bool");
  expect_refused({{"get_max_seq_len", {Int(8)}, false, true}},
                 "'get_max_seq_len' takes 1 input(s); a metadata method takes none");
  expect_refused({{"get_max_seq_len", {Int(8)}, false, false, 64}},
                 "'get_max_seq_len' plans 64 bytes in arena 1");
  expect_refused({{"get_n_layers", {Int(0)}}}, "'get_n_layers' returns 0; a size must be positive");
  expect_refused({{"get_head_dim", {Double(62.5)}}},
                 "'get_head_dim' returns 62.5, not a whole number");
  expect_refused({{"get_head_dim", {Double(-64.0)}}},
                 "'get_head_dim' returns -64; a size must be positive");
  expect_refused({{"get_n_kv_heads", {Double(8.0)}}},
                 "'get_n_kv_heads' returns a double, not an int");
  expect_refused({{"get_max_batch_size", {Bool(true)}}},
                 "'get_max_batch_size' returns a bool, not an int");
  expect_refused({{"get_eos_id", {Int(-2)}}},
                 "'get_eos_id' value 0 is -2; an id must not be negative");
  std::vector<Val> many(llm::kMaxEosIds + 1, Int(1));
  expect_refused({{"get_eos_ids", many, true}}, "returns 17 values (at most 16 are read)");
}

TEST(LlmMetadata, IdsOutsideTheVocabularyAreRefused) {
  expect_refused({{"get_vocab_size", {Int(64)}}, {"get_bos_id", {Int(64)}}},
                 "metadata: get_bos_id is 64, outside the vocabulary (get_vocab_size 64)");
  expect_refused({{"get_vocab_size", {Int(64)}}, {"get_eos_ids", {Int(1), Int(99)}, true}},
                 "metadata: get_eos_ids value 1 is 99, outside the vocabulary");
  expect_refused({{"get_vocab_size", {Int(64)}}, {"get_eos_id", {Int(64)}}},
                 "metadata: get_eos_id value 0 is 64, outside the vocabulary");
}

TEST(LlmMetadata, KnowsExecuTorchsMethodNames) {
  EXPECT_TRUE(llm::is_llm_metadata_method("get_max_seq_len"));
  EXPECT_TRUE(llm::is_llm_metadata_method("get_eos_ids"));
  EXPECT_TRUE(llm::is_llm_metadata_method("use_kv_cache"));
  EXPECT_FALSE(llm::is_llm_metadata_method("forward"));
  EXPECT_TRUE(llm::is_llm_metadata_method("get_n_layers"));
  EXPECT_TRUE(llm::is_llm_metadata_method("get_eos_id"));
  EXPECT_FALSE(llm::is_llm_metadata_method("get_dtype"));
}

}  // namespace
}  // namespace pteron
