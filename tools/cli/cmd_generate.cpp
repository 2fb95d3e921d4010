// pteron generate PROGRAM.pte (--prompt-ids 1,2,3 | --tokenizer FILE --prompt TEXT) [-n N]
// [--temperature T --top-k K --top-p P --seed S] [--eos-ids a,b] [--no-bos] [--threads N]
// [--warmup N] [--json]
//
// Token ids in, token ids out (runtime/llm/generator.h): the ids stream to stdout as they come,
// then one line of figures; --json prints one object at the end instead. With --tokenizer
// (runtime/llm/tokenizer.h) the prompt may be text, and the generated text streams instead of
// the ids (a character split over tokens shows once it is complete); --json adds "text".
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "runtime/llm/generator.h"
#include "runtime/llm/tokenizer.h"
#include "runtime/platform/cpu_isa.h"
#include "runtime/threads/threadpool.h"
#include "tools/cli/commands.h"
#include "tools/cli/program_tools.h"
#include "tools/cli/runtime_options.h"

namespace pteron::cli {
namespace {

struct GenerateOptions {
  std::string program;
  std::string method = "forward";
  std::string prompt_ids;
  bool prompt_ids_given = false;
  std::string prompt;
  bool prompt_given = false;
  std::string tokenizer;
  bool no_bos = false;
  std::string eos_ids;
  int64_t max_new_tokens = 0;  // 0: until EOS or the cache is full
  bool max_new_tokens_given = false;
  llm::SamplerConfig sampler;
  bool json = false;
  int warmup = 0;  // untimed generations of a few tokens first, as a serving process has done
  RuntimeOptions runtime;
};

// "1,2,3" -> {1, 2, 3} (spaces around ids allowed); `what` names the option in the error.
std::vector<int64_t> parse_ids(const std::string& text, const std::string& what) {
  if (text.find_first_not_of(" ") == std::string::npos) throw UserError(what + " is empty");
  std::vector<int64_t> ids;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    std::string item = text.substr(at, comma == std::string::npos ? comma : comma - at);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size()) {
      throw UserError(what + ": '" + item + "' is not a token id (give comma-separated integers)");
    }
    ids.push_back(value);
    if (comma == std::string::npos) return ids;
    at = comma + 1;
  }
}

