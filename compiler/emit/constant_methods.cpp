#include "compiler/emit/constant_methods.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "compiler/compile_error.h"
#include "nlohmann/json.hpp"
#include "runtime/llm/metadata.h"

namespace pteron::compiler {
namespace {

const char* type_name(const ConstantScalar& v) {
  switch (v.index()) {
    case 0:
      return "an int";
    case 1:
      return "a bool";
    case 2:
      return "a float";
    default:
      return "a string";
  }
}

std::string scalar_text(const ConstantScalar& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&v)) {
    char text[40];
    std::snprintf(text, sizeof(text), "%.15g", *d);
    if (std::strtod(text, nullptr) != *d) std::snprintf(text, sizeof(text), "%.17g", *d);
    std::string out = text;
    // 3.0 reads "3.0", not "3" (which would look like an int in a message).
    if (out.find_first_of(".en") == std::string::npos) out += ".0";
    return out;
  }
  return "\"" + std::get<std::string>(v) + "\"";
}

[[noreturn]] void refuse(const ConstantMethod& m, const std::string& why) {
  throw CompileError("constant method '" + m.name + "' (" + describe_constant_method(m) +
                     "): " + why);
}

bool is(const ConstantMethod& m, const char* name) { return m.name == name; }

// The LLM metadata rules runtime/llm/metadata.cpp reads by: refused here, at compile time.
void check_llm_value(const ConstantMethod& m) {
  const bool length =
      is(m, llm::kMaxSeqLen) || is(m, llm::kMaxContextLen) || is(m, llm::kVocabSize);
  const bool size = is(m, llm::kNLayers) || is(m, llm::kNKvHeads) || is(m, llm::kHeadDim) ||
                    is(m, llm::kMaxBatchSize);
  const bool ids = is(m, llm::kEosIds) || is(m, llm::kEosId);
  const bool id = is(m, llm::kBosId) || ids;
  const bool flag =
      is(m, llm::kUseKvCache) || is(m, llm::kUseSdpaWithKvCache) || is(m, llm::kEnableDynamicShape);
  if (!length && !size && !id && !flag) return;
  if (m.list && !ids) refuse(m, "LLM metadata takes one value, not a list");
  if (m.values.size() > llm::kMaxEosIds)
    refuse(m, "at most " + std::to_string(llm::kMaxEosIds) + " ids");
  for (const ConstantScalar& v : m.values) {
    const auto* i = std::get_if<int64_t>(&v);
    if (flag) {
      if (!std::holds_alternative<bool>(v) && !(i && (*i == 0 || *i == 1)))
        refuse(m,
               std::string("a flag is true or false, not ") + type_name(v) + " " + scalar_text(v));
      continue;
    }
    // get_head_dim may be a whole float, as optimum-executorch writes it (hidden / heads).
    const auto* d = std::get_if<double>(&v);
    if (is(m, llm::kHeadDim) && d != nullptr) {
      if (*d < 1 || *d > 1e15 || *d != std::floor(*d))
        refuse(m, "a size is a positive whole number, not " + scalar_text(v));
      continue;
    }
    if (i == nullptr) refuse(m, std::string("an int is needed, not ") + type_name(v));
    if (length && *i <= 0) refuse(m, "a length must be positive");
    if (size && *i <= 0) refuse(m, "a size must be positive");
    if (id && *i < 0) refuse(m, "a token id must not be negative");
  }
}

}  // namespace

std::string constant_method_spec(const ConstantMethod& m) {
  if (!m.list) return "$";
  std::string s = "L";  // built in steps: GCC 12 warns falsely on "L" + to_string
  s += std::to_string(m.values.size());
  for (size_t i = 0; i < m.values.size(); ++i) s += "#1";
  s += "(";
  for (size_t i = 0; i < m.values.size(); ++i) s += i ? ",$" : "$";
  return s + ")";
}

std::string describe_constant_method(const ConstantMethod& m) {
  std::string s = m.name + "=";
  if (!m.list) return s + (m.values.empty() ? "" : scalar_text(m.values[0]));
  s += "[";
  for (size_t i = 0; i < m.values.size(); ++i) s += (i ? ", " : "") + scalar_text(m.values[i]);
  return s + "]";
}

