// Generation with Llama programs ExecuTorch's own export_llama wrote
// (tests/fixtures/executorch/et_llama*.pte, tools/fixtures/make_executorch_llm_fixture.py):
// forward(tokens [1, T], input_pos [1]) and metadata methods. read_llm_metadata returns what
// the export wrote, and Generator, with no settings but the metadata, gives the token ids
// ExecuTorch's runtime gave greedily (<name>_greedy.npz: prompt, generated). The per-step
// logits are compared in tests/interop/test_executorch_llm.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "runtime/host/host_method.h"
#include "runtime/llm/generator.h"
#include "runtime/llm/metadata.h"
#include "tools/run/npz_io.h"

namespace pteron {
namespace {

const std::filesystem::path kFixtureDir = PTERON_EXECUTORCH_FIXTURES;

std::vector<int64_t> int64_array(const std::vector<npz::Array>& arrays, const std::string& name) {
  for (const npz::Array& a : arrays) {
    if (a.name != name || a.dtype != ScalarType::Long) continue;
    const auto* p = reinterpret_cast<const int64_t*>(a.data.data());
    return std::vector<int64_t>(p, p + a.data.size() / 8);
  }
  return {};
}

class ExecuTorchLlm : public ::testing::TestWithParam<std::string> {};

TEST_P(ExecuTorchLlm, GeneratesExecuTorchsTokensFromTheMetadataAlone) {
  const std::string name = GetParam();
  std::string error;
  const auto arrays = npz::read((kFixtureDir / (name + "_greedy.npz")).string(), &error);
  ASSERT_FALSE(arrays.empty()) << error;
  const std::vector<int64_t> prompt = int64_array(arrays, "prompt");
  const std::vector<int64_t> want = int64_array(arrays, "generated");
  ASSERT_FALSE(prompt.empty());
  ASSERT_FALSE(want.empty());

  auto program = HostProgram::open((kFixtureDir / (name + ".pte")).string().c_str());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto metadata = llm::read_llm_metadata((*program)->program());
  ASSERT_TRUE(metadata.ok()) << last_error_message();
  EXPECT_EQ(metadata->max_seq_len, 32);
  EXPECT_EQ(metadata->max_context_len, 32);
  EXPECT_EQ(metadata->vocab_size, 128);
  EXPECT_EQ(metadata->bos_id, 1);
  ASSERT_EQ(metadata->eos_ids.count, 1u);
  EXPECT_EQ(metadata->eos_ids.ids[0], 2);
  EXPECT_EQ(metadata->use_kv_cache, true);
  EXPECT_EQ(metadata->use_sdpa_with_kv_cache, name == "et_llama_sdpa");
  EXPECT_EQ(metadata->enable_dynamic_shape, true);

  auto host = HostMethod::load(**program, "forward");
  ASSERT_TRUE(host.ok()) << last_error_message();
  auto generator = llm::Generator::create((*host)->method(), *metadata);
  ASSERT_TRUE(generator.ok()) << last_error_message();
  EXPECT_EQ(generator->max_seq_len(), 32);
  EXPECT_EQ(generator->max_tokens_per_call(), 31);  // tokens [1, T], T in [1, 31]
  llm::GenerationConfig config;
  config.eos_ids = generator->program_eos_ids();
  for (int attempt = 0; attempt < 2; ++attempt) {  // a second generation starts over
    std::vector<int64_t> got;
    ASSERT_EQ(generator->generate(Span<const int64_t>(prompt.data(), prompt.size()), config,
                                  [&](int64_t t) { got.push_back(t); }),
              Error::Ok)
        << last_error_message();
    EXPECT_EQ(got, want) << "attempt " << attempt;
    EXPECT_EQ(generator->figures().stop, llm::StopReason::CacheFull);
    EXPECT_EQ(generator->figures().prefill_calls, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ExecuTorchLlm, ::testing::Values("et_llama", "et_llama_sdpa"),
                         [](const auto& info) { return info.param; });

TEST(ExecuTorchLlm, AProgramOfNeitherFormIsRefusedWithOneLine) {
  auto program = HostProgram::open((kFixtureDir / "linear.pte").string().c_str());
  ASSERT_TRUE(program.ok()) << last_error_message();
  auto host = HostMethod::load(**program, "forward");
  ASSERT_TRUE(host.ok()) << last_error_message();
  clear_error_message();
  auto generator = llm::Generator::create((*host)->method());
  ASSERT_FALSE(generator.ok());
  const std::string message = last_error_message();
  EXPECT_NE(message.find("cache_position int64 [T] (Hugging Face)"), std::string::npos) << message;
  EXPECT_NE(message.find("input_pos int64 [1] (ExecuTorch)"), std::string::npos) << message;
  EXPECT_NE(message.find("it takes float32 [2, 16]"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace pteron
