// The BPE model of a tokenizer.json: a word (one pre-tokenized piece, already byte-level
// mapped) to token ids by applying merges lowest rank first, leftmost first among equal ranks,
// exactly as Hugging Face tokenizers' Word::merge_all does with its priority queue.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pteron::llm {

class Bpe {
 public:
  struct Options {
    bool ignore_merges = false;  // a word that is itself in the vocabulary is one token
    bool byte_fallback = false;  // characters outside the vocabulary as <0xXX> byte tokens
    bool fuse_unk = false;       // consecutive unknown characters as one unknown token
    int32_t unk_id = -1;         // the unknown token, -1: unknown characters are dropped
  };

  Bpe() = default;
  Bpe(std::unordered_map<std::string, int32_t> vocab, const Options& options);

  // Adds merge `rank` of tokens `a` and `b` into `merged`; a later merge of the same pair
  // replaces an earlier one (as the reference's map does).
  void add_merge(int32_t a, int32_t b, int32_t rank, int32_t merged);
  // The id of `token` in the model's vocabulary, -1 when it has none.
  int32_t id(std::string_view token) const;

  // Appends the ids of `word` (UTF-8, not empty) to `out`.
  void tokenize(std::string_view word, std::vector<int64_t>& out) const;

 private:
  struct Merge {
    int32_t rank, merged;
  };
  static uint64_t key(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  std::unordered_map<std::string, int32_t> vocab_;
  std::unordered_map<uint64_t, Merge> merges_;
  Options options_;
  int32_t byte_ids_[256];  // <0x00>..<0xFF>, -1 where the vocabulary lacks one
};

}  // namespace pteron::llm
