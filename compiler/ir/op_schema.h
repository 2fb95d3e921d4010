// Operator schemas: what each op's arguments and returns are, its out-variant, and for view
// ops the *_copy op that replaces them. The table is generated from torch by
// gen_op_schemas.py (op_schemas.inc); backends may add their own ops at startup.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "compiler/ir/argument.h"
#include "compiler/ir/op_name.h"

namespace pteron::compiler::ir {

// namespace::name.overload, with torch's overload names ("default" for the unnamed one):
// aten::add.Tensor, aten::addmm.default, aten::add.out.
struct OpRef {
  std::string ns;
  std::string name;
  std::string overload = "default";

  // Parses "aten::add.Tensor", "aten::addmm" (overload "default") or the export form
  // "torch.ops.aten.add.Tensor". Throws CompileError on anything else.
  static OpRef parse(std::string_view text);
  // The op a generated identifier names (ops::aten::add_Tensor).
  static OpRef of(OpName op) {
    return {std::string(op.ns()), std::string(op.name()), std::string(op.overload())};
  }
  std::string str() const;  // "aten::add.Tensor"
  bool operator==(const OpRef&) const = default;
  bool operator==(OpName op) const {
    return ns == op.ns() && name == op.name() && overload == op.overload();
  }
};

enum class BaseType : uint8_t {
  Tensor,
  Int,
  Float,
  Bool,
  String,
  Scalar,
  ScalarType,
  MemoryFormat,
  Layout,
  Device,
  Generator,
  Other,  // types pteron never passes (Dimname, Storage, ...): such arguments must be None
};

// A schema type in torch's spelling: "Tensor", "int[2]", "Scalar?", "Tensor?[]", "int[]?".
struct ArgType {
  BaseType base = BaseType::Other;
  bool is_list = false;
  bool optional = false;       // the whole argument may be None
  bool elem_optional = false;  // list elements may be None (Tensor?[])
  int fixed_size = 0;          // int[2] -> 2; 0 when not fixed
  std::string spelling;

  static ArgType parse(std::string_view spelling);
};

struct ArgSchema {
  std::string name;
  ArgType type;
  std::string alias;  // alias annotation: "a!" for out/mutated args, "a" for views, else ""
  bool kwarg_only = false;
  bool is_out = false;  // written by an out-variant (kwarg-only with a "!" alias)
  std::optional<Argument> default_value;
};

struct ReturnSchema {
  std::string name;
  ArgType type;
  std::string alias;
};

struct OpSchema {
  OpRef op;
  std::string text;  // as torch prints it
  std::vector<ArgSchema> args;
  std::vector<ReturnSchema> returns;
  bool is_out_variant = false;
  bool is_view = false;  // returns alias an input (view, permute, slice, ...)
  bool mutates = false;  // writes a non-out input (in-place ops)
  // The out= overload taking this op's inputs (minus dtype/layout/device/pin_memory, which
  // out-variants drop) followed by out tensors; nullptr when torch has none.
  const OpSchema* out_variant = nullptr;
  // For a view op, the functional *_copy op that replaces it (aten::view -> aten::view_copy);
  // its out_variant is what a program calls.
  const OpSchema* view_copy = nullptr;

  // Index of the argument called `name`, or -1.
  int arg_index(std::string_view name) const;
  // The out-variant's arguments that receive outputs, in order (empty unless is_out_variant).
  std::vector<int> out_arg_indices() const;
};

// Owner of the schemas; pointers it hands out stay valid for the registry's life.
class OpSchemaRegistry {
 public:
  // The built-in table (op_schemas.inc), built on first use.
  static OpSchemaRegistry& global();

  const OpSchema* find(const OpRef& op) const;
  const OpSchema* find(std::string_view qualified_name) const;  // "aten::add.Tensor"
  const OpSchema* find(OpName op) const { return find(op.str()); }
  // Adds a schema (e.g. a backend's custom op); replaces none, throws if the name exists.
  // out_variant / view_copy links are given by name and resolved immediately.
  const OpSchema& add(OpSchema schema, std::string_view out_variant = {},
                      std::string_view view_copy = {});
  size_t size() const { return schemas_.size(); }
  std::vector<const OpSchema*> all() const;

 private:
  std::deque<OpSchema> schemas_;
  std::unordered_map<std::string, OpSchema*> by_name_;
};

// Converts a default value written as JSON in op_schemas.inc into an Argument of `type`.
Argument parse_default(const ArgType& type, std::string_view json);

}  // namespace pteron::compiler::ir