void check_constant_methods(const std::vector<ConstantMethod>& methods,
                            const std::vector<std::string>& program_methods) {
  const std::set<std::string> taken(program_methods.begin(), program_methods.end());
  std::set<std::string> seen;
  for (const ConstantMethod& m : methods) {
    if (m.name.empty()) throw CompileError("a constant method has an empty name");
    if (taken.count(m.name))
      throw CompileError("constant method '" + m.name +
                         "' has the name of a method of the program");
    if (!seen.insert(m.name).second)
      throw CompileError("constant method '" + m.name + "' is given twice");
    if (!m.list && m.values.size() != 1) {
      throw CompileError("constant method '" + m.name + "' has " + std::to_string(m.values.size()) +
                         " values; a scalar has one");
    }
    for (const ConstantScalar& v : m.values) {
      if (const auto* d = std::get_if<double>(&v); d && !std::isfinite(*d))
        refuse(m, "a float must be finite");
    }
    check_llm_value(m);
  }
  // Token ids index the vocabulary (the runtime's reader refuses the same).
  const ConstantMethod* vocab = nullptr;
  for (const ConstantMethod& m : methods) vocab = is(m, llm::kVocabSize) ? &m : vocab;
  if (vocab == nullptr) return;
  const int64_t size = std::get<int64_t>(vocab->values[0]);
  for (const ConstantMethod& m : methods) {
    if (!is(m, llm::kBosId) && !is(m, llm::kEosIds) && !is(m, llm::kEosId)) continue;
    for (const ConstantScalar& v : m.values) {
      if (std::get<int64_t>(v) >= size) {
        refuse(m, "token id " + scalar_text(v) + " is outside the vocabulary (" +
                      describe_constant_method(*vocab) + ")");
      }
    }
  }
}

std::vector<ConstantMethod> derive_llm_metadata(const ir::Graph& graph) {
  std::set<int64_t> cache_lengths;
  std::set<std::vector<int64_t>> cache_shapes;
  size_t caches = 0;
  for (ir::ValueId v : graph.states()) {
    const ir::TensorSpec& spec = graph.value(v).spec;
    if (spec.rank() != 4) continue;
    cache_lengths.insert(spec.sizes[2]);
    cache_shapes.insert(spec.sizes);
    ++caches;
  }
  // No KV cache, or caches of several lengths (sliding windows): no one length to state.
  if (cache_lengths.size() != 1 || *cache_lengths.begin() <= 0) return {};
  std::vector<ConstantMethod> out;
  const auto add = [&](const char* name, ConstantScalar v) {
    out.push_back(ConstantMethod{name, {std::move(v)}, false, true});
  };
  const int64_t cache_length = *cache_lengths.begin();
  // ExecuTorch's runner: get_max_seq_len is the most tokens one call takes (its prefill chunk),
  // get_max_context_len the positions the cache holds. The token bound is dim 1 of the first
  // input (input_ids / tokens [1, T]); a program of another form gets the cache length.
  int64_t tokens_per_call = cache_length;
  if (!graph.inputs().empty()) {
    const ir::TensorSpec& ids = graph.value(graph.inputs()[0]).spec;
    if (ids.rank() == 2 && ids.sizes[1] > 0) tokens_per_call = std::min(ids.sizes[1], cache_length);
  }
  add(llm::kMaxSeqLen, tokens_per_call);
  add(llm::kMaxContextLen, cache_length);
  add(llm::kUseKvCache, true);
  // The caches are transformers' [batch, heads, positions, head_dim], not the [batch,
  // positions, heads, head_dim] of ExecuTorch's sdpa_with_kv_cache op.
  add(llm::kUseSdpaWithKvCache, false);
  if (!graph.outputs().empty()) {
    const ir::TensorSpec& logits = graph.value(graph.outputs()[0]).spec;
    const bool dynamic_vocab =
        logits.is_dynamic() && logits.rank() == 3 && logits.min_sizes[2] != logits.sizes[2];
    if (logits.rank() == 3 && is_floating(logits.dtype) && logits.sizes[2] > 0 && !dynamic_vocab)
      add(llm::kVocabSize, logits.sizes[2]);
  }
  bool dynamic = false;
  for (ir::ValueId v : graph.inputs()) dynamic = dynamic || graph.value(v).spec.is_dynamic();
  add(llm::kEnableDynamicShape, dynamic);
  // A key and a value cache [batch, kv_heads, positions, head_dim] per layer, all alike (as
  // transformers' static cache has them): the shape ExecuTorch's and optimum's exporters state.
  if (cache_shapes.size() == 1 && caches % 2 == 0) {
    const std::vector<int64_t>& shape = *cache_shapes.begin();
    add(llm::kNLayers, static_cast<int64_t>(caches / 2));
    if (shape[1] > 0) add(llm::kNKvHeads, shape[1]);
    if (shape[3] > 0) add(llm::kHeadDim, shape[3]);
  }
  return out;
}

