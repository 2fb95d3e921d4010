// The pieces under runtime/llm's tokenizers that Python's reference comparisons reach only
// indirectly: UTF-8 streaming and its two replacement policies, the Oniguruma-to-PCRE2
// rewrite, onig's find_iter enumeration of empty matches, BPE merge order (tokenizer.json's by
// merge rank, tiktoken's by the rank of the merged bytes), one-line refusals.
#include "runtime/llm/tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/llm/tokenizer_bpe.h"
#include "runtime/llm/tokenizer_regex.h"
#include "runtime/llm/utf8.h"

namespace pteron::llm {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidityFollowsTheUnicodeTable) {
  EXPECT_EQ(first_invalid_utf8("a\xC3\xA9\xE6\x97\xA5\xF0\x9F\x99\x82"), 10u);
  EXPECT_EQ(first_invalid_utf8("a\xC0\x80"), 1u);         // overlong
  EXPECT_EQ(first_invalid_utf8("ab\xED\xA0\x80"), 2u);    // a surrogate
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(first_invalid_utf8("\xE3\x81"), 0u);          // cut short
}

TEST(Utf8, StreamHoldsAnIncompleteCharacterBack) {
  Utf8Stream s(InvalidUtf8::PerMaximalSubpart);
  const std::string text = "a\xE6\x97\xA5\xF0\x9F\x99\x82";  // a 日 🙂
  std::vector<std::string> out;
  for (char c : text) out.push_back(s.push(std::string(1, c)));
  EXPECT_EQ(
      out, (std::vector<std::string>{"a", "", "", "\xE6\x97\xA5", "", "", "", "\xF0\x9F\x99\x82"}));
  EXPECT_EQ(s.finish(), "");
  EXPECT_EQ(s.push("\xE3\x81"), "");
  EXPECT_EQ(s.finish(), kFffd);  // cut short at the end
}

TEST(Utf8, ReplacementPerMaximalSubpartOrPerByte) {
  EXPECT_EQ(lossy_utf8("\xE3\x81"
                       "A",
                       InvalidUtf8::PerMaximalSubpart),
            kFffd + "A");
  EXPECT_EQ(lossy_utf8("\xE3\x81"
                       "A",
                       InvalidUtf8::PerByte),
            kFffd + kFffd + "A");
  EXPECT_EQ(lossy_utf8("\xFF\xE3\x81\x82", InvalidUtf8::PerByte), kFffd + "\xE3\x81\x82");
  EXPECT_EQ(lossy_utf8("\xF0\x9F\x99", InvalidUtf8::PerMaximalSubpart), kFffd);
  EXPECT_EQ(lossy_utf8("\xF0\x9F\x99", InvalidUtf8::PerByte), kFffd + kFffd + kFffd);
}

TEST(OnigToPcre2, UnicodeClassesAreSpelledOut) {
  auto s = onig_to_pcre2("\\s+(?!\\S)|[^\\s\\p{L}]", "re");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.get(), "\\p{White_Space}+(?!\\P{White_Space})|[^\\p{White_Space}\\p{L}]");
  auto w = onig_to_pcre2("\\w|[\\w-]|\\h|\\\\w", "re");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w.get().substr(0, 2), "[\\");
  EXPECT_NE(w.get().find("[\\p{Alphabetic}"), std::string::npos);
  EXPECT_NE(w.get().find("[0-9a-fA-F]"), std::string::npos);
  EXPECT_EQ(w.get().substr(w.get().size() - 3), "\\\\w");  // an escaped backslash, then w
  EXPECT_FALSE(onig_to_pcre2("[\\W]", "re").ok());
  EXPECT_NE(std::string(last_error_message()).find("\\W inside a character class"),
            std::string::npos);
}

std::vector<std::pair<size_t, size_t>> matches(const char* pattern, const char* text) {
  auto re = Regex::compile(pattern, false, "re");
  EXPECT_TRUE(re.ok());
  std::vector<Match> found;
  EXPECT_EQ(re.get()->find_all(text, found), Error::Ok);
  std::vector<std::pair<size_t, size_t>> out;
  for (const Match& m : found) out.emplace_back(m.begin, m.end);
  return out;
}

