// UTF-8 for tokenizers: validating prompts, and turning the bytes of generated tokens into text
// as they come. One token may end in the middle of a character (byte-level BPE and SentencePiece
// byte pieces split multi-byte characters), so a stream holds an incomplete character back until
// the next token completes it, and replaces bytes that can never be UTF-8 with U+FFFD the way the
// tokenizer's own library does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace pteron::llm {

// How bytes that are not UTF-8 become U+FFFD.
enum class InvalidUtf8 {
  // One U+FFFD per maximal subpart of an ill-formed sequence (Unicode 3.9 D93b), as Rust's
  // String::from_utf8_lossy (Hugging Face tokenizers) and WHATWG decoders do: "\xE3\x81A" -> 1.
  PerMaximalSubpart,
  // One U+FFFD per byte that does not start a valid character, as SentencePiece's decoder
  // does: "\xE3\x81A" -> 2.
  PerByte,
};

// The byte offset of the first byte in `text` that is not part of a valid UTF-8 character, or
// text.size() when it is all valid.
size_t first_invalid_utf8(std::string_view text);

// Byte length of the character starting at text[0] for stepping over text known to be valid
// (1 at a byte that cannot start one, so callers always advance).
size_t utf8_char_length(std::string_view text);

// Appends code point `cp` (at most U+10FFFF) to `out` as UTF-8.
void append_utf8(std::string& out, char32_t cp);

// Bytes in, text out: push() returns the characters the bytes so far complete, finish() what is
// left (an incomplete character at the end becomes U+FFFD). The concatenation of everything
// returned is the lossy decoding of all the bytes, whatever the split.
class Utf8Stream {
 public:
  explicit Utf8Stream(InvalidUtf8 policy) : policy_(policy) {}
  std::string push(std::string_view bytes);
  std::string finish();

 private:
  // Decodes pending_ into `out`, keeping an incomplete last character when `final` is false.
  void drain(std::string& out, bool final);

  InvalidUtf8 policy_;
  std::string pending_;
};

// The lossy decoding of `bytes` in one go.
std::string lossy_utf8(std::string_view bytes, InvalidUtf8 policy);

}  // namespace pteron::llm
