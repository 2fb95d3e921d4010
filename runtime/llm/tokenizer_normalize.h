// Unicode NFC (canonical decomposition, then composition) for tokenizer.json files whose
// normalizer is NFC (Qwen 2): the text and the normalized added tokens are composed before
// matching and pre-tokenizing. Through ICU (libicu), which every Debian system has.
#pragma once

#include <string>
#include <string_view>

#include "runtime/core/result.h"

namespace pteron::llm {

// `text` (valid UTF-8) in NFC.
Result<std::string> nfc(std::string_view text);

}  // namespace pteron::llm
