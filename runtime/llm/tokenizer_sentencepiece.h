// SentencePiece .model files (serialized ModelProto: Llama 2, Gemma, T5, Mistral) through
// Debian's libsentencepiece: its encoder and its decoder's rules for pieces (U+2581 is a
// space, <0xXX> pieces are bytes, control pieces are invisible, <unk> shows as its surface).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/llm/tokenizer.h"

namespace pteron::llm {

Result<std::unique_ptr<Tokenizer>> load_sentencepiece(std::string_view data,
                                                      const std::string& name);

}  // namespace pteron::llm
