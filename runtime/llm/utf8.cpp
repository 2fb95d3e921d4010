#include "runtime/llm/utf8.h"

#include <cstdint>

namespace pteron::llm {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

enum class Scan { Valid, Invalid, Incomplete };

// Classifies the bytes at text[0]: a valid character of `length` bytes, an ill-formed maximal
// subpart of `length` bytes, or the start of a character the text ends inside of. The second
// byte's range depends on the first (Unicode table 3-7: no overlongs, surrogates or > U+10FFFF).
Scan scan(std::string_view text, size_t& length) {
  const auto b = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t lead = b(0);
  size_t need = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // range of the second byte
  if (lead < 0x80) {
    length = 1;
    return Scan::Valid;
  } else if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    length = 1;
    return Scan::Invalid;
  }
  for (size_t i = 1; i <= need; ++i) {
    if (i >= text.size()) {
      length = i;
      return Scan::Incomplete;
    }
    const uint8_t c = b(i);
    if (i == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) {
      length = i;
      return Scan::Invalid;
    }
  }
  length = need + 1;
  return Scan::Valid;
}

}  // namespace

size_t first_invalid_utf8(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t length = 0;
    if (scan(text.substr(at), length) != Scan::Valid) return at;
    at += length;
  }
  return text.size();
}

size_t utf8_char_length(std::string_view text) {
  if (text.empty()) return 1;
  size_t length = 1;
  return scan(text, length) == Scan::Valid ? length : 1;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void Utf8Stream::drain(std::string& out, bool final) {
  const std::string_view bytes = pending_;
  size_t at = 0;
  while (at < bytes.size()) {
    size_t length = 0;
    const Scan s = scan(bytes.substr(at), length);
    if (s == Scan::Incomplete && !final) break;  // the next bytes may complete it
    if (s == Scan::Valid) {
      out.append(bytes.substr(at, length));
    } else {
      // Per byte: the next byte may start a character of its own, so decode again from there.
      out += kReplacement;
      if (policy_ == InvalidUtf8::PerByte) length = 1;
    }
    at += length;
  }
  pending_.erase(0, at);
}

std::string Utf8Stream::push(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  drain(out, false);
  return out;
}

std::string Utf8Stream::finish() {
  std::string out;
  drain(out, true);
  return out;
}

std::string lossy_utf8(std::string_view bytes, InvalidUtf8 policy) {
  Utf8Stream stream(policy);
  std::string out = stream.push(bytes);
  out += stream.finish();
  return out;
}

}  // namespace pteron::llm
