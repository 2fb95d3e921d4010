#include "runtime/llm/tokenizer_bpe.h"

#include <cstdio>
#include <queue>

#include "runtime/llm/utf8.h"

namespace pteron::llm {

Bpe::Bpe(std::unordered_map<std::string, int32_t> vocab, const Options& options)
    : vocab_(std::move(vocab)), options_(options) {
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = id(name);
  }
}

void Bpe::add_merge(int32_t a, int32_t b, int32_t rank, int32_t merged) {
  merges_[key(a, b)] = Merge{rank, merged};
}

int32_t Bpe::id(std::string_view token) const {
  const auto it = vocab_.find(std::string(token));
  return it == vocab_.end() ? -1 : it->second;
}

void Bpe::tokenize(std::string_view word, std::vector<int64_t>& out) const {
  if (options_.ignore_merges) {
    const int32_t whole = id(word);
    if (whole >= 0) {
      out.push_back(whole);
      return;
    }
  }
  // The word's characters as symbols (merge_word): vocabulary ids, byte tokens for the
  // characters the vocabulary lacks, or the unknown token (fused when fuse_unk).
  std::vector<int32_t> symbols;
  int32_t pending_unk = -1;  // an unknown token not yet added (it may still fuse)
  for (size_t at = 0; at < word.size();) {
    const size_t length = utf8_char_length(word.substr(at));
    const std::string_view ch = word.substr(at, length);
    at += length;
    const int32_t known = id(ch);
    if (known >= 0) {
      if (pending_unk >= 0) symbols.push_back(pending_unk);
      pending_unk = -1;
      symbols.push_back(known);
      continue;
    }
    if (options_.byte_fallback) {
      bool all = true;
      for (char c : ch) all = all && byte_ids_[static_cast<uint8_t>(c)] >= 0;
      if (all) {
        // The reference adds the byte tokens without flushing a pending unknown token first.
        for (char c : ch) symbols.push_back(byte_ids_[static_cast<uint8_t>(c)]);
        continue;
      }
    }
    if (options_.unk_id >= 0) {
      if (pending_unk >= 0 && !options_.fuse_unk) symbols.push_back(pending_unk);
      pending_unk = options_.unk_id;
    }
  }
  if (pending_unk >= 0) symbols.push_back(pending_unk);

  // merge_all: a queue of candidate merges ordered by (rank, position); a candidate is stale
  // when its left symbol was merged away or its pair changed since it was queued.
  struct Candidate {
    int32_t rank, pos, merged;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  const int32_t n = static_cast<int32_t>(symbols.size());
  std::vector<int32_t> prev(n), next(n);
  std::vector<bool> gone(n, false);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  const auto consider = [&](int32_t pos) {
    if (pos < 0 || next[pos] < 0) return;
    const auto it = merges_.find(key(symbols[pos], symbols[next[pos]]));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.merged});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (gone[top.pos] || next[top.pos] < 0) continue;
    const int32_t right = next[top.pos];
    const auto it = merges_.find(key(symbols[top.pos], symbols[right]));
    if (it == merges_.end() || it->second.merged != top.merged) continue;
    symbols[top.pos] = top.merged;
    gone[right] = true;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    consider(prev[top.pos]);
    consider(top.pos);
  }
  for (int32_t i = 0; i < n; ++i) {
    if (!gone[i]) out.push_back(symbols[i]);
  }
}

}  // namespace pteron::llm
