#include "runtime/llm/tokenizer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runtime/llm/tokenizer_hf.h"
#include "runtime/llm/tokenizer_sentencepiece.h"
#include "runtime/llm/tokenizer_tiktoken.h"

namespace pteron::llm {

std::string Tokenizer::decode_sequence(Span<const int64_t> ids, bool skip_special) const {
  std::string bytes;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!(skip_special && is_special(ids[i]))) bytes += decode(ids[i]);
  }
  return lossy_utf8(bytes, invalid_utf8());
}

Error encode_prompt(const Tokenizer& tokenizer, std::string_view text, bool add_bos,
                    std::vector<int64_t>& ids) {
  std::vector<int64_t> body;
  PTERON_TRY(tokenizer.encode(text, body));
  ids.clear();
  if (add_bos && tokenizer.bos_id() >= 0) ids.push_back(tokenizer.bos_id());
  ids.insert(ids.end(), body.begin(), body.end());
  return Error::Ok;
}

Error check_vocab_fits(const Tokenizer& tokenizer, int64_t logits, const std::string& name) {
  PTERON_CHECK(tokenizer.vocab_size() <= logits, Error::InvalidArgument,
               "tokenizer %s has %lld tokens but the program's logits have %lld: it is not this "
               "model's tokenizer",
               name.c_str(), static_cast<long long>(tokenizer.vocab_size()),
               static_cast<long long>(logits));
  return Error::Ok;
}

std::string TextStream::push(int64_t id) {
  if (tokenizer_->is_special(id)) return "";
  return utf8_.push(tokenizer_->decode(id));
}

Result<std::unique_ptr<Tokenizer>> tokenizer_from_bytes(std::string_view data,
                                                        const std::string& name) {
  const char* n = name.c_str();
  PTERON_CHECK(!data.empty(), Error::InvalidArgument, "%s is empty, not a tokenizer", n);
  // A JSON document (after an optional UTF-8 byte order mark and whitespace) is a Hugging Face
  // tokenizer.json; a serialized SentencePiece ModelProto starts with its first field, the
  // repeated `pieces` (field 1, length-delimited: tag byte 0x0A); a tiktoken file with a line
  // of a base64 token, a space and its rank.
  std::string_view text = data;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return load_hf_tokenizer(text, name);
  if (static_cast<uint8_t>(data[0]) == 0x0A) return load_sentencepiece(data, name);
  if (looks_like_tiktoken(data)) return load_tiktoken(data, name);
  return fail(Error::InvalidArgument,
              "%s is not a tokenizer file: expected a Hugging Face tokenizer.json, a "
              "SentencePiece .model or a tiktoken file (Llama 3's tokenizer.model)",
              n);
}

Result<std::unique_ptr<Tokenizer>> load_tokenizer(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  PTERON_CHECK(f != nullptr, Error::AccessFailed, "cannot open tokenizer %s: %s", path.c_str(),
               std::strerror(errno));
  std::string data;
  char buffer[1 << 16];
  size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), f)) > 0) data.append(buffer, got);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  PTERON_CHECK(!failed, Error::AccessFailed, "cannot read tokenizer %s", path.c_str());
  return tokenizer_from_bytes(data, path);
}

}  // namespace pteron::llm
