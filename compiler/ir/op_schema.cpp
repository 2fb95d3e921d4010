#include "compiler/ir/op_schema.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "compiler/compile_error.h"

namespace pteron::compiler::ir {

OpRef OpRef::parse(std::string_view text) {
  const std::string original(text);
  OpRef ref;
  if (text.starts_with("torch.ops.")) {
    // Export form: torch.ops.<ns>.<name>.<overload>
    text.remove_prefix(10);
    const size_t dot1 = text.find('.');
    const size_t dot2 = dot1 == std::string_view::npos ? dot1 : text.find('.', dot1 + 1);
    if (dot2 == std::string_view::npos || text.find('.', dot2 + 1) != std::string_view::npos) {
      throw CompileError("malformed operator name '" + original + "'");
    }
    ref.ns = text.substr(0, dot1);
    ref.name = text.substr(dot1 + 1, dot2 - dot1 - 1);
    ref.overload = text.substr(dot2 + 1);
  } else {
    const size_t colons = text.find("::");
    if (colons == std::string_view::npos) {
      throw CompileError("malformed operator name '" + original + "'");
    }
    ref.ns = text.substr(0, colons);
    std::string_view rest = text.substr(colons + 2);
    const size_t dot = rest.find('.');
    ref.name = rest.substr(0, dot);
    if (dot != std::string_view::npos) ref.overload = rest.substr(dot + 1);
  }
  if (ref.ns.empty() || ref.name.empty() || ref.overload.empty()) {
    throw CompileError("malformed operator name '" + original + "'");
  }
  return ref;
}

std::string OpRef::str() const { return ns + "::" + name + "." + overload; }

ArgType ArgType::parse(std::string_view spelling) {
  ArgType t;
  t.spelling = spelling;
  std::string_view s = spelling;
  if (s.ends_with("?")) {
    t.optional = true;
    s.remove_suffix(1);
  }
  if (s.ends_with("]")) {
    const size_t open = s.rfind('[');
    const std::string_view n = s.substr(open + 1, s.size() - open - 2);
    t.is_list = true;
    for (char c : n) t.fixed_size = t.fixed_size * 10 + (c - '0');
    s = s.substr(0, open);
    if (s.ends_with("?")) {
      t.elem_optional = true;
      s.remove_suffix(1);
    }
  }
  static const std::unordered_map<std::string_view, BaseType> kBases = {
      {"Tensor", BaseType::Tensor},
      {"int", BaseType::Int},
      {"float", BaseType::Float},
      {"bool", BaseType::Bool},
      {"str", BaseType::String},
      {"Scalar", BaseType::Scalar},
      {"ScalarType", BaseType::ScalarType},
      {"MemoryFormat", BaseType::MemoryFormat},
      {"Layout", BaseType::Layout},
      {"Device", BaseType::Device},
      {"Generator", BaseType::Generator},
  };
  auto it = kBases.find(s);
  t.base = it == kBases.end() ? BaseType::Other : it->second;
  return t;
}

int OpSchema::arg_index(std::string_view arg_name) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == arg_name) return static_cast<int>(i);
  }
  return -1;
}

std::vector<int> OpSchema::out_arg_indices() const {
  std::vector<int> indices;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].is_out) indices.push_back(static_cast<int>(i));
  }
  return indices;
}

namespace {

double json_double(const nlohmann::json& j) {
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  }
  return j.get<double>();
}

Argument scalar_default(const ArgType& type, const nlohmann::json& j) {
  switch (type.base) {
    case BaseType::Int:
      return Argument(j.get<int64_t>());
    case BaseType::Float:
      return Argument(json_double(j));
    case BaseType::Bool:
      return Argument(j.get<bool>());
    case BaseType::String:
      return Argument(j.get<std::string>());
    case BaseType::ScalarType:
      return Argument(static_cast<ScalarType>(j.get<int>()));
    case BaseType::MemoryFormat:
      return Argument(static_cast<MemoryFormat>(j.get<int>()));
    case BaseType::Layout:
      return Argument(static_cast<Layout>(j.get<int>()));
    case BaseType::Device:
      return Argument(Device{j.get<std::string>()});
    case BaseType::Scalar:
      if (j.is_boolean()) return Argument(Scalar{j.get<bool>()});
      if (j.is_number_integer()) return Argument(Scalar{j.get<int64_t>()});
      return Argument(Scalar{json_double(j)});
    default:
      break;
  }
  throw CompileError("schema default " + j.dump() + " has unsupported type " + type.spelling);
}

}  // namespace

Argument parse_default(const ArgType& type, std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  if (j.is_null()) return Argument(None{});
  if (!type.is_list) return scalar_default(type, j);
  if (!j.is_array()) throw CompileError("schema default " + j.dump() + " is not a list");
  switch (type.base) {
    case BaseType::Int:
      return Argument(j.get<std::vector<int64_t>>());
    case BaseType::Bool:
      return Argument(j.get<std::vector<bool>>());
    case BaseType::Float: {
      std::vector<double> v;
      for (const auto& e : j) v.push_back(json_double(e));
      return Argument(std::move(v));
    }
    case BaseType::Tensor:
      if (j.empty()) return Argument(TensorList{});
      break;
    default:
      break;
  }
  throw CompileError("schema default " + j.dump() + " has unsupported type " + type.spelling);
}

