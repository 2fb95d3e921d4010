// tiktoken BPE files: Llama 3's tokenizer.model (and ExecuTorch's Llama runner's). Each line is a
// token's bytes in base64 and its rank ("IQ== 0"); the rank is the token id and the merge
// priority (bytes merge into the lowest-ranked token first, as tiktoken's byte_pair_encode).
// The file names no split regex and no special tokens: they are Llama 3's, as Meta's reference
// tokenizer and pytorch-tokenizers give them (256 special tokens after the file's ranks,
// <|begin_of_text|> first). Ids equal tiktoken's Encoding.encode(text, allowed_special="all").
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/llm/tokenizer.h"

namespace pteron::llm {

// Whether `data` starts like a tiktoken file: a base64 token, one space, a decimal rank.
bool looks_like_tiktoken(std::string_view data);

Result<std::unique_ptr<Tokenizer>> load_tiktoken(std::string_view data, const std::string& name);

}  // namespace pteron::llm
