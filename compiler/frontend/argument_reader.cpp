#include "compiler/frontend/argument_reader.h"

#include <optional>

#include "compiler/compile_error.h"

namespace pteron::compiler::frontend {
namespace {

using ir::Argument;
using ir::BaseType;

class Reader {
 public:
  Reader(const ir::ArgSchema& schema, const ValueResolver& values, const std::string& what)
      : type_(schema.type), values_(values), what_(what) {}

  Argument read(const Json& arg) {
    auto [kind, value] = union_member(arg, what_);
    kind_ = kind;
    const Json& v = *value;
    if (kind == "as_none") return none();
    if (kind == "as_tensor") return tensor(v);
    if (kind == "as_optional_tensor") {
      auto [inner, inner_value] = union_member(v, what_);
      if (inner == "as_none") return none();
      if (inner == "as_tensor") return tensor(*inner_value);
      return mismatch();
    }
    if (kind == "as_tensors") return tensors(v, false);
    if (kind == "as_optional_tensors") return tensors(v, true);
    if (kind == "as_int") return integer(json_int(v, what_));
    if (kind == "as_float") return floating(json_double(v, what_));
    if (kind == "as_bool") return boolean(json_bool(v, what_));
    if (kind == "as_string") {
      if (type_.base != BaseType::String || type_.is_list) return mismatch();
      return Argument(json_string(v, what_));
    }
    if (kind == "as_ints") return int_list(v);
    if (kind == "as_floats") return float_list(v);
    if (kind == "as_bools") return bool_list(v);
    if (kind == "as_scalar_type") {
      if (!scalar_of(BaseType::ScalarType)) return mismatch();
      return Argument(scalar_type_from_export(json_int(v, what_), what_));
    }
    if (kind == "as_memory_format") {
      if (!scalar_of(BaseType::MemoryFormat)) return mismatch();
      return Argument(memory_format_from_export(json_int(v, what_), what_));
    }
    if (kind == "as_layout") {
      if (!scalar_of(BaseType::Layout)) return mismatch();
      return Argument(layout_from_export(json_int(v, what_), what_));
    }
    if (kind == "as_device") {
      if (!scalar_of(BaseType::Device)) return mismatch();
      ir::Device device{json_string(member(v, "type", what_), what_)};
      if (auto it = v.find("index"); it != v.end() && !it->is_null()) {
        device.index = json_int(*it, what_);
      }
      return Argument(device);
    }
    // SymInt/SymFloat/SymBool arguments: literal values are fine; named SymInts are
    // expressions over the graph's symbols, computed at run time.
    if (kind == "as_sym_int") {
      if (ir::SymExprPtr e = symbolic(v)) {
        if (scalar_of(BaseType::Tensor) && values_.wrap_sym_int) {
          return Argument(ir::TensorRef{values_.wrap_sym_int(e)});
        }
        // Int and Scalar positions (arange's end): the kernel reads an Int value either way.
        if (!scalar_of(BaseType::Int) && !scalar_of(BaseType::Scalar)) {
          throw CompileError(
              what_ + " is the symbolic int " + e->str() + " but the schema expects " +
              type_.spelling +
              "; pteron takes symbolic ints only in int, Scalar and Tensor positions");
        }
        return Argument(ir::SymInt{e});
      }
      return read(literal(v));
    }
    if (kind == "as_sym_float" || kind == "as_sym_bool") {
      if (std::optional<ir::ValueId> number = lifted(v)) return lifted_argument(*number);
      return read(literal(v));
    }
    if (kind == "as_sym_ints") {
      if (!v.is_array()) throw CompileError(what_ + ": " + kind + " is not a list");
      ir::SymIntList list;
      bool any_symbolic = false;
      for (const Json& item : v) {
        if (ir::SymExprPtr e = symbolic(item)) {
          list.items.push_back({0, e});
          any_symbolic = true;
        } else {
          list.items.push_back({json_int(literal(item).begin().value(), what_), nullptr});
        }
      }
      if (!any_symbolic) {
        Json items = Json::array();
        for (const ir::SymIntItem& item : list.items) items.push_back(item.value);
        return read(Json{{"as_ints", items}});
      }
      if (!list_of(BaseType::Int)) return mismatch();
      return Argument(std::move(list));
    }
    if (kind == "as_sym_floats" || kind == "as_sym_bools") {
      if (!v.is_array()) throw CompileError(what_ + ": " + kind + " is not a list");
      Json items = Json::array();
      std::string element_kind;
      for (const Json& item : v) {
        Json lit = literal(item);
        element_kind = lit.begin().key();
        items.push_back(lit.begin().value());
      }
      const std::string list_kind = element_kind == "as_float"  ? "as_floats"
                                    : element_kind == "as_bool" ? "as_bools"
                                                                : "as_ints";
      return read(Json{{list_kind, items}});
    }
    static const char* kUnsupported[] = {
        "as_strings",     "as_graph",          "as_custom_obj", "as_operator",
        "as_complex",     "as_nested_tensors", "as_int_lists",  "as_string_to_argument",
        "as_float_lists",
    };
    for (const char* unsupported : kUnsupported) {
      if (kind == unsupported) {
        throw CompileError(what_ + " is a " + kind + " argument, which pteron does not support");
      }
    }
    throw CompileError(what_ + " has unknown argument kind '" + kind + "'");
  }