TEST(Regex, EmptyMatchesAsOnigFindIter) {
  using P = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(matches("\\s*", "ab"), (P{{0, 0}, {1, 1}, {2, 2}}));
  // No empty match right after a match: none at 2 after " " ended there.
  EXPECT_EQ(matches("\\s*", "a b"), (P{{0, 0}, {1, 2}, {3, 3}}));
  EXPECT_EQ(matches("x", ""), P{});
  EXPECT_EQ(matches("\\p{L}+", "ab 日本 1"), (P{{0, 2}, {3, 9}}));
}

TEST(Regex, BadPatternsAndRunawayMatchesAreOneLine) {
  EXPECT_FALSE(Regex::compile("(", false, "the regex").ok());
  EXPECT_NE(std::string(last_error_message()).find("the regex does not compile"),
            std::string::npos);
  auto re = Regex::compile("(a+)+$", false, "slow");  // exponential backtracking
  ASSERT_TRUE(re.ok());
  std::vector<Match> found;
  EXPECT_NE(re.get()->find_all(std::string(40, 'a') + "!", found), Error::Ok);
  EXPECT_NE(std::string(last_error_message()).find("slow: matching failed"), std::string::npos);
}

TEST(Bpe, MergesLowestRankFirst) {
  const std::unordered_map<std::string, int32_t> vocab = {{"a", 0},  {"b", 1},  {"c", 2},
                                                          {"ab", 3}, {"bc", 4}, {"abc", 5}};
  Bpe bc_first(vocab, {});
  bc_first.add_merge(1, 2, 0, 4);  // b c
  bc_first.add_merge(0, 1, 1, 3);  // a b
  bc_first.add_merge(0, 4, 2, 5);  // a bc
  std::vector<int64_t> ids;
  bc_first.tokenize("abc", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{5}));
  Bpe ab_first(vocab, {});
  ab_first.add_merge(0, 1, 0, 3);
  ab_first.add_merge(1, 2, 1, 4);
  ids.clear();
  ab_first.tokenize("abcx", ids);  // x is unknown and dropped (no unk token)
  EXPECT_EQ(ids, (std::vector<int64_t>{3, 2}));
  Bpe::Options unk;
  unk.unk_id = 2;
  unk.fuse_unk = true;
  Bpe fused(vocab, unk);
  ids.clear();
  fused.tokenize("axyb", ids);
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 2, 1}));
}

// A tiktoken file: every byte (ranks 0-255, in byte order) and then `extra`, one line each.
std::string tiktoken_file(const std::vector<std::string>& extra) {
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto base64 = [&](const std::string& bytes) {
    std::string out;
    for (size_t i = 0; i < bytes.size(); i += 3) {
      uint32_t v = static_cast<uint8_t>(bytes[i]) << 16;
      if (i + 1 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 1]) << 8;
      if (i + 2 < bytes.size()) v |= static_cast<uint8_t>(bytes[i + 2]);
      out += alphabet[v >> 18];
      out += alphabet[(v >> 12) & 63];
      out += i + 1 < bytes.size() ? alphabet[(v >> 6) & 63] : '=';
      out += i + 2 < bytes.size() ? alphabet[v & 63] : '=';
    }
    return out;
  };
  std::string file;
  for (int b = 0; b < 256; ++b) {
    file += base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(b) + "\n";
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    file += base64(extra[i]) + " " + std::to_string(256 + i) + "\n";
  }
  return file;
}

