// Hugging Face tokenizer.json files with a byte-level BPE model (GPT-2, Llama 3, Qwen 2 style):
// added and special tokens matched first (leftmost-longest, with their lstrip / rstrip /
// single_word rules), then the pre-tokenizer (Split regexes, ByteLevel, Digits, in sequence),
// then BPE merges by rank; ByteLevel decoding back to bytes. Parsed with nlohmann-json, regexes
// with PCRE2. Other models, normalizers and pre-tokenizers are refused by name, in one line.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/llm/tokenizer.h"

namespace pteron::llm {

Result<std::unique_ptr<Tokenizer>> load_hf_tokenizer(std::string_view json,
                                                     const std::string& name);

}  // namespace pteron::llm
