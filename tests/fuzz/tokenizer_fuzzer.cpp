// libFuzzer target: any bytes as a tokenizer file (runtime/llm/tokenizer.h: tokenizer.json,
// SentencePiece .model, tiktoken) must load or be refused without crashing or tripping a sanitizer,
// and a tokenizer that loads must encode, decode and stream text the same way.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/llm/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pteron;
  auto loaded = llm::tokenizer_from_bytes(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");
  if (!loaded.ok()) return 0;
  const llm::Tokenizer& tokenizer = *loaded.get();
  // Texts that reach the pre-tokenizer's classes, added tokens and byte fallback; invalid
  // UTF-8 must be refused, not tokenized.
  const char* texts[] = {"",
                         "Hello world, it's 2024!",
                         "  \t\n\r\n  ",
                         "Grüße 日本語 🙂👩‍💻",
                         "<|endoftext|><s></s>[SEP] <mask> café",
                         "<|begin_of_text|>x<|eot_id|><|reserved_special_token_9|>'S 'll",
                         "\xE3\x81",
                         "\xFF\xFE"};
  std::vector<int64_t> ids, all;
  for (const char* text : texts) {
    if (tokenizer.encode(text, ids) != Error::Ok) continue;
    for (int64_t id : ids) {
      if (id < 0 || id >= tokenizer.vocab_size()) __builtin_trap();  // ids stay in the vocabulary
    }
    all.insert(all.end(), ids.begin(), ids.end());
  }
  // Every id's bytes (a bounded number), streamed and decoded whole.
  const int64_t n = tokenizer.vocab_size() < 4096 ? tokenizer.vocab_size() : 4096;
  for (int64_t id = -1; id <= n; ++id) all.push_back(id);
  llm::TextStream stream(tokenizer);
  std::string text;
  for (int64_t id : all) text += stream.push(id);
  text += stream.finish();
  if (llm::first_invalid_utf8(text) != text.size()) __builtin_trap();  // text is always UTF-8
  const std::string whole =
      tokenizer.decode_sequence(Span<const int64_t>(all.data(), all.size()), true);
  if (llm::first_invalid_utf8(whole) != whole.size()) __builtin_trap();
  return 0;
}
