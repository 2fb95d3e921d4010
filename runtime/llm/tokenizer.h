// Text to token ids and back for generation. One small interface over the tokenizer file
// formats models ship with, each in its own tokenizer_<format>.cpp:
//   - a Hugging Face tokenizer.json with a byte-level BPE model (GPT-2, Llama 3, Qwen):
//     tokenizer_hf.cpp, ours (there is no maintained C++ reader of tokenizer.json);
//   - a SentencePiece .model (Llama 2, Gemma, T5): tokenizer_sentencepiece.cpp, over Debian's
//     libsentencepiece;
//   - a tiktoken file (Llama 3's tokenizer.model, base64 tokens and ranks): tokenizer_tiktoken.cpp,
//     ours over PCRE2 (tiktoken itself is Rust and Python only).
// load_tokenizer() tells them apart by their bytes, not the file name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/llm/utf8.h"

namespace pteron::llm {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // "Hugging Face tokenizer.json (byte-level BPE)" or "SentencePiece (BPE)" and the like.
  virtual std::string format() const = 0;
  // One past the largest token id; a program's logits must be at least this wide.
  virtual int64_t vocab_size() const = 0;

  // The ids of `text` (UTF-8; anything else is refused with one line), special tokens written
  // in the text included, without a BOS: the caller adds bos_id() where the model wants one.
  // The same ids as the reference library's encode(text, add_special_tokens=False).
  virtual Error encode(std::string_view text, std::vector<int64_t>& ids) const = 0;

  // The bytes token `id` stands for in running text ("" for control tokens and ids outside
  // the vocabulary). Not always UTF-8 on its own: a character may span several tokens.
  virtual std::string decode(int64_t id) const = 0;
  // Special (Hugging Face) or control (SentencePiece) tokens: BOS, EOS, chat markers. Left
  // out of generated text.
  virtual bool is_special(int64_t id) const = 0;
  // How the reference library turns bytes that are not UTF-8 into text.
  virtual InvalidUtf8 invalid_utf8() const = 0;

  // The text of a whole sequence as the reference library's decode(ids) gives it (special
  // tokens left out when `skip_special`; SentencePiece leaves its control tokens out always
  // and drops the space it put before the first word).
  virtual std::string decode_sequence(Span<const int64_t> ids, bool skip_special) const;

  // The token the model expects first (-1: the file defines none).
  int64_t bos_id() const { return bos_id_; }
  // Tokens that end a generation, as far as the file says (may be empty).
  const std::vector<int64_t>& eos_ids() const { return eos_ids_; }

 protected:
  int64_t bos_id_ = -1;
  std::vector<int64_t> eos_ids_;
};

// Reads the tokenizer in `path`. One line naming the file and what is wrong when it is
// missing, empty, truncated, corrupt, of an unknown or unsupported kind.
Result<std::unique_ptr<Tokenizer>> load_tokenizer(const std::string& path);
// The same from the file's bytes; `name` is what the messages call it.
Result<std::unique_ptr<Tokenizer>> tokenizer_from_bytes(std::string_view data,
                                                        const std::string& name);

// The prompt's ids: bos_id() first when `add_bos` and the tokenizer has one (as the reference
// libraries' encode(text, add_special_tokens=True) does for Llama-style files), then encode().
Error encode_prompt(const Tokenizer& tokenizer, std::string_view text, bool add_bos,
                    std::vector<int64_t>& ids);

// Refuses (one line naming `name`) a tokenizer with more tokens than the program's logits
// have: its ids would fall outside the model's vocabulary.
Error check_vocab_fits(const Tokenizer& tokenizer, int64_t logits, const std::string& name);

// The text of generated tokens as they come: push() each new id and print what it returns
// (possibly "", while a character is incomplete), then finish(). Special tokens add nothing.
// The whole is decode_sequence(ids, skip_special = true) of a continuation: no space dropped.
class TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer)
      : tokenizer_(&tokenizer), utf8_(tokenizer.invalid_utf8()) {}
  std::string push(int64_t id);
  std::string finish() { return utf8_.finish(); }

 private:
  const Tokenizer* tokenizer_;
  Utf8Stream utf8_;
};

}  // namespace pteron::llm