void generate(const GenerateOptions& o) {
  if (o.prompt_given == o.prompt_ids_given) {
    throw UserError(o.prompt_given ? "give --prompt or --prompt-ids, not both"
                                   : "give the prompt: --prompt-ids 1,2,3, or --tokenizer FILE "
                                     "--prompt TEXT");
  }
  if (o.prompt_given && o.tokenizer.empty()) {
    throw UserError(
        "--prompt needs --tokenizer FILE (tokenizer.json, a SentencePiece .model or a tiktoken "
        "file)");
  }
  std::unique_ptr<llm::Tokenizer> tokenizer;
  if (!o.tokenizer.empty()) {
    auto loaded = llm::load_tokenizer(o.tokenizer);
    if (!loaded.ok()) throw UserError(last_error_message());
    tokenizer = std::move(loaded.get());
  }
  std::vector<int64_t> prompt;
  if (o.prompt_given) {
    // Without the BOS: which one (the program's or the tokenizer's) is known once it is open.
    if (llm::encode_prompt(*tokenizer, o.prompt, /*add_bos=*/false, prompt) != Error::Ok) {
      throw UserError(std::string("--prompt: ") + last_error_message());
    }
  } else {
    prompt = parse_ids(o.prompt_ids, "--prompt-ids");
  }
  llm::GenerationConfig config;
  config.max_new_tokens = o.max_new_tokens;
  config.sampler = o.sampler;
  if (!o.eos_ids.empty()) config.eos_ids = parse_ids(o.eos_ids, "--eos-ids");
  if (o.max_new_tokens_given && o.max_new_tokens < 1) {
    throw UserError("-n " + std::to_string(o.max_new_tokens) +
                    " is not a token count >= 1 (leave it out to generate until EOS or the cache "
                    "is full)");
  }
  if (llm::check_sampler_config(o.sampler) != Error::Ok) throw UserError(last_error_message());

  apply_runtime_options(o.runtime);
  auto program = open_program(o.program);
  auto metadata = llm::read_llm_metadata(program->program());
  if (!metadata.ok()) throw_runtime_error(o.program, metadata.error());
  auto host = load_method(*program, o.program, o.method);
  auto created = llm::Generator::create(host->method(), metadata.get());
  if (!created.ok()) throw_runtime_error(o.program, created.error());
  llm::Generator& generator = created.get();
  // The BOS a text prompt starts with: the program's get_bos_id, else the tokenizer's.
  if (o.prompt_given && !o.no_bos) {
    const int64_t bos =
        generator.program_bos_id() >= 0 ? generator.program_bos_id() : tokenizer->bos_id();
    if (bos >= 0) prompt.insert(prompt.begin(), bos);
  }
  if (o.prompt_given && prompt.empty())
    throw UserError("--prompt is empty (it encodes to no tokens)");
  // Stop ids, as ExecuTorch's runner picks them: --eos-ids, else the program's get_eos_ids (or
  // get_eos_id), else the tokenizer's end-of-text tokens.
  if (o.eos_ids.empty()) {
    if (generator.has_program_eos_ids()) {
      config.eos_ids = generator.program_eos_ids();
    } else if (tokenizer) {
      config.eos_ids = tokenizer->eos_ids();
    }
  }
  if (tokenizer &&
      llm::check_vocab_fits(*tokenizer, generator.vocab_size(), o.tokenizer) != Error::Ok) {
    throw UserError(last_error_message());
  }

  if (o.warmup < 0) throw UserError("--warmup " + std::to_string(o.warmup) + " is negative");
  // Warm-up: the same prompt and a few new tokens (page faults, thread start-up, first-call
  // set-up happen here); start() resets the cache and the figures, so the timed run is clean.
  llm::GenerationConfig warm = config;
  warm.max_new_tokens = std::min<int64_t>(
      4, config.max_new_tokens > 0 ? config.max_new_tokens : generator.max_seq_len());
  for (int i = 0; i < o.warmup; ++i) {
    const Error w =
        generator.generate(Span<const int64_t>(prompt.data(), prompt.size()), warm, [](int64_t) {});
    if (w != Error::Ok) throw_runtime_error(o.program, w);
  }

  std::vector<int64_t> tokens;
  std::string text;
  std::optional<llm::TextStream> stream;
  if (tokenizer) stream.emplace(*tokenizer);
  const auto show = [&](const std::string& piece) {
    text += piece;
    if (o.json || piece.empty()) return;
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
  };
  const Error e = generator.generate(
      Span<const int64_t>(prompt.data(), prompt.size()), config, [&](int64_t token) {
        tokens.push_back(token);
        if (stream) return show(stream->push(token));
        if (o.json) return;
        std::printf("%s%lld", tokens.size() == 1 ? "" : " ", static_cast<long long>(token));
        std::fflush(stdout);  // streamed: each id shows as soon as it is sampled
      });
  if (stream) show(stream->finish());
  if (!o.json && (stream ? !text.empty() : !tokens.empty())) std::printf("\n");
  if (e != Error::Ok) throw_runtime_error(o.program, e);
  const llm::GenerationFigures f = generator.figures();

  if (o.json) {
    nlohmann::json j;
    j["program"] = o.program;
    j["tokens"] = tokens;
    if (tokenizer) j["text"] = text;
    if (o.prompt_given) j["prompt_ids"] = prompt;
    j["prompt_tokens"] = f.prompt_tokens;
    j["generated_tokens"] = f.generated_tokens;
    j["stop_reason"] = llm::stop_reason_name(f.stop);
    j["max_seq_len"] = generator.max_seq_len();
    j["max_tokens_per_call"] = generator.max_tokens_per_call();
    j["prefill_calls"] = f.prefill_calls;
    j["prefill_ms"] = f.prefill_ms;
    j["time_to_first_token_ms"] = f.time_to_first_token_ms;
    j["decode_ms"] = f.decode_ms;
    j["prefill_cpu_ms"] = f.prefill_cpu_ms;
    j["decode_cpu_ms"] = f.decode_cpu_ms;
    j["prefill_tokens_per_s"] = f.prefill_tokens_per_s;
    j["decode_tokens_per_s"] = f.decode_tokens_per_s;
    j["peak_rss_bytes"] = f.peak_rss_bytes;
    j["threads"] = num_threads();
    j["isa"] = cpu_isa_name();  // benchmarks record the kernels' ISA next to the figures
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf(
      "%lld prompt + %lld new tokens (stop: %s, cache %lld) | prefill %.1f tok/s, decode %.1f "
      "tok/s, time to first token %.2f ms, peak RSS %.1f MiB\n",
      static_cast<long long>(f.prompt_tokens), static_cast<long long>(f.generated_tokens),
      llm::stop_reason_name(f.stop), static_cast<long long>(generator.max_seq_len()),
      f.prefill_tokens_per_s, f.decode_tokens_per_s, f.time_to_first_token_ms,
      static_cast<double>(f.peak_rss_bytes) / (1 << 20));
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate", "Generate token ids with a stateful decoder (KV cache) program");
  cmd->add_option("program", opts->program, "program file (.pte)")->required();
  cmd->add_option_function<std::string>(
      "--prompt-ids",
      [opts](const std::string& ids) {
        opts->prompt_ids = ids;
        opts->prompt_ids_given = true;
      },
      "prompt token ids, comma-separated");
  cmd->add_option_function<std::string>(
      "--prompt",
      [opts](const std::string& text) {
        opts->prompt = text;
        opts->prompt_given = true;
      },
      "prompt text (needs --tokenizer)");
  cmd->add_option("--tokenizer", opts->tokenizer,
                  "tokenizer file: Hugging Face tokenizer.json (byte-level BPE) or SentencePiece "
                  ".model; the generated text streams instead of ids");
  cmd->add_flag("--no-bos", opts->no_bos,
                "do not put a BOS token (the program's get_bos_id, else the tokenizer's) before "
                "the --prompt text");
  cmd->add_option_function<int64_t>(
      "-n,--max-new-tokens",
      [opts](int64_t n) {
        opts->max_new_tokens = n;
        opts->max_new_tokens_given = true;
      },
      "new tokens to generate (default: until an EOS id or the cache is full)");
  cmd->add_option("--temperature", opts->sampler.temperature, "sampling temperature (0: greedy)")
      ->capture_default_str();
  cmd->add_option("--top-k", opts->sampler.top_k, "sample among the k most likely (0: all)")
      ->capture_default_str();
  cmd->add_option("--top-p", opts->sampler.top_p,
                  "sample among the most likely tokens reaching this probability (1: all)")
      ->capture_default_str();
  cmd->add_option("--seed", opts->sampler.seed, "seed of the sampler's random numbers")
      ->capture_default_str();
  cmd->add_option("--eos-ids", opts->eos_ids,
                  "token ids that end generation, comma-separated (default: the program's "
                  "get_eos_ids or get_eos_id, else the tokenizer's end-of-text tokens)");
  cmd->add_option("--method", opts->method, "decoder method")->capture_default_str();
  add_runtime_options(cmd, opts->runtime);
  cmd->add_option("--warmup", opts->warmup,
                  "untimed generations of up to 4 tokens before the measured one")
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "print one JSON object at the end instead of streaming");
  cmd->callback([opts] { generate(*opts); });
}

}  // namespace pteron::cli
