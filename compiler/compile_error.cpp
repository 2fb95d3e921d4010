#include "compiler/compile_error.h"

namespace pteron::compiler {
namespace {

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

CompileError::CompileError(const std::string& message) : std::runtime_error(one_line(message)) {}

}  // namespace pteron::compiler
