#include "runtime/llm/tokenizer_tiktoken.h"

#include <functional>
#include <queue>
#include <unordered_map>
#include <vector>

#include "runtime/llm/tokenizer_added.h"
#include "runtime/llm/tokenizer_regex.h"

namespace pteron::llm {
namespace {

// Ranks past this are refused: Llama 3 has 128000, and a corrupt file must not make the loader
// allocate gigabytes.
constexpr int64_t kMaxRank = (int64_t{1} << 22) - 1;

// Llama 3's split regex (tiktoken's cl100k_base pattern), in the syntax tokenizer_regex.h takes.
constexpr std::string_view kLlama3Split =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// Llama 3's special tokens, ids from the file's token count on (pytorch-tokenizers'
// LLAMA_SPECIAL_TOKENS, Meta's llama-models for 3.1 and later): these twelve, then reserved
// tokens numbered from 2 up to 256 in all.
constexpr const char* kLlama3Specials[] = {"<|begin_of_text|>",
                                           "<|end_of_text|>",
                                           "<|reserved_special_token_0|>",
                                           "<|reserved_special_token_1|>",
                                           "<|finetune_right_pad_id|>",
                                           "<|step_id|>",
                                           "<|start_header_id|>",
                                           "<|end_header_id|>",
                                           "<|eom_id|>",
                                           "<|eot_id|>",
                                           "<|python_tag|>",
                                           "<|image|>"};
constexpr int kNumSpecials = 256;
// Where a generation ends: end of text, of message, of turn (Llama 3.1's generation_config).
constexpr int kEndOfTextSpecials[] = {1, 8, 9};

// The standard base64 alphabet's value of `c`, -1 for any other byte.
int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Strict base64 (RFC 4648 with padding): false for a length that is not a multiple of 4, a byte
// outside the alphabet or padding anywhere but at the end.
bool decode_base64(std::string_view in, std::string& out) {
  out.clear();
  if (in.empty() || in.size() % 4 != 0) return false;
  size_t padding = 0;
  while (padding < 2 && in[in.size() - 1 - padding] == '=') ++padding;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < in.size() - padding; ++i) {
    const int v = base64_value(in[i]);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    if (++count == 4) {
      out += static_cast<char>(bits >> 16);
      out += static_cast<char>(bits >> 8);
      out += static_cast<char>(bits);
      bits = 0;
      count = 0;
    }
  }
  if (count == 2) out += static_cast<char>(bits >> 4);
  if (count == 3) {
    out += static_cast<char>(bits >> 10);
    out += static_cast<char>(bits >> 2);
  }
  return count != 1;
}

// The fields of one line, "TOKEN RANK" (ASCII spaces or tabs between, an optional \r at the end).
bool split_line(std::string_view line, std::string_view& token, std::string_view& rank) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t gap = line.find_first_of(" \t");
  if (gap == 0 || gap == std::string_view::npos) return false;
  const size_t next = line.find_first_not_of(" \t", gap);
  if (next == std::string_view::npos) return false;
  token = line.substr(0, gap);
  rank = line.substr(next);
  return rank.find_first_of(" \t") == std::string_view::npos;
}

// A decimal rank (digits only, at most kMaxRank); -1 when it is not one.
int64_t parse_rank(std::string_view text) {
  if (text.empty() || text.size() > 8) return -1;
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    value = value * 10 + (c - '0');
  }
  return value <= kMaxRank ? value : -1;
}

class TiktokenTokenizer final : public Tokenizer {
 public:
  Error load(std::string_view data, const std::string& name);

  std::string format() const override {
    return "tiktoken BPE (Llama 3 split regex and special tokens)";
  }
  int64_t vocab_size() const override { return static_cast<int64_t>(bytes_.size()); }
  Error encode(std::string_view text, std::vector<int64_t>& ids) const override;
  std::string decode(int64_t id) const override {
    return id >= 0 && id < vocab_size() ? bytes_[id] : std::string();
  }
  bool is_special(int64_t id) const override { return id >= num_ranks_ && id < vocab_size(); }
  // tiktoken's decode is Python's bytes.decode("utf-8", errors="replace").
  InvalidUtf8 invalid_utf8() const override { return InvalidUtf8::PerMaximalSubpart; }

