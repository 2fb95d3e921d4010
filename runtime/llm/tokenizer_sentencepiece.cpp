#include "runtime/llm/tokenizer_sentencepiece.h"

#include <sentencepiece_processor.h>

#include <exception>
#include <string>
#include <vector>

namespace pteron::llm {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// libsentencepiece's message without its "file.cc(line) [failed check] " prefix ("" when that
// is all it says: a protobuf that does not parse).
std::string reason(const sentencepiece::util::Status& status) {
  std::string message = status.error_message();
  const size_t check = message.rfind("] ");
  if (message.compare(0, 2, "./") == 0 || message.compare(0, 4, "src/") == 0) {
    message = check == std::string::npos ? std::string() : message.substr(check + 2);
  }
  while (!message.empty() && (message.back() == ' ' || message.back() == '\n')) message.pop_back();
  return message.empty() ? "" : ": " + message;
}

// The byte of a byte piece "<0xAB>", -1 for any other spelling.
int byte_of(const std::string& piece) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
  };
  if (piece.size() != 6 || piece.compare(0, 3, "<0x") != 0 || piece[5] != '>') return -1;
  const int hi = hex(piece[3]), lo = hex(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

class SentencePieceTokenizer final : public Tokenizer {
 public:
  Error load(std::string_view data, const std::string& name) {
    sentencepiece::util::Status status;
    std::string thrown;
    try {
      status = processor_.LoadFromSerializedProto(data);
    } catch (const std::exception& e) {  // its trie builder throws (a zero-length piece)
      thrown = e.what();
    } catch (...) {
      thrown = "libsentencepiece failed while loading it";
    }
    if (!thrown.empty()) {
      const size_t at = thrown.find("exception: ");  // "./third_party/...: exception: why"
      if (at != std::string::npos) thrown = thrown.substr(at + 11);
    }
    PTERON_CHECK(thrown.empty(), Error::InvalidArgument,
                 "%s is not a valid SentencePiece model (truncated or corrupt?): %s", name.c_str(),
                 thrown.c_str());
    PTERON_CHECK(status.ok(), Error::InvalidArgument,
                 "%s is not a valid SentencePiece model (truncated or corrupt?)%s", name.c_str(),
                 reason(status).c_str());
    const int n = processor_.GetPieceSize();
    PTERON_CHECK(n > 0, Error::InvalidArgument, "%s: the SentencePiece model has no pieces",
                 name.c_str());
    // Every piece's bytes once, as SentencePiece's decoder writes them in running text.
    const std::string unk_surface = processor_.unk_id() >= 0 && processor_.unk_id() < n
                                        ? processor_.DecodeIds({processor_.unk_id()})
                                        : std::string();
    bytes_.resize(n);
    control_.resize(n);
    // Pieces are UTF-8 in every trained model; the protobuf does not promise it, and the
    // decoder copies them into the text.
    PTERON_CHECK(first_invalid_utf8(unk_surface) == unk_surface.size(), Error::InvalidArgument,
                 "%s: the SentencePiece model's unknown-token surface is not UTF-8", name.c_str());
    for (int id = 0; id < n; ++id) {
      control_[id] = processor_.IsControl(id);
      const std::string& piece = processor_.IdToPiece(id);
      PTERON_CHECK(first_invalid_utf8(piece) == piece.size(), Error::InvalidArgument,
                   "%s: SentencePiece piece %d is not UTF-8 (corrupt model?)", name.c_str(), id);
      if (control_[id]) continue;  // <s>, </s>: invisible
      if (processor_.IsUnknown(id)) {
        bytes_[id] = unk_surface;
      } else if (int byte = processor_.IsByte(id) ? byte_of(piece) : -1; byte >= 0) {
        bytes_[id] = std::string(1, static_cast<char>(byte));
      } else {
        std::string text;
        for (size_t at = 0; at < piece.size();) {
          if (std::string_view(piece).substr(at, kSpace.size()) == kSpace) {
            text += ' ';
            at += kSpace.size();
          } else {
            text += piece[at++];
          }
        }
        bytes_[id] = std::move(text);
      }
    }
    bos_id_ = processor_.bos_id();
    if (bos_id_ >= n) bos_id_ = -1;
    if (processor_.eos_id() >= 0 && processor_.eos_id() < n) eos_ids_ = {processor_.eos_id()};
    return Error::Ok;
  }

  std::string format() const override { return "SentencePiece model"; }
  int64_t vocab_size() const override { return static_cast<int64_t>(bytes_.size()); }

  Error encode(std::string_view text, std::vector<int64_t>& ids) const override {
    ids.clear();
    const size_t bad = first_invalid_utf8(text);
    PTERON_CHECK(bad == text.size(), Error::InvalidArgument,
                 "the text is not valid UTF-8 (byte %zu)", bad);
    std::vector<int> out;
    const sentencepiece::util::Status status = processor_.Encode(text, &out);
    PTERON_CHECK(status.ok(), Error::InvalidArgument, "SentencePiece cannot encode the text%s",
                 reason(status).c_str());
    ids.assign(out.begin(), out.end());
    return Error::Ok;
  }

  std::string decode(int64_t id) const override {
    return id >= 0 && id < vocab_size() ? bytes_[id] : std::string();
  }
  bool is_special(int64_t id) const override {
    return id >= 0 && id < vocab_size() && control_[id];
  }
  InvalidUtf8 invalid_utf8() const override { return InvalidUtf8::PerByte; }

  // SentencePiece's own decoder: it also drops the space its encoder put before the text.
  std::string decode_sequence(Span<const int64_t> ids, bool skip_special) const override {
    std::vector<int> in;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] >= 0 && ids[i] < vocab_size()) in.push_back(static_cast<int>(ids[i]));
    }
    return processor_.DecodeIds(in);
  }

 private:
  sentencepiece::SentencePieceProcessor processor_;
  std::vector<std::string> bytes_;
  std::vector<bool> control_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> load_sentencepiece(std::string_view data,
                                                      const std::string& name) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>();
  PTERON_TRY(tokenizer->load(data, name));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

}  // namespace pteron::llm