namespace {

enum SchemaFlags { kOutVariant = 1, kView = 2, kMutates = 4 };

// One row of op_schemas.inc; the table is data, so it compiles fast and loads in one loop.
struct SchemaRow {
  enum Kind : uint8_t { kOp, kArg, kRet, kEnd } kind;
  const char* a;  // op: qualified name; arg/ret: name
  const char* b;  // op: schema text;    arg/ret: type
  const char* c;  // op: out-variant;    arg/ret: alias
  const char* d;  // op: view copy;      arg: default as JSON or nullptr
  int e;          // op: flags;          arg: kwarg-only
};

constexpr SchemaRow kSchemaRows[] = {
#define PTERON_OP(qualified, text, flags, out, copy) \
  {SchemaRow::kOp, qualified, text, out, copy, flags},
#define PTERON_ARG(name, type, alias, default_json, kwarg_only) \
  {SchemaRow::kArg, name, type, alias, default_json, kwarg_only},
#define PTERON_RET(name, type, alias) {SchemaRow::kRet, name, type, alias, nullptr, 0},
#define PTERON_END() {SchemaRow::kEnd, nullptr, nullptr, nullptr, nullptr, 0},
#include "compiler/ir/op_schemas.inc"
#undef PTERON_OP
#undef PTERON_ARG
#undef PTERON_RET
#undef PTERON_END
};

}  // namespace

OpSchemaRegistry& OpSchemaRegistry::global() {
  static OpSchemaRegistry* registry = [] {
    auto* r = new OpSchemaRegistry();  // never destroyed: schemas outlive every user
    std::vector<std::pair<OpSchema*, const SchemaRow*>> links;
    OpSchema* current = nullptr;
    for (const SchemaRow& row : kSchemaRows) {
      switch (row.kind) {
        case SchemaRow::kOp: {
          OpSchema s;
          s.op = OpRef::parse(row.a);
          s.text = row.b;
          s.is_out_variant = (row.e & kOutVariant) != 0;
          s.is_view = (row.e & kView) != 0;
          s.mutates = (row.e & kMutates) != 0;
          current = &r->schemas_.emplace_back(std::move(s));
          r->by_name_.emplace(current->op.str(), current);
          links.emplace_back(current, &row);
          break;
        }
        case SchemaRow::kArg: {
          ArgSchema a;
          a.name = row.a;
          a.type = ArgType::parse(row.b);
          a.alias = row.c;
          a.kwarg_only = row.e != 0;
          a.is_out = current->is_out_variant && a.kwarg_only && a.alias.ends_with('!');
          if (row.d != nullptr) a.default_value = parse_default(a.type, row.d);
          current->args.push_back(std::move(a));
          break;
        }
        case SchemaRow::kRet:
          current->returns.push_back(ReturnSchema{row.a, ArgType::parse(row.b), row.c});
          break;
        case SchemaRow::kEnd:
          current = nullptr;
          break;
      }
    }
    for (const auto& [schema, row] : links) {
      if (*row->c) schema->out_variant = r->find(row->c);
      if (*row->d) schema->view_copy = r->find(row->d);
    }
    return r;
  }();
  return *registry;
}

const OpSchema* OpSchemaRegistry::find(const OpRef& op) const { return find(op.str()); }

const OpSchema* OpSchemaRegistry::find(std::string_view qualified_name) const {
  auto it = by_name_.find(std::string(qualified_name));
  return it == by_name_.end() ? nullptr : it->second;
}

const OpSchema& OpSchemaRegistry::add(OpSchema schema, std::string_view out_variant,
                                      std::string_view view_copy) {
  const std::string name = schema.op.str();
  if (by_name_.contains(name)) throw CompileError("operator schema " + name + " already exists");
  auto resolve = [&](std::string_view target) -> const OpSchema* {
    if (target.empty()) return nullptr;
    const OpSchema* found = find(target);
    if (!found) {
      throw CompileError("operator schema " + name + " links to unknown op " + std::string(target));
    }
    return found;
  };
  schema.out_variant = resolve(out_variant);
  schema.view_copy = resolve(view_copy);
  for (ArgSchema& a : schema.args) {
    a.is_out = schema.is_out_variant && a.kwarg_only && a.alias.ends_with('!');
  }
  OpSchema& stored = schemas_.emplace_back(std::move(schema));
  by_name_.emplace(name, &stored);
  return stored;
}

std::vector<const OpSchema*> OpSchemaRegistry::all() const {
  std::vector<const OpSchema*> out;
  for (const OpSchema& s : schemas_) out.push_back(&s);
  return out;
}

}  // namespace pteron::compiler::ir