 private:
  bool scalar_of(BaseType base) const { return type_.base == base && !type_.is_list; }
  bool list_of(BaseType base) const { return type_.base == base && type_.is_list; }

  [[noreturn]] Argument mismatch() const {
    throw CompileError(what_ + " is " + kind_ + " but the schema expects " + type_.spelling);
  }

  // A named SymInt's expression (nullptr for a literal, or a name that folds to a constant,
  // which then reads as that literal).
  ir::SymExprPtr symbolic(const Json& sym) {
    auto [kind, value] = union_member(sym, what_);
    if (kind != "as_name") return nullptr;
    if (!values_.sym_int) throw_symbolic(what_, "symbol " + value->dump());
    ir::SymExprPtr e = values_.sym_int(json_string(*value, what_));
    if (e->is_constant()) {
      folded_ = e->value;
      return nullptr;
    }
    return e;
  }

  // A named SymFloat / SymBool the program computes as a 0-dim tensor (ValueResolver::lifted).
  std::optional<ir::ValueId> lifted(const Json& sym) {
    auto [kind, value] = union_member(sym, what_);
    if (kind != "as_name" || !values_.lifted) return std::nullopt;
    return values_.lifted(json_string(*value, what_));
  }

  // Such a value where the schema wants a Tensor, or a Scalar, whose op the caller then
  // replaces by its Tensor overload (the argument is a tensor either way).
  Argument lifted_argument(ir::ValueId number) const {
    if (!scalar_of(BaseType::Tensor) && !scalar_of(BaseType::Scalar)) {
      throw CompileError(what_ + " is a value read from a tensor with item(), but the schema " +
                         "expects " + type_.spelling + "; pteron passes such values where " +
                         "an op takes a Tensor or a Scalar");
    }
    return Argument(ir::TensorRef{number});
  }

  // {"as_name": "s0"} is a symbol; {"as_int": 3} a literal, returned as an Argument union.
  Json literal(const Json& sym) {
    auto [kind, value] = union_member(sym, what_);
    if (kind == "as_name") {
      if (folded_) {  // a named SymInt symbolic() folded to a constant
        const int64_t v = *folded_;
        folded_.reset();
        return Json{{"as_int", v}};
      }
      throw_symbolic(what_, "symbol " + value->dump());
    }
    if (kind != "as_int" && kind != "as_float" && kind != "as_bool") {
      throw CompileError(what_ + " has unknown symbolic kind '" + kind + "'");
    }
    return Json{{kind, *value}};
  }

  Argument none() const {
    if (type_.optional || type_.base == BaseType::Generator || type_.base == BaseType::Other) {
      return Argument(ir::None{});
    }
    throw CompileError(what_ + " is None but its type " + type_.spelling + " is not optional");
  }

