#include "runtime/llm/tokenizer_pretokenize.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <utility>

#include "runtime/llm/utf8.h"

namespace pteron::llm {
namespace {

using nlohmann::json;

// ByteLevel's split with use_regex (GPT-2's pattern, in tokenizers' byte_level.rs).
constexpr const char* kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

// GPT-2's bytes_to_unicode: printable Latin-1 bytes stand for themselves, the other 68 bytes
// for U+0100 onwards in byte order, so every byte is one visible character.
struct ByteTable {
  std::string chars[256];     // byte -> its character, UTF-8
  int16_t bytes[0x180] = {};  // code point -> byte + 1, 0 where none
  ByteTable() {
    int next = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      const char32_t cp = printable ? static_cast<char32_t>(b) : 0x100 + next++;
      append_utf8(chars[b], cp);
      bytes[cp] = static_cast<int16_t>(b + 1);
    }
  }
};

const ByteTable& table() {
  static const ByteTable t;
  return t;
}

const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

std::string type_of(const json& j) {
  const json* t = member(j, "type");
  return t != nullptr && t->is_string() ? t->get<std::string>() : std::string();
}

bool flag(const json& j, const char* key, bool fallback) {
  const json* v = member(j, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

}  // namespace

std::string byte_level_decode(std::string_view token) {
  std::string out;
  for (size_t at = 0; at < token.size();) {
    const size_t length = utf8_char_length(token.substr(at));
    // Decode the character (valid UTF-8: the file's JSON strings are).
    char32_t cp = static_cast<uint8_t>(token[at]);
    if (length > 1) {
      cp &= 0x7F >> length;
      for (size_t k = 1; k < length; ++k)
        cp = (cp << 6) | (static_cast<uint8_t>(token[at + k]) & 0x3F);
    }
    if (cp >= 0x180 || table().bytes[cp] == 0) return std::string(token);
    out += static_cast<char>(table().bytes[cp] - 1);
    at += length;
  }
  return out;
}

Error PreTokenizer::add(const json& config, const std::string& name, int depth) {
  const std::string type = type_of(config);
  const char* n = name.c_str();
  if (type == "Sequence") {
    const json* list = member(config, "pretokenizers");
    PTERON_CHECK(list != nullptr && list->is_array() && depth < 8, Error::InvalidArgument,
                 "%s: pre_tokenizer Sequence has no list of pretokenizers", n);
    for (const json& step : *list) PTERON_TRY(add(step, name, depth + 1));
    return Error::Ok;
  }
  Step step;
  if (type == "ByteLevel") {
    step.kind = Kind::ByteLevel;
    step.add_prefix_space = flag(config, "add_prefix_space", true);
    if (flag(config, "use_regex", true)) {
      if (gpt2_ == nullptr) {
        PTERON_ASSIGN_OR_RETURN(auto re, Regex::compile(kGpt2, false, name + ": ByteLevel regex"));
        gpt2_ = std::move(re);
      }
      step.regex = gpt2_;
    }
  } else if (type == "Split") {
    const json* pattern = member(config, "pattern");
    const json* regex = pattern != nullptr ? member(*pattern, "Regex") : nullptr;
    const json* literal = pattern != nullptr ? member(*pattern, "String") : nullptr;
    const json* source = regex != nullptr ? regex : literal;
    PTERON_CHECK(source != nullptr && source->is_string(), Error::InvalidArgument,
                 "%s: pre_tokenizer Split has no Regex or String pattern", n);
    const std::string& text = source->get_ref<const std::string&>();
    if (literal != nullptr && regex == nullptr && text.empty()) {
      // An empty String pattern matches nothing: the piece stays whole.
      PTERON_ASSIGN_OR_RETURN(auto re, Regex::compile("(?!)", false, name));
      step.regex = std::move(re);
    } else {
      PTERON_ASSIGN_OR_RETURN(
          auto re, Regex::compile(text, regex == nullptr, name + ": pre_tokenizer Split regex"));
      step.regex = std::move(re);
    }
    const json* behavior = member(config, "behavior");
    const std::string b =
        behavior != nullptr && behavior->is_string() ? behavior->get<std::string>() : "";
    static const std::pair<const char*, Behavior> kBehaviors[] = {
        {"Removed", Behavior::Removed},
        {"Isolated", Behavior::Isolated},
        {"MergedWithPrevious", Behavior::MergedWithPrevious},
        {"MergedWithNext", Behavior::MergedWithNext},
        {"Contiguous", Behavior::Contiguous}};
    bool known = false;
    for (const auto& [spelling, value] : kBehaviors) {
      if (b == spelling) {
        step.behavior = value;
        known = true;
      }
    }
    PTERON_CHECK(known, Error::InvalidArgument, "%s: pre_tokenizer Split behavior '%s' is unknown",
                 n, b.c_str());
    step.invert = flag(config, "invert", false);
  } else if (type == "Digits") {
    step.kind = Kind::Digits;
    PTERON_ASSIGN_OR_RETURN(auto re, Regex::compile("\\p{N}", false, name + ": Digits"));
    step.regex = std::move(re);
    step.behavior =
        flag(config, "individual_digits", false) ? Behavior::Isolated : Behavior::Contiguous;
  } else {
    return fail(Error::NotSupported,
                "%s: pre_tokenizer '%s' is not supported (byte-level BPE files use Split, "
                "Digits and ByteLevel)",
                n, type.c_str());
  }
  steps_.push_back(std::move(step));
  return Error::Ok;
}

Error PreTokenizer::load(const json* config, const std::string& name) {
  if (config != nullptr) PTERON_TRY(add(*config, name, 0));
  bool byte_level = false;
  for (const Step& s : steps_) byte_level = byte_level || s.kind == Kind::ByteLevel;
  PTERON_CHECK(byte_level, Error::NotSupported,
               "%s: not a byte-level BPE tokenizer (its pre_tokenizer has no ByteLevel step)",
               name.c_str());
  return Error::Ok;
}

// NormalizedString::split in tokenizers: the matches and the text between them as (span,
// is_match), then merged or dropped by the behavior.
Error PreTokenizer::split(const Step& step, std::string_view piece,
                          std::vector<std::string>& out) const {
  std::vector<Match> matches;
  PTERON_TRY(step.regex->find_all(piece, matches));
  struct Part {
    size_t begin, end;
    bool match;
  };
  std::vector<Part> parts;
  size_t prev = 0;
  for (const Match& m : matches) {
    if (prev != m.begin) parts.push_back({prev, m.begin, false});
    parts.push_back({m.begin, m.end, true});
    prev = m.end;
  }
  if (prev != piece.size()) parts.push_back({prev, piece.size(), false});
  if (step.invert) {
    for (Part& p : parts) p.match = !p.match;
  }
  // Each merged part keeps a `remove` flag (only Removed drops matches).
  std::vector<Part> merged;
  bool previous_match = false;
  switch (step.behavior) {
    case Behavior::Isolated:
      for (Part p : parts) merged.push_back({p.begin, p.end, false});
      break;
    case Behavior::Removed:
      merged = parts;
      break;
    case Behavior::Contiguous:
      for (const Part& p : parts) {
        if (p.match == previous_match && !merged.empty()) {
          merged.back().end = p.end;
        } else {
          merged.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      break;
    case Behavior::MergedWithPrevious:
      for (const Part& p : parts) {
        if (p.match && !previous_match && !merged.empty()) {
          merged.back().end = p.end;
        } else {
          merged.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      break;
    case Behavior::MergedWithNext:
      for (size_t i = parts.size(); i-- > 0;) {
        const Part& p = parts[i];
        if (p.match && !previous_match && !merged.empty()) {
          merged.back().begin = p.begin;
        } else {
          merged.push_back({p.begin, p.end, false});
        }
        previous_match = p.match;
      }
      std::reverse(merged.begin(), merged.end());
      break;
  }
  for (const Part& p : merged) {
    if (!p.match && p.end > p.begin) out.emplace_back(piece.substr(p.begin, p.end - p.begin));
  }
  return Error::Ok;
}

Error PreTokenizer::run(std::string_view text, std::vector<std::string>& words) const {
  words.assign(1, std::string(text));
  std::vector<std::string> next;
  for (const Step& step : steps_) {
    next.clear();
    for (const std::string& piece : words) {
      if (step.kind != Kind::ByteLevel) {
        PTERON_TRY(split(step, piece, next));
        continue;
      }
      const std::string spaced = step.add_prefix_space && piece[0] != ' ' ? " " + piece : piece;
      const size_t first = next.size();
      if (step.regex != nullptr) {
        PTERON_TRY(split(step, spaced, next));
      } else {
        next.push_back(spaced);
      }
      for (size_t i = first; i < next.size(); ++i) {
        std::string mapped;
        for (char c : next[i]) mapped += table().chars[static_cast<uint8_t>(c)];
        next[i] = std::move(mapped);
      }
    }
    words.swap(next);
  }
  return Error::Ok;
}

}  // namespace pteron::llm
