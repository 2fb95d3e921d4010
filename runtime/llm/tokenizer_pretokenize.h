// The pre-tokenizer of a byte-level tokenizer.json: splits text into the words BPE sees, as a
// sequence of steps over pieces of text:
//   Split      a regex (Oniguruma syntax, run with PCRE2) or literal, with its behavior
//              (Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous) and invert;
//   Digits     numeric characters on their own (individual_digits) or in runs;
//   ByteLevel  an optional leading space, GPT-2's regex split (use_regex), then every byte as
//              one printable character of GPT-2's bytes_to_unicode table.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/llm/tokenizer_regex.h"

namespace pteron::llm {

// A token's bytes as the ByteLevel decoder gives them: each character mapped back to its byte
// when all of them are in the table, else the token's own UTF-8 (added tokens such as
// "<|endoftext|>" that were never byte-mapped).
std::string byte_level_decode(std::string_view token);

class PreTokenizer {
 public:
  // `config`: the file's "pre_tokenizer" (nullptr for null). It must contain a ByteLevel step.
  Error load(const nlohmann::json* config, const std::string& name);
  // The words of `text` (not empty), byte-level mapped, in order.
  Error run(std::string_view text, std::vector<std::string>& words) const;

 private:
  enum class Kind { Split, Digits, ByteLevel };
  enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };
  struct Step {
    Kind kind = Kind::Split;
    std::shared_ptr<Regex> regex;  // null for a ByteLevel step without use_regex
    Behavior behavior = Behavior::Isolated;
    bool invert = false;
    bool add_prefix_space = false;
  };
  Error add(const nlohmann::json& config, const std::string& name, int depth);
  // Splits `piece` at `step`'s regex matches by its behavior, appending non-empty parts.
  Error split(const Step& step, std::string_view piece, std::vector<std::string>& out) const;

  std::vector<Step> steps_;
  std::shared_ptr<Regex> gpt2_;  // ByteLevel's own regex, compiled once
};

}  // namespace pteron::llm