 private:
  int32_t rank(std::string_view bytes) const {
    const auto it = ranks_.find(std::string(bytes));
    return it == ranks_.end() ? -1 : it->second;
  }
  // tiktoken's byte_pair_encode of one piece of the split.
  void merge(std::string_view piece, std::vector<int64_t>& ids) const;

  std::unordered_map<std::string, int32_t> ranks_;  // token bytes -> rank (= id)
  std::vector<std::string> bytes_;                  // id -> bytes (special tokens: their text)
  int64_t num_ranks_ = 0;
  std::unique_ptr<Regex> split_;
  AddedMatcher specials_;
};

Error TiktokenTokenizer::load(std::string_view data, const std::string& name) {
  const char* n = name.c_str();
  std::string token;
  size_t line_number = 0;
  for (size_t at = 0; at < data.size();) {
    size_t end = data.find('\n', at);
    if (end == std::string_view::npos) end = data.size();
    const std::string_view line = data.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (line.empty() || line == "\r") continue;  // as tiktoken's load_tiktoken_bpe
    std::string_view encoded, rank_text;
    PTERON_CHECK(split_line(line, encoded, rank_text), Error::InvalidArgument,
                 "%s: line %zu is not a base64 token and a rank (truncated or corrupt?)", n,
                 line_number);
    PTERON_CHECK(decode_base64(encoded, token), Error::InvalidArgument,
                 "%s: line %zu: the token is not base64 (truncated or corrupt?)", n, line_number);
    const int64_t rank = parse_rank(rank_text);
    PTERON_CHECK(rank >= 0, Error::InvalidArgument,
                 "%s: line %zu: the rank is not an integer from 0 to %lld", n, line_number,
                 static_cast<long long>(kMaxRank));
    PTERON_CHECK(static_cast<int64_t>(bytes_.size()) < kMaxRank, Error::InvalidArgument,
                 "%s: more than %lld tokens", n, static_cast<long long>(kMaxRank));
    const auto [it, fresh] = ranks_.emplace(token, static_cast<int32_t>(rank));
    PTERON_CHECK(fresh, Error::InvalidArgument,
                 "%s: line %zu: the token of rank %lld is already in the file with rank %d", n,
                 line_number, static_cast<long long>(rank), it->second);
    bytes_.push_back(token);
  }
  num_ranks_ = static_cast<int64_t>(bytes_.size());
  PTERON_CHECK(num_ranks_ > 0, Error::InvalidArgument, "%s has no tokens", n);
  // Ranks are token ids: each of 0..n-1 once, so that the special tokens after them are unique.
  std::vector<std::string> by_rank(num_ranks_);
  std::vector<bool> seen(num_ranks_, false);
  for (auto& [bytes, rank] : ranks_) {
    PTERON_CHECK(rank < num_ranks_ && !seen[rank], Error::InvalidArgument,
                 "%s: rank %d is %s: the ranks of %lld tokens must be 0 to %lld, each once", n,
                 rank, rank < num_ranks_ ? "given twice" : "out of range",
                 static_cast<long long>(num_ranks_), static_cast<long long>(num_ranks_ - 1));
    seen[rank] = true;
    by_rank[rank] = bytes;
  }
  bytes_ = std::move(by_rank);
  // Merging starts from single bytes: every byte must be a token (tiktoken assumes it).
  for (int b = 0; b < 256; ++b) {
    PTERON_CHECK(rank(std::string(1, static_cast<char>(b))) >= 0, Error::InvalidArgument,
                 "%s: byte 0x%02X has no token: not a byte-level BPE file (truncated?)", n, b);
  }

  std::vector<AddedToken> specials;
  for (int i = 0; i < kNumSpecials; ++i) {
    AddedToken t;
    constexpr int kNamed = sizeof(kLlama3Specials) / sizeof(kLlama3Specials[0]);
    t.content = i < kNamed ? kLlama3Specials[i]
                           : "<|reserved_special_token_" + std::to_string(i - kNamed + 2) + "|>";
    t.id = static_cast<int32_t>(num_ranks_ + i);
    t.special = true;
    t.normalized = false;
    bytes_.push_back(t.content);
    specials.push_back(std::move(t));
  }
  PTERON_TRY(specials_.build(specials, false, name));
  bos_id_ = num_ranks_;
  for (int i : kEndOfTextSpecials) eos_ids_.push_back(num_ranks_ + i);
  PTERON_ASSIGN_OR_RETURN(split_, Regex::compile(kLlama3Split, false, name + ": the split regex"));
  return Error::Ok;
}

