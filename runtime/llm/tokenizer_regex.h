// The pre-tokenizer regexes of tokenizer.json files, matched with PCRE2. Hugging Face's
// tokenizers compiles them with Oniguruma (Ruby syntax, Unicode classes), so the few escapes
// whose Unicode meaning differs between the two are rewritten first; matches are enumerated the
// way the Rust onig crate's find_iter does, empty matches included.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/result.h"

struct pcre2_real_code_8;
struct pcre2_real_match_context_8;

namespace pteron::llm {

struct Match {
  size_t begin, end;
};

class Regex {
 public:
  // `pattern` in Oniguruma's syntax, or a literal string when `literal`. Errors name `what`.
  static Result<std::unique_ptr<Regex>> compile(std::string_view pattern, bool literal,
                                                const std::string& what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Non-overlapping matches left to right, as onig's find_iter: an empty match right after
  // the previous match is skipped by one character. Fails (one line) only when a pathological
  // pattern exceeds PCRE2's match limits.
  Error find_all(std::string_view text, std::vector<Match>& out) const;
  // Whether the pattern matches anywhere in `text`.
  Result<bool> matches(std::string_view text) const;

 private:
  Regex() = default;
  pcre2_real_code_8* code_ = nullptr;
  pcre2_real_match_context_8* context_ = nullptr;
  std::string what_;
};

// `pattern` with Oniguruma's Unicode \s \S (White_Space), \w \W (alphabetic, marks, decimal
// digits, connector punctuation) and Ruby's \h \H (hexadecimal digits) spelled out for PCRE2;
// the rest of the syntax the two share. Fails on \W or \H inside a character class, which PCRE2
// cannot say.
Result<std::string> onig_to_pcre2(std::string_view pattern, const std::string& what);

}  // namespace pteron::llm