TEST(Tiktoken, MergesTheLowestRankedBytesFirst) {
  // "bc" ranks before "ab": "abcd" merges b+c, then a+bc; a whole piece in the file is one token.
  auto loaded = tokenizer_from_bytes(tiktoken_file({"bc", "ab", "abc", "dd"}), "t.model");
  ASSERT_TRUE(loaded.ok()) << last_error_message();
  const Tokenizer& t = *loaded.get();
  EXPECT_EQ(t.vocab_size(), 260 + 256);
  std::vector<int64_t> ids;
  ASSERT_EQ(t.encode("abcd ab", ids), Error::Ok);
  EXPECT_EQ(ids, (std::vector<int64_t>{258, 'd', ' ', 257}));
  // Equal ranks merge leftmost first: "ddd" is dd + d.
  ASSERT_EQ(t.encode("ddd", ids), Error::Ok);
  EXPECT_EQ(ids, (std::vector<int64_t>{259, 'd'}));
  // Llama 3's special tokens follow the ranks: <|begin_of_text|> is BOS, <|eot_id|> ends text.
  EXPECT_EQ(t.bos_id(), 260);
  EXPECT_EQ(t.eos_ids(), (std::vector<int64_t>{261, 268, 269}));
  ASSERT_EQ(t.encode("<|eot_id|>ab<|reserved_special_token_245|>", ids), Error::Ok);
  EXPECT_EQ(ids, (std::vector<int64_t>{269, 257, 260 + 255}));
  EXPECT_TRUE(t.is_special(269) && !t.is_special(259));
  EXPECT_EQ(t.decode(258), "abc");
  EXPECT_EQ(t.decode(269), "<|eot_id|>");
}

TEST(Tiktoken, RefusesCorruptFilesInOneLine) {
  const std::string good = tiktoken_file({"ab"});
  const auto refused = [](const std::string& file, const char* fragment) {
    EXPECT_FALSE(tokenizer_from_bytes(file, "t.model").ok()) << fragment;
    EXPECT_NE(std::string(last_error_message()).find(fragment), std::string::npos)
        << last_error_message();
  };
  refused(good + "YWJj\n", "line 258 is not a base64 token and a rank");
  refused(good + "YW=j 257\n", "line 258: the token is not base64");
  refused(good + "YWJ 257\n", "line 258: the token is not base64");
  refused(good + "YWJj -1\n", "line 258: the rank is not an integer");
  refused(good + "YWI= 257\n",
          "line 258: the token of rank 257 is already in the file with rank 256");
  refused(good + "YWJj 256\n", "rank 256 is given twice");
  refused(good.substr(good.find('\n') + 1), "rank 256 is out of range");
  refused(tiktoken_file({}).substr(0, 4) + " 0\n", "byte 0x01 has no token");
}

TEST(LoadTokenizer, RefusesInOneLine) {
  EXPECT_FALSE(tokenizer_from_bytes("", "t.json").ok());
  EXPECT_STREQ(last_error_message(), "t.json is empty, not a tokenizer");
  EXPECT_FALSE(tokenizer_from_bytes("{\"model\": {", "t.json").ok());
  EXPECT_NE(std::string(last_error_message()).find("t.json is not valid JSON"), std::string::npos);
  EXPECT_FALSE(tokenizer_from_bytes("\x0A\x03"
                                    "abc",
                                    "t.model")
                   .ok());
  EXPECT_NE(std::string(last_error_message()).find("not a valid SentencePiece model"),
            std::string::npos);
  EXPECT_FALSE(load_tokenizer("/nonexistent/tokenizer.json").ok());
  EXPECT_NE(std::string(last_error_message()).find("cannot open tokenizer"), std::string::npos);
}

}  // namespace
}  // namespace pteron::llm

namespace pteron::llm {
namespace {

// Found by tokenizer_fuzzer: a SentencePiece model with a zero-length piece, on which
// libsentencepiece's trie builder throws (Darts::Details::Exception), which ended the process.
TEST(LoadTokenizer, SentencePieceThatThrowsInsideTheLibraryIsOneLine) {
  std::ifstream in(std::string(PTERON_FUZZ_REGRESSIONS) + "/tokenizer-spm-zero-length-piece.model",
                   std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream bytes;
  bytes << in.rdbuf();
  EXPECT_FALSE(tokenizer_from_bytes(bytes.str(), "z.model").ok());
  const std::string message = last_error_message();
  EXPECT_NE(message.find("z.model is not a valid SentencePiece model"), std::string::npos)
      << message;
  EXPECT_NE(message.find("zero-length key"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

}  // namespace
}  // namespace pteron::llm
