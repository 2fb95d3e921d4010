// OpName: an operator identifier the compiler checks, not a string it trusts. The generated
// compiler/ir/op_names.h (gen_op_names.py, from op_schemas.inc at build time) declares one per
// schema, named as PyTorch's C++ at::_ops names them: `ops::aten::add_Tensor` is
// aten::add.Tensor, `ops::aten::addmm` its default overload, `ops::aten::add_out` the out=
// overload. A misspelt op is then a compile error instead of a pattern that never matches.
#pragma once

#include <functional>
#include <map>
#include <string_view>

namespace pteron::compiler::ir {

class OpName {
 public:
  // "ns::name.overload", as a literal: only the generated header and a backend declaring the
  // ops it registers itself (cortex_m::, pteron::) write these.
  consteval explicit OpName(const char* qualified) : text_(qualified) {
    const size_t colons = text_.find("::");
    const size_t dot = text_.find('.', colons == std::string_view::npos ? 0 : colons + 2);
    // Not a valid constant expression when malformed: a compile error, not a bad name.
    if (colons == std::string_view::npos || colons == 0 || dot == std::string_view::npos ||
        dot == colons + 2 || dot + 1 == text_.size()) {
      throw "OpName: expected ns::name.overload";
    }
    ns_len_ = colons;
    name_len_ = dot - colons - 2;
  }

  constexpr std::string_view str() const { return text_; }      // "aten::add.Tensor"
  constexpr const char* c_str() const { return text_.data(); }  // a literal: NUL-terminated
  // For lookups by text (OpSchemaRegistry::find, tables keyed by qualified name).
  constexpr operator std::string_view() const { return text_; }
  constexpr std::string_view ns() const { return text_.substr(0, ns_len_); }
  constexpr std::string_view name() const { return text_.substr(ns_len_ + 2, name_len_); }
  constexpr std::string_view overload() const { return text_.substr(ns_len_ + 3 + name_len_); }

  friend constexpr bool operator==(OpName a, OpName b) { return a.text_ == b.text_; }
  // Against a qualified name held as text ("aten::add.Tensor", e.g. OpRef::str()).
  friend constexpr bool operator==(OpName a, std::string_view qualified) {
    return a.text_ == qualified;
  }

 private:
  std::string_view text_;
  size_t ns_len_ = 0;
  size_t name_len_ = 0;
};

// A table keyed by op: OpName keys (ops::aten::add_Tensor, checked when compiled), looked up
// by the qualified name a node carries (OpRef::str()).
template <typename V>
using OpTable = std::map<std::string_view, V, std::less<>>;

}  // namespace pteron::compiler::ir
