#include "runtime/llm/tokenizer_hf.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "runtime/llm/tokenizer_added.h"
#include "runtime/llm/tokenizer_bpe.h"
#include "runtime/llm/tokenizer_normalize.h"
#include "runtime/llm/tokenizer_pretokenize.h"

namespace pteron::llm {
namespace {

using nlohmann::json;

// Ids past this are refused: no real vocabulary is near it, and a corrupt file must not make
// the loader allocate gigabytes.
constexpr int64_t kMaxTokenId = (int64_t{1} << 22) - 1;

// Special tokens that end text in the tokenizer.json files of common models (the file has no
// EOS field of its own; the model's generation_config.json does).
constexpr const char* kEndOfText[] = {
    "<|endoftext|>", "<|end_of_text|>", "<|eot_id|>", "<|im_end|>", "</s>", "<eos>", "<|end|>"};

// nlohmann's DOM builder, keeping the first parse error instead of throwing (the runtime is
// built without exceptions).
struct Sax : nlohmann::detail::json_sax_dom_parser<json> {
  explicit Sax(json& root) : json_sax_dom_parser(root, false) {}
  template <class Exception>
  bool parse_error(size_t position, const std::string&, const Exception& ex) {
    message = ex.what();
    const size_t bracket = message.find("] ");  // "[json.exception.parse_error.101] ..."
    if (bracket != std::string::npos) message.erase(0, bracket + 2);
    return false;
  }
  std::string message;
};

// Typed access that reports instead of aborting (nlohmann aborts on a type mismatch when
// exceptions are off). `where` names the field in messages.
class Reader {
 public:
  explicit Reader(const std::string& name) : name_(name) {}

  Error bad(const std::string& where, const char* what) const {
    return fail(Error::InvalidArgument, "%s: %s %s", name_.c_str(), where.c_str(), what);
  }
  static const json* member(const json& j, const char* key) {
    if (!j.is_object()) return nullptr;
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
  }
  Error get_bool(const json& j, const char* key, bool fallback, bool& out,
                 const std::string& where) const {
    const json* v = member(j, key);
    out = fallback;
    if (v == nullptr) return Error::Ok;
    if (!v->is_boolean()) return bad(where + "." + key, "is not true or false");
    out = v->get<bool>();
    return Error::Ok;
  }
  Error get_string(const json& j, const char* key, std::string& out,
                   const std::string& where) const {
    const json* v = member(j, key);
    if (v == nullptr || !v->is_string()) return bad(where + "." + key, "is not a string");
    out = v->get_ref<const std::string&>();
    return Error::Ok;
  }
  Error get_id(const json& v, int32_t& out, const std::string& where) const {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > kMaxTokenId) {
      return bad(where, "is not a token id (an integer from 0 to 4194303)");
    }
    out = static_cast<int32_t>(v.get<int64_t>());
    return Error::Ok;
  }
  // The "type" of a component, "" when it has none.
  static std::string type_of(const json& j) {
    const json* t = member(j, "type");
    return t != nullptr && t->is_string() ? t->get<std::string>() : std::string();
  }
  const std::string& name() const { return name_; }

 private:
  const std::string& name_;
};

class HfTokenizer final : public Tokenizer {
 public:
  Error load(const json& root, const Reader& r);

  std::string format() const override { return "Hugging Face tokenizer.json (byte-level BPE)"; }
  int64_t vocab_size() const override { return static_cast<int64_t>(decoded_.size()); }
  Error encode(std::string_view text, std::vector<int64_t>& ids) const override;
  std::string decode(int64_t id) const override {
    return id >= 0 && id < vocab_size() ? decoded_[id] : std::string();
  }
  bool is_special(int64_t id) const override {
    return id >= 0 && id < vocab_size() && special_[id];
  }
  InvalidUtf8 invalid_utf8() const override { return InvalidUtf8::PerMaximalSubpart; }

 private:
  Error load_added_tokens(const json& root, const Reader& r);
  Error load_model(const json& model, const Reader& r);
  Error load_bos(const json* processor, const Reader& r);
  Error load_normalizer(const json* normalizer, const Reader& r);

