// Added tokens of a tokenizer.json (special tokens such as <|begin_of_text|> and tokens added
// after training): found in the text before anything else, leftmost-longest as Hugging Face's
// Aho-Corasick matcher, with each token's lstrip / rstrip (take the whitespace beside it) and
// single_word (only between non-word characters) rules.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/llm/tokenizer_regex.h"

namespace pteron::llm {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
  bool normalized = true;  // matched in the normalized text rather than the raw text
  bool lstrip = false, rstrip = false, single_word = false;
};

// A span of the text: an added token (id >= 0) or text for the pre-tokenizer (id -1).
struct Segment {
  size_t begin = 0, end = 0;
  int32_t id = -1;
};

class AddedMatcher {
 public:
  // The tokens of `tokens` whose `normalized` is `normalized` (empty ones never match).
  Error build(const std::vector<AddedToken>& tokens, bool normalized, const std::string& name);
  // `text` as segments covering it left to right, as find_matches splits it.
  Error split(std::string_view text, std::vector<Segment>& out) const;

 private:
  std::vector<AddedToken> tokens_;
  std::vector<int32_t> by_first_byte_[256];  // indices into tokens_, longest first
  // \w at the end / start and the whitespace run at the end / start (Rust regex's Unicode \w
  // and \s), compiled only when a token needs them.
  std::unique_ptr<Regex> word_at_end_, word_at_start_, space_at_end_, space_at_start_;
};

}  // namespace pteron::llm
