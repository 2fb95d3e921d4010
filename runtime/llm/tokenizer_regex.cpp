#include "runtime/llm/tokenizer_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "runtime/llm/utf8.h"

namespace pteron::llm {
namespace {

// Backtracking bounds: a regex from a file must not hang or exhaust memory on any prompt.
constexpr uint32_t kMatchLimit = 10'000'000;
constexpr uint32_t kDepthLimit = 100'000;
constexpr uint32_t kHeapLimitKiB = 64 * 1024;

// Oniguruma's Unicode \w, measured against tokenizers over every Unicode 14 code point:
// Alphabetic, marks, decimal digits, connector punctuation, and six Latin-1 No characters
// (superscripts 1-3 and the fractions). PCRE2's own \w is letters, numbers and _.
const char* kWord = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{B2}\\x{B3}\\x{B9}\\x{BC}-\\x{BE}";
const char* kHex = "0-9a-fA-F";

}  // namespace

Result<std::string> onig_to_pcre2(std::string_view p, const std::string& what) {
  std::string out;
  int depth = 0;  // inside [...] (Oniguruma nests sets; PCRE2 refuses those itself)
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[++i];
      const bool in_class = depth > 0;
      if (e == 's' || e == 'S') {
        // Oniguruma's \s is White_Space; PCRE2's also takes U+180E. Either form fits in a set.
        out += e == 's' ? "\\p{White_Space}" : "\\P{White_Space}";
      } else if (e == 'w' || e == 'h') {
        const char* set = e == 'w' ? kWord : kHex;
        out += in_class ? std::string(set) : "[" + std::string(set) + "]";
      } else if (e == 'W' || e == 'H') {
        PTERON_CHECK(!in_class, Error::NotSupported,
                     "%s: \\%c inside a character class is not supported", what.c_str(), e);
        out += "[^" + std::string(e == 'W' ? kWord : kHex) + "]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[') {
      if (depth > 0 && i + 1 < p.size() && p[i + 1] == ':') {  // a POSIX class [:alpha:]
        const size_t close = p.find(":]", i + 2);
        if (close != std::string_view::npos) {
          out.append(p.substr(i, close + 2 - i));
          i = close + 1;
          continue;
        }
      }
      ++depth;
      out += c;
      // A ']' first in the set (after an optional '^') is a literal in both syntaxes.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (c == ']' && depth > 0) --depth;
    out += c;
  }
  return out;
}

Result<std::unique_ptr<Regex>> Regex::compile(std::string_view pattern, bool literal,
                                              const std::string& what) {
  std::string translated;
  if (literal) {
    translated = std::string(pattern);
  } else {
    PTERON_ASSIGN_OR_RETURN(translated, onig_to_pcre2(pattern, what));
  }
  // UTF + UCP: \p{..}, \s, \d and case folding by Unicode; MULTILINE: Ruby's ^ and $ are line
  // anchors. NEVER_BACKSLASH_C: \C could match inside a character.
  uint32_t options = PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE | PCRE2_NEVER_BACKSLASH_C;
  if (literal) options = PCRE2_UTF | PCRE2_LITERAL;
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()),
                                       translated.size(), options, &code, &offset, nullptr);
  if (compiled == nullptr) {
    PCRE2_UCHAR message[160];
    pcre2_get_error_message(code, message, sizeof(message));
    return fail(Error::InvalidArgument, "%s does not compile: %s at offset %zu", what.c_str(),
                reinterpret_cast<const char*>(message), static_cast<size_t>(offset));
  }
  std::unique_ptr<Regex> re(new Regex());
  re->code_ = compiled;
  re->what_ = what;
  re->context_ = pcre2_match_context_create(nullptr);
  PTERON_CHECK(re->context_ != nullptr, Error::OutOfMemory, "%s: no memory", what.c_str());
  pcre2_set_match_limit(re->context_, kMatchLimit);
  pcre2_set_depth_limit(re->context_, kDepthLimit);
  pcre2_set_heap_limit(re->context_, kHeapLimitKiB);
  return re;
}

Regex::~Regex() {
  pcre2_match_context_free(context_);
  pcre2_code_free(code_);
}

Error Regex::find_all(std::string_view text, std::vector<Match>& out) const {
  out.clear();
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_, nullptr);
  PTERON_CHECK(data != nullptr, Error::OutOfMemory, "%s: no memory", what_.c_str());
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t last_end = 0;
  bool matched = false;
  size_t last_match_end = 0;
  Error error = Error::Ok;
  // The first call checks the text is UTF-8; later ones must not: the check is O(n) per call,
  // O(n^2) over a long text.
  uint32_t options = 0;
  while (last_end <= text.size()) {
    const int rc = pcre2_match(code_, subject, text.size(), last_end, options, data, context_);
    options = PCRE2_NO_UTF_CHECK;
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[160];
      pcre2_get_error_message(rc, message, sizeof(message));
      error = fail(Error::InvalidArgument, "%s: matching failed: %s", what_.c_str(),
                   reinterpret_cast<const char*>(message));
      break;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const size_t begin = ovector[0], end = ovector[1];
    if (end < begin) {  // \K in a lookahead can end a match before its start
      error =
          fail(Error::InvalidArgument, "%s: a match ends before it starts (\\K)", what_.c_str());
      break;
    }
    if (begin == end && matched && last_match_end == end) {
      // onig's find_iter: no empty match right after a match; search again one char on.
      last_end += last_end < text.size() ? utf8_char_length(text.substr(last_end)) : 1;
      continue;
    }
    last_end = end;
    last_match_end = end;
    matched = true;
    out.push_back({begin, end});
  }
  pcre2_match_data_free(data);
  return error;
}

Result<bool> Regex::matches(std::string_view text) const {
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_, nullptr);
  PTERON_CHECK(data != nullptr, Error::OutOfMemory, "%s: no memory", what_.c_str());
  const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0,
                             data, context_);
  pcre2_match_data_free(data);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  PTERON_CHECK(rc >= 0, Error::InvalidArgument, "%s: matching failed (PCRE2 error %d)",
               what_.c_str(), rc);
  return true;
}

}  // namespace pteron::llm