void TiktokenTokenizer::merge(std::string_view piece, std::vector<int64_t>& ids) const {
  // Symbols are byte spans [start[i], start[next[i]]); a candidate merges symbol `pos` with the
  // one after it into the token `rank`, valid while that pair still ends at `end`. The lowest
  // rank merges first, the leftmost among equal ranks, as tiktoken's _byte_pair_merge.
  struct Candidate {
    int32_t rank;
    uint32_t pos, end;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  const uint32_t n = static_cast<uint32_t>(piece.size());
  std::vector<uint32_t> next(n);
  std::vector<int64_t> prev(n);
  std::vector<bool> gone(n, false);  // merged into the symbol before it
  for (uint32_t i = 0; i < n; ++i) {
    next[i] = i + 1;
    prev[i] = static_cast<int64_t>(i) - 1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto consider = [&](int64_t pos) {
    if (pos < 0 || next[pos] >= n) return;
    const uint32_t end = next[next[pos]];
    const int32_t r = rank(piece.substr(pos, end - pos));
    if (r >= 0) queue.push({r, static_cast<uint32_t>(pos), end});
  };
  for (uint32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    // Stale: the left symbol was merged away, or either symbol grew since it was queued.
    const uint32_t right = next[top.pos];
    if (gone[top.pos] || right >= n || next[right] != top.end) continue;
    gone[right] = true;
    next[top.pos] = top.end;
    if (top.end < n) prev[top.end] = top.pos;
    consider(prev[top.pos]);
    consider(top.pos);
  }
  for (uint32_t i = 0; i < n; i = next[i]) ids.push_back(rank(piece.substr(i, next[i] - i)));
}

Error TiktokenTokenizer::encode(std::string_view text, std::vector<int64_t>& ids) const {
  ids.clear();
  const size_t bad = first_invalid_utf8(text);
  PTERON_CHECK(bad == text.size(), Error::InvalidArgument, "the text is not valid UTF-8 (byte %zu)",
               bad);
  std::vector<Segment> segments;
  PTERON_TRY(specials_.split(text, segments));
  std::vector<Match> pieces;
  for (const Segment& s : segments) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    const std::string_view segment = text.substr(s.begin, s.end - s.begin);
    PTERON_TRY(split_->find_all(segment, pieces));
    for (const Match& m : pieces) {
      const std::string_view piece = segment.substr(m.begin, m.end - m.begin);
      if (piece.empty()) continue;
      const int32_t whole = rank(piece);
      if (whole >= 0) {
        ids.push_back(whole);
      } else {
        merge(piece, ids);
      }
    }
  }
  return Error::Ok;
}

}  // namespace

bool looks_like_tiktoken(std::string_view data) {
  std::string_view token, rank;
  const std::string_view line = data.substr(0, data.find('\n'));
  return split_line(line, token, rank) && token.size() % 4 == 0 && parse_rank(rank) >= 0 &&
         base64_value(token[0]) >= 0;
}

Result<std::unique_ptr<Tokenizer>> load_tiktoken(std::string_view data, const std::string& name) {
  auto tokenizer = std::make_unique<TiktokenTokenizer>();
  PTERON_TRY(tokenizer->load(data, name));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace pteron::llm
