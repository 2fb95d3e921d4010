#include "compiler/frontend/debug_info.h"

#include <vector>

namespace pteron::compiler::frontend {
namespace {

// Splits "key,path,type" on commas outside brackets, as torch's deserializer does.
std::vector<std::string_view> split_fields(std::string_view item) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < item.size(); ++i) {
    const char c = item[i];
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(item.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(item.substr(start));
  return out;
}

bool inside_torch(std::string_view file) {
  return file.starts_with("torch/") || file.find("-packages/torch/") != std::string_view::npos;
}

}  // namespace

std::string module_path_from_stack(std::string_view stack) {
  if (stack.empty()) return "";
  const size_t last = stack.rfind(';');
  const std::string_view item = last == std::string_view::npos ? stack : stack.substr(last + 1);
  const std::vector<std::string_view> fields = split_fields(item);
  if (fields.size() != 3) return "";
  const std::string_view path = fields[1];
  // Export marks nodes it created itself (runtime asserts) with a placeholder module.
  if (path.starts_with("_empty_nn_module_stack")) return "";
  return std::string(path);
}

std::string source_from_stack_trace(std::string_view trace) {
  std::string best, innermost;
  size_t pos = 0;
  while ((pos = trace.find("File \"", pos)) != std::string_view::npos) {
    const size_t file_start = pos + 6;
    const size_t file_end = trace.find('"', file_start);
    if (file_end == std::string_view::npos) break;
    pos = file_end;
    const std::string_view file = trace.substr(file_start, file_end - file_start);
    const std::string_view line_tag = ", line ";
    if (trace.substr(file_end + 1, line_tag.size()) != line_tag) continue;
    size_t digits = file_end + 1 + line_tag.size();
    const size_t line_start = digits;
    while (digits < trace.size() && trace[digits] >= '0' && trace[digits] <= '9') ++digits;
    if (digits == line_start) continue;
    const std::string frame =
        std::string(file) + ":" + std::string(trace.substr(line_start, digits - line_start));
    innermost = frame;
    if (!inside_torch(file)) best = frame;
  }
  return best.empty() ? innermost : best;
}

}  // namespace pteron::compiler::frontend
