#include "runtime/llm/tokenizer_added.h"

#include <algorithm>

namespace pteron::llm {
namespace {

// Rust regex's Unicode \w and \s.
constexpr const char* kWord = "[\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}]";
constexpr const char* kSpace = "\\p{White_Space}*";

}  // namespace

Error AddedMatcher::build(const std::vector<AddedToken>& tokens, bool normalized,
                          const std::string& name) {
  bool rules = false;
  for (const AddedToken& t : tokens) {
    if (t.normalized != normalized || t.content.empty()) continue;
    tokens_.push_back(t);
    rules = rules || t.lstrip || t.rstrip || t.single_word;
  }
  for (size_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<uint8_t>(tokens_[i].content[0])].push_back(static_cast<int32_t>(i));
  }
  for (auto& bucket : by_first_byte_) {
    std::stable_sort(bucket.begin(), bucket.end(), [&](int32_t a, int32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
  if (rules) {
    const std::string what = name + ": added-token rules";
    const std::string word = kWord, space = kSpace;
    PTERON_ASSIGN_OR_RETURN(word_at_end_, Regex::compile(word + "\\z", false, what));
    PTERON_ASSIGN_OR_RETURN(word_at_start_, Regex::compile("\\A" + word, false, what));
    PTERON_ASSIGN_OR_RETURN(space_at_end_, Regex::compile(space + "\\z", false, what));
    PTERON_ASSIGN_OR_RETURN(space_at_start_, Regex::compile("\\A" + space, false, what));
  }
  return Error::Ok;
}

Error AddedMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  out.clear();
  if (text.empty()) {
    out.push_back({0, 0, -1});
    return Error::Ok;
  }
  size_t start_offset = 0;
  std::vector<Match> found;
  size_t at = 0;
  while (at < text.size()) {
    // The leftmost position where a token starts, and the longest token there.
    int32_t hit = -1;
    size_t begin = at;
    for (; begin < text.size() && hit < 0; ++begin) {
      for (int32_t i : by_first_byte_[static_cast<uint8_t>(text[begin])]) {
        if (text.substr(begin, tokens_[i].content.size()) == tokens_[i].content) {
          hit = i;
          break;
        }
      }
      if (hit >= 0) break;
    }
    if (hit < 0) break;
    const AddedToken& token = tokens_[hit];
    size_t start = begin, stop = begin + token.content.size();
    at = stop;  // matches never overlap, kept or not
    if (token.single_word) {
      bool word_before = false, word_after = false;
      if (start > 0) {
        PTERON_ASSIGN_OR_RETURN(word_before, word_at_end_->matches(text.substr(0, start)));
      }
      if (stop < text.size()) {
        PTERON_ASSIGN_OR_RETURN(word_after, word_at_start_->matches(text.substr(stop)));
      }
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      PTERON_TRY(space_at_end_->find_all(text.substr(0, start), found));
      const size_t run = found.empty() ? start : found[0].begin;
      start = std::max(run, start_offset);
    }
    if (token.rstrip) {
      PTERON_TRY(space_at_start_->find_all(text.substr(stop), found));
      if (!found.empty()) stop += found[0].end;
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, token.id});
    start_offset = stop;
  }
  if (start_offset != text.size()) out.push_back({start_offset, text.size(), -1});
  return Error::Ok;
}

}  // namespace pteron::llm
