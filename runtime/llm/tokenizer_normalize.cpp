#include "runtime/llm/tokenizer_normalize.h"

#include <unicode/unorm2.h>
#include <unicode/ustring.h>

#include <vector>

namespace pteron::llm {

Result<std::string> nfc(std::string_view text) {
  bool ascii = true;  // ASCII is its own NFC: skip the conversions
  for (char c : text) ascii = ascii && static_cast<unsigned char>(c) < 0x80;
  if (ascii) return std::string(text);
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* normalizer = unorm2_getNFCInstance(&status);
  PTERON_CHECK(U_SUCCESS(status), Error::NotSupported, "ICU has no NFC data: %s",
               u_errorName(status));
  // UTF-8 -> UTF-16 (at most one unit per byte), normalize (NFC at most triples the length),
  // UTF-16 -> UTF-8 (at most three bytes per unit).
  std::vector<UChar> in(text.size() + 1), out(3 * text.size() + 16);
  int32_t in_length = 0;
  u_strFromUTF8(in.data(), static_cast<int32_t>(in.size()), &in_length, text.data(),
                static_cast<int32_t>(text.size()), &status);
  const int32_t out_length = U_SUCCESS(status)
                                 ? unorm2_normalize(normalizer, in.data(), in_length, out.data(),
                                                    static_cast<int32_t>(out.size()), &status)
                                 : 0;
  std::string result(3 * static_cast<size_t>(out_length) + 1, '\0');
  int32_t result_length = 0;
  if (U_SUCCESS(status)) {
    u_strToUTF8(result.data(), static_cast<int32_t>(result.size()), &result_length, out.data(),
                out_length, &status);
  }
  PTERON_CHECK(U_SUCCESS(status), Error::InvalidArgument, "NFC normalization failed: %s",
               u_errorName(status));
  result.resize(result_length);
  return result;
}

}  // namespace pteron::llm