  std::vector<AddedToken> added_;
  AddedMatcher raw_matcher_, normalized_matcher_;  // normalized: false / true tokens
  PreTokenizer pre_tokenizer_;
  Bpe bpe_;
  std::unordered_map<std::string, int32_t> vocab_;  // the model's, until the Bpe takes it
  std::vector<std::string> decoded_;                // each id's bytes (ByteLevel decoding)
  std::vector<bool> special_;
  bool nfc_ = false;  // the NFC normalizer
};

Error HfTokenizer::load_added_tokens(const json& root, const Reader& r) {
  const json* list = Reader::member(root, "added_tokens");
  if (list == nullptr) return Error::Ok;
  if (!list->is_array()) return r.bad("added_tokens", "is not a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const json& t = (*list)[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    AddedToken token;
    const json* id = Reader::member(t, "id");
    if (id == nullptr) return r.bad(where + ".id", "is missing");
    PTERON_TRY(r.get_id(*id, token.id, where + ".id"));
    PTERON_TRY(r.get_string(t, "content", token.content, where));
    PTERON_TRY(r.get_bool(t, "special", false, token.special, where));
    PTERON_TRY(r.get_bool(t, "normalized", !token.special, token.normalized, where));
    PTERON_TRY(r.get_bool(t, "lstrip", false, token.lstrip, where));
    PTERON_TRY(r.get_bool(t, "rstrip", false, token.rstrip, where));
    PTERON_TRY(r.get_bool(t, "single_word", false, token.single_word, where));
    added_.push_back(std::move(token));
  }
  return Error::Ok;
}

Error HfTokenizer::load_model(const json& model, const Reader& r) {
  const std::string type = Reader::type_of(model);
  if (type != "BPE" && !(type.empty() && Reader::member(model, "merges") != nullptr)) {
    return fail(Error::NotSupported,
                "%s: model type '%s' is not supported (pteron reads byte-level BPE "
                "tokenizer.json files, SentencePiece .model files and tiktoken files)",
                r.name().c_str(), type.c_str());
  }
  const json* dropout = Reader::member(model, "dropout");
  if (dropout != nullptr && (!dropout->is_number() || dropout->get<double>() != 0.0)) {
    return r.bad("model.dropout", "is set: BPE dropout samples tokens, set it to null");
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    const json* v = Reader::member(model, affix);
    if (v != nullptr && !(v->is_string() && v->get_ref<const std::string&>().empty())) {
      return r.bad(std::string("model.") + affix, "is not supported in byte-level BPE");
    }
  }
  Bpe::Options options;
  PTERON_TRY(r.get_bool(model, "ignore_merges", false, options.ignore_merges, "model"));
  PTERON_TRY(r.get_bool(model, "byte_fallback", false, options.byte_fallback, "model"));
  PTERON_TRY(r.get_bool(model, "fuse_unk", false, options.fuse_unk, "model"));

  const json* vocab = Reader::member(model, "vocab");
  if (vocab == nullptr || !vocab->is_object()) return r.bad("model.vocab", "is not an object");
  for (const auto& [token, id] : vocab->items()) {
    int32_t value = 0;
    PTERON_TRY(r.get_id(id, value, "model.vocab['" + token.substr(0, 40) + "']"));
    vocab_[token] = value;
  }
  if (const json* unk = Reader::member(model, "unk_token")) {
    if (!unk->is_string()) return r.bad("model.unk_token", "is not a string");
    const auto it = vocab_.find(unk->get<std::string>());
    if (it == vocab_.end()) return r.bad("model.unk_token", "is not in the vocabulary");
    options.unk_id = it->second;
  }

  // Merges: "a b" strings (older files) or ["a", "b"] pairs; both tokens and their
  // concatenation must be in the vocabulary, as the reference requires.
  const json* merges = Reader::member(model, "merges");
  if (merges == nullptr || !merges->is_array()) return r.bad("model.merges", "is not a list");
  std::vector<std::array<int32_t, 3>> pairs;
  pairs.reserve(merges->size());
  for (size_t i = 0; i < merges->size(); ++i) {
    const json& m = (*merges)[i];
    const std::string where = "model.merges[" + std::to_string(i) + "]";
    std::string a, b;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        return r.bad(where, "is not two tokens separated by one space");
      }
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return r.bad(where, "is not a pair of tokens");
    }
    const auto ia = vocab_.find(a), ib = vocab_.find(b), im = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || im == vocab_.end()) {
      return r.bad(where, "merges tokens that are not in the vocabulary");
    }
    pairs.push_back({ia->second, ib->second, im->second});
  }
  bpe_ = Bpe(vocab_, options);
  for (size_t i = 0; i < pairs.size(); ++i) {
    bpe_.add_merge(pairs[i][0], pairs[i][1], static_cast<int32_t>(i), pairs[i][2]);
  }
  return Error::Ok;
}

