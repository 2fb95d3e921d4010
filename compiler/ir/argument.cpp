#include "compiler/ir/argument.h"

#include <cmath>
#include <cstdio>

#include "compiler/compile_error.h"

namespace pteron::compiler::ir {

double Scalar::to_double() const {
  if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&value)) return *d;
  return std::get<bool>(value) ? 1.0 : 0.0;
}

double Argument::to_double() const {
  if (const auto* d = std::get_if<double>(&value_)) return *d;
  if (const auto* i = std::get_if<int64_t>(&value_)) return static_cast<double>(*i);
  return get<Scalar>().to_double();
}

void Argument::throw_kind_mismatch(ArgKind expected) const {
  throw CompileError("argument is " + std::string(arg_kind_name(kind())) + ", expected " +
                     std::string(arg_kind_name(expected)));
}

void Argument::for_each_value(const std::function<void(ValueId)>& fn) const {
  if (const auto* t = std::get_if<TensorRef>(&value_)) {
    fn(t->id);
  } else if (const auto* l = std::get_if<TensorList>(&value_)) {
    for (ValueId id : l->ids) fn(id);
  } else if (const auto* o = std::get_if<OptionalTensorList>(&value_)) {
    for (ValueId id : o->ids) {
      if (id != kNoValue) fn(id);
    }
  }
}

int Argument::replace_value(ValueId from, ValueId to) {
  int count = 0;
  auto rewrite = [&](ValueId& id) {
    if (id == from) {
      id = to;
      ++count;
    }
  };
  if (auto* t = std::get_if<TensorRef>(&value_)) {
    rewrite(t->id);
  } else if (auto* l = std::get_if<TensorList>(&value_)) {
    for (ValueId& id : l->ids) rewrite(id);
  } else if (auto* o = std::get_if<OptionalTensorList>(&value_)) {
    for (ValueId& id : o->ids) rewrite(id);
  }
  return count;
}

std::string_view arg_kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::None:
      return "None";
    case ArgKind::Int:
      return "int";
    case ArgKind::Float:
      return "float";
    case ArgKind::Bool:
      return "bool";
    case ArgKind::String:
      return "str";
    case ArgKind::ScalarType:
      return "ScalarType";
    case ArgKind::MemoryFormat:
      return "MemoryFormat";
    case ArgKind::Layout:
      return "Layout";
    case ArgKind::Device:
      return "Device";
    case ArgKind::IntList:
      return "int[]";
    case ArgKind::FloatList:
      return "float[]";
    case ArgKind::BoolList:
      return "bool[]";
    case ArgKind::Tensor:
      return "Tensor";
    case ArgKind::TensorList:
      return "Tensor[]";
    case ArgKind::OptionalTensorList:
      return "Tensor?[]";
    case ArgKind::Scalar:
      return "Scalar";
    case ArgKind::SymInt:
      return "SymInt";
    case ArgKind::SymIntList:
      return "SymInt[]";
  }
  return "?";
}

namespace {

std::string format_double(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  std::string s = buf;
  // Keep floats recognisable as floats ("1.0", not "1").
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

template <typename T, typename F>
std::string join(const std::vector<T>& items, F&& format) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) s += ", ";
    s += format(items[i]);
  }
  return s + "]";
}

}  // namespace

std::string to_string(const Argument& arg, const std::function<std::string(ValueId)>& value_name) {
  auto name = [&](ValueId id) { return id == kNoValue ? std::string("None") : value_name(id); };
  return std::visit(
      [&](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, None>) {
          return "None";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return format_double(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "True" : "False";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + v + "\"";
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          return dtype_name(v);
        } else if constexpr (std::is_same_v<T, MemoryFormat>) {
          return std::string(memory_format_name(v));
        } else if constexpr (std::is_same_v<T, Layout>) {
          return std::string(layout_name(v));
        } else if constexpr (std::is_same_v<T, Device>) {
          return v.index < 0 ? v.type : v.type + ":" + std::to_string(v.index);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          return join(v, [](int64_t x) { return std::to_string(x); });
        } else if constexpr (std::is_same_v<T, std::vector<double>>) {
          return join(v, format_double);
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          return join(v, [](bool x) { return std::string(x ? "True" : "False"); });
        } else if constexpr (std::is_same_v<T, TensorRef>) {
          return name(v.id);
        } else if constexpr (std::is_same_v<T, TensorList> ||
                             std::is_same_v<T, OptionalTensorList>) {
          return join(v.ids, name);
        } else if constexpr (std::is_same_v<T, SymInt>) {
          return v.expr->str();
        } else if constexpr (std::is_same_v<T, SymIntList>) {
          return join(v.items, [](const SymIntItem& x) {
            return x.expr ? x.expr->str() : std::to_string(x.value);
          });
        } else {
          static_assert(std::is_same_v<T, Scalar>);
          return std::visit(
              [](auto s) -> std::string {
                using S = decltype(s);
                if constexpr (std::is_same_v<S, bool>)
                  return s ? "True" : "False";
                else if constexpr (std::is_same_v<S, double>)
                  return format_double(s);
                else
                  return std::to_string(s);
              },
              v.value);
        }
      },
      arg.variant());
}

}  // namespace pteron::compiler::ir