  ir::ValueId name_of(const Json& tensor_arg) const {
    return values_.lookup(json_string(member(tensor_arg, "name", what_), what_));
  }

  Argument tensor(const Json& v) {
    if (!scalar_of(BaseType::Tensor)) return mismatch();
    return Argument(ir::TensorRef{name_of(v)});
  }

  Argument tensors(const Json& v, bool optional_items) {
    if (!list_of(BaseType::Tensor) || !v.is_array()) return mismatch();
    std::vector<ir::ValueId> ids;
    for (const Json& item : v) {
      if (!optional_items) {
        ids.push_back(name_of(item));
        continue;
      }
      auto [kind, value] = union_member(item, what_);
      if (kind == "as_none") {
        ids.push_back(ir::kNoValue);
      } else if (kind == "as_tensor") {
        ids.push_back(name_of(*value));
      } else {
        throw CompileError(what_ + ": optional tensor list item has kind '" + kind + "'");
      }
    }
    if (type_.elem_optional) return Argument(ir::OptionalTensorList{std::move(ids)});
    for (ir::ValueId id : ids) {
      if (id == ir::kNoValue) {
        throw CompileError(what_ + ": None inside a " + type_.spelling + " list");
      }
    }
    return Argument(ir::TensorList{std::move(ids)});
  }

  Argument wrapped(ir::Scalar v) { return Argument(ir::TensorRef{values_.wrap_scalar(v)}); }

  Argument integer(int64_t v) {
    if (scalar_of(BaseType::Int)) return Argument(v);
    if (scalar_of(BaseType::Tensor)) return wrapped(ir::Scalar{v});
    if (scalar_of(BaseType::Float)) return Argument(static_cast<double>(v));
    if (scalar_of(BaseType::Scalar)) return Argument(ir::Scalar{v});
    // int[2] given one int means that int for every entry (TorchScript's rule).
    if (list_of(BaseType::Int) && type_.fixed_size > 0) {
      return Argument(std::vector<int64_t>(type_.fixed_size, v));
    }
    return mismatch();
  }

  Argument floating(double v) {
    if (scalar_of(BaseType::Float)) return Argument(v);
    if (scalar_of(BaseType::Tensor)) return wrapped(ir::Scalar{v});
    if (scalar_of(BaseType::Scalar)) return Argument(ir::Scalar{v});
    if (list_of(BaseType::Float) && type_.fixed_size > 0) {
      return Argument(std::vector<double>(type_.fixed_size, v));
    }
    return mismatch();
  }

  Argument boolean(bool v) {
    if (scalar_of(BaseType::Bool)) return Argument(v);
    if (scalar_of(BaseType::Tensor)) return wrapped(ir::Scalar{v});
    if (scalar_of(BaseType::Scalar)) return Argument(ir::Scalar{v});
    return mismatch();
  }

  Argument int_list(const Json& v) {
    if (!v.is_array()) return mismatch();
    if (list_of(BaseType::Int)) {
      std::vector<int64_t> out;
      for (const Json& x : v) out.push_back(json_int(x, what_));
      return Argument(std::move(out));
    }
    if (list_of(BaseType::Float)) return float_list(v);
    return mismatch();
  }

  Argument float_list(const Json& v) {
    if (!list_of(BaseType::Float) || !v.is_array()) return mismatch();
    std::vector<double> out;
    for (const Json& x : v) out.push_back(json_double(x, what_));
    return Argument(std::move(out));
  }

  Argument bool_list(const Json& v) {
    if (!list_of(BaseType::Bool) || !v.is_array()) return mismatch();
    std::vector<bool> out;
    for (const Json& x : v) out.push_back(json_bool(x, what_));
    return Argument(std::move(out));
  }

  const ir::ArgType& type_;
  const ValueResolver& values_;
  const std::string& what_;
  std::string kind_;
  std::optional<int64_t> folded_;
};

}  // namespace

ir::Argument read_argument(const Json& arg, const ir::ArgSchema& schema,
                           const ValueResolver& values, const std::string& what) {
  return Reader(schema, values, what).read(arg);
}

}  // namespace pteron::compiler::frontend