// Normalizers change the text before the pre-tokenizer: byte-level files have none, or NFC
// (Qwen 2), alone or in a Sequence.
Error HfTokenizer::load_normalizer(const json* normalizer, const Reader& r) {
  if (normalizer == nullptr) return Error::Ok;
  std::vector<const json*> steps = {normalizer};
  if (Reader::type_of(*normalizer) == "Sequence") {
    const json* list = Reader::member(*normalizer, "normalizers");
    if (list == nullptr || !list->is_array()) return r.bad("normalizer", "has no normalizers list");
    steps.clear();
    for (const json& step : *list) steps.push_back(&step);
  }
  for (const json* step : steps) {
    const std::string type = Reader::type_of(*step);
    if (type != "NFC") {
      return fail(Error::NotSupported,
                  "%s: normalizer '%s' is not supported (byte-level BPE files have none or NFC)",
                  r.name().c_str(), type.c_str());
    }
    nfc_ = true;  // NFC twice is NFC once
  }
  return Error::Ok;
}

// BOS: the special token a TemplateProcessing post-processor puts before the text (Llama 3),
// or the cls token of a Roberta / Bert one.
Error HfTokenizer::load_bos(const json* processor, const Reader& r) {
  if (processor == nullptr) return Error::Ok;
  const std::string type = Reader::type_of(*processor);
  if (type == "Sequence") {
    const json* list = Reader::member(*processor, "processors");
    if (list == nullptr || !list->is_array()) return Error::Ok;
    for (const json& p : *list) {
      PTERON_TRY(load_bos(&p, r));
      if (bos_id_ >= 0) break;
    }
    return Error::Ok;
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {
    const json* cls = Reader::member(*processor, "cls");
    if (cls != nullptr && cls->is_array() && cls->size() == 2) {
      int32_t id = 0;
      PTERON_TRY(r.get_id((*cls)[1], id, "post_processor.cls"));
      bos_id_ = id;
    }
    return Error::Ok;
  }
  if (type != "TemplateProcessing") return Error::Ok;
  const json* single = Reader::member(*processor, "single");
  if (single == nullptr || !single->is_array() || single->empty()) return Error::Ok;
  const json* first = Reader::member((*single)[0], "SpecialToken");
  if (first == nullptr) return Error::Ok;
  const json* name = Reader::member(*first, "id");
  const json* specials = Reader::member(*processor, "special_tokens");
  if (name == nullptr || !name->is_string() || specials == nullptr) return Error::Ok;
  const json* entry = Reader::member(*specials, name->get_ref<const std::string&>().c_str());
  const json* ids = entry != nullptr ? Reader::member(*entry, "ids") : nullptr;
  if (ids != nullptr && ids->is_array() && ids->size() == 1) {
    int32_t id = 0;
    PTERON_TRY(r.get_id((*ids)[0], id, "post_processor.special_tokens.ids"));
    bos_id_ = id;
  }
  return Error::Ok;
}

Error HfTokenizer::load(const json& root, const Reader& r) {
  const json* model = Reader::member(root, "model");
  PTERON_CHECK(model != nullptr && model->is_object(), Error::InvalidArgument,
               "%s is JSON but not a Hugging Face tokenizer.json (it has no \"model\")",
               r.name().c_str());
  PTERON_TRY(load_model(*model, r));
  PTERON_TRY(load_added_tokens(root, r));
  // An added token the model's vocabulary already has keeps the vocabulary's id (the
  // reference only warns about a different one in the file).
  for (AddedToken& t : added_) {
    const auto it = vocab_.find(t.content);
    if (it != vocab_.end()) t.id = it->second;
  }

  PTERON_TRY(load_normalizer(Reader::member(root, "normalizer"), r));
  PTERON_TRY(pre_tokenizer_.load(Reader::member(root, "pre_tokenizer"), r.name()));

  const json* decoder = Reader::member(root, "decoder");
  bool byte_level = decoder != nullptr && Reader::type_of(*decoder) == "ByteLevel";
  if (decoder != nullptr && Reader::type_of(*decoder) == "Sequence") {
    const json* list = Reader::member(*decoder, "decoders");
    byte_level = list != nullptr && list->is_array() && list->size() == 1 &&
                 Reader::type_of((*list)[0]) == "ByteLevel";
  }
  PTERON_CHECK(byte_level, Error::NotSupported,
               "%s: decoder '%s' is not supported (byte-level BPE decodes with ByteLevel)",
               r.name().c_str(), decoder == nullptr ? "null" : Reader::type_of(*decoder).c_str());

  // Every id's token: the added tokens' content over the model's (as id_to_token looks them
  // up), then its bytes.
  int64_t size = 0;
  for (const auto& [token, id] : vocab_) size = std::max<int64_t>(size, id + 1);
  for (const AddedToken& t : added_) size = std::max<int64_t>(size, t.id + 1);
  std::vector<std::string> tokens(size);
  std::vector<bool> known(size, false);
  for (const auto& [token, id] : vocab_) {
    tokens[id] = token;
    known[id] = true;
  }
  vocab_.clear();
  special_.assign(size, false);
  for (const AddedToken& t : added_) {
    tokens[t.id] = t.content;
    known[t.id] = true;
    if (t.special) special_[t.id] = true;
    for (const char* end : kEndOfText) {
      if (t.special && t.content == end &&
          std::find(eos_ids_.begin(), eos_ids_.end(), t.id) == eos_ids_.end()) {
        eos_ids_.push_back(t.id);
      }
    }
  }
  decoded_.resize(size);
  for (int64_t id = 0; id < size; ++id) {
    if (known[id]) decoded_[id] = byte_level_decode(tokens[id]);
  }
  PTERON_TRY(raw_matcher_.build(added_, false, r.name()));
  // Normalized added tokens match the normalized text, so they are normalized too.
  std::vector<AddedToken> normalized = added_;
  for (AddedToken& t : normalized) {
    if (nfc_ && t.normalized) {
      PTERON_ASSIGN_OR_RETURN(t.content, nfc(t.content));
    }
  }
  PTERON_TRY(normalized_matcher_.build(normalized, true, r.name()));
  return load_bos(Reader::member(root, "post_processor"), r);
}

Error HfTokenizer::encode(std::string_view text, std::vector<int64_t>& ids) const {
  ids.clear();
  const size_t bad = first_invalid_utf8(text);
  PTERON_CHECK(bad == text.size(), Error::InvalidArgument, "the text is not valid UTF-8 (byte %zu)",
               bad);
  // Added tokens that match the raw text; then, in each piece between them, normalized, the
  // added tokens that match the normalized text; then the pre-tokenizer and BPE on the rest.
  std::vector<Segment> raw, inner;
  std::vector<std::string> words;
  PTERON_TRY(raw_matcher_.split(text, raw));
  for (const Segment& s : raw) {
    if (s.id >= 0) {
      ids.push_back(s.id);
      continue;
    }
    std::string piece(text.substr(s.begin, s.end - s.begin));
    if (nfc_) {
      PTERON_ASSIGN_OR_RETURN(piece, nfc(piece));
    }
    PTERON_TRY(normalized_matcher_.split(piece, inner));
    for (const Segment& t : inner) {
      if (t.id >= 0) {
        ids.push_back(t.id);
      } else if (t.end > t.begin) {
        PTERON_TRY(
            pre_tokenizer_.run(std::string_view(piece).substr(t.begin, t.end - t.begin), words));
        for (const std::string& word : words) bpe_.tokenize(word, ids);
      }
    }
  }
  return Error::Ok;
}

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_hf_tokenizer(std::string_view text,
                                                     const std::string& name) {
  json root;
  Sax sax(root);
  const bool parsed = json::sax_parse(text.begin(), text.end(), &sax);
  PTERON_CHECK(parsed && sax.message.empty(), Error::InvalidArgument,
               "%s is not valid JSON (truncated or corrupt?): %s", name.c_str(),
               sax.message.empty() ? "parse error" : sax.message.c_str());
  PTERON_CHECK(root.is_object(), Error::InvalidArgument,
               "%s is JSON but not a Hugging Face tokenizer.json (not an object)", name.c_str());
  auto tokenizer = std::make_unique<HfTokenizer>();
  const Reader reader(name);
  PTERON_TRY(tokenizer->load(root, reader));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace pteron::llm