std::vector<ConstantMethod> merge_constant_methods(std::vector<ConstantMethod> derived,
                                                   const std::vector<ConstantMethod>& given) {
  std::set<std::string> names;
  for (const ConstantMethod& m : given) names.insert(m.name);
  std::vector<ConstantMethod> out;
  for (ConstantMethod& m : derived) {
    if (!names.count(m.name)) out.push_back(std::move(m));
  }
  out.insert(out.end(), given.begin(), given.end());
  return out;
}

std::vector<ConstantMethod> constant_methods_from_json(const std::string& text,
                                                       const std::string& where) {
  const nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object())
    throw CompileError(where + ": not a JSON object {name: value or list of values}");
  std::vector<ConstantMethod> out;
  for (const auto& item : j.items()) {
    // Named, not a structured binding: lambdas capture structured bindings only from C++20 on
    // in clang 16+, and the sanitizer build uses Debian's clang 14.
    const std::string& name = item.key();
    const nlohmann::ordered_json& value = item.value();
    const auto scalar = [&](const nlohmann::ordered_json& v) -> ConstantScalar {
      if (v.is_boolean()) return v.get<bool>();
      if (v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX))
        return v.get<int64_t>();
      if (v.is_number_float()) return v.get<double>();
      if (v.is_string()) return v.get<std::string>();
      throw CompileError(where + ": constant method '" + name + "': " + v.dump() +
                         " is not an int, bool, float or string");
    };
    ConstantMethod m;
    m.name = name;
    m.list = value.is_array();
    if (m.list) {
      for (const nlohmann::ordered_json& v : value) m.values.push_back(scalar(v));
    } else {
      m.values.push_back(scalar(value));
    }
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  return s.substr(a, s.find_last_not_of(" \t") - a + 1);
}

ConstantScalar parse_scalar(const std::string& text, const std::string& whole) {
  const std::string s = trim(text);
  if (s == "true") return true;
  if (s == "false") return false;
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (*end == '\0' && errno == 0) return static_cast<int64_t>(i);
    if (*end == '\0')
      throw CompileError("--constant-method " + whole + ": " + s + " is beyond int64");
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (*end == '\0' && errno == 0 && std::isfinite(d)) return d;
  }
  throw CompileError("--constant-method " + whole + ": '" + s +
                     "' is not an int, true/false, a float, a \"quoted string\" or a list [a,b]");
}

}  // namespace

ConstantMethod parse_constant_method(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw CompileError("--constant-method " + text + ": expected NAME=VALUE");
  ConstantMethod m;
  m.name = text.substr(0, eq);
  const std::string value = trim(text.substr(eq + 1));
  if (!value.empty() && value.front() == '[') {
    if (value.back() != ']')
      throw CompileError("--constant-method " + text + ": the list has no closing ']'");
    m.list = true;
    const std::string inner = value.substr(1, value.size() - 2);
    if (trim(inner).empty()) return m;
    size_t start = 0;
    while (true) {
      const size_t comma = inner.find(',', start);
      m.values.push_back(parse_scalar(inner.substr(start, comma - start), text));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return m;
  }
  m.values.push_back(parse_scalar(value, text));
  return m;
}

}  // namespace pteron::compiler
