// The compiler's one exception type: a diagnostic for the user, not a crash.
#pragma once

#include <stdexcept>
#include <string>

namespace pteron::compiler {

// Thrown for bad input and unsupported programs. The message is one line naming the thing at
// fault (archive entry, node, op, argument) and the source location when known; newlines in
// the text given are folded into spaces so every caller gets a one-line message.
class CompileError : public std::runtime_error {
 public:
  explicit CompileError(const std::string& message);
};

}  // namespace pteron::compiler
