#include "compiler/frontend/export_json.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/compile_error.h"

namespace pteron::compiler::frontend {

const Json& member(const Json& object, std::string_view key, const std::string& what) {
  if (!object.is_object()) throw CompileError(what + ": expected a JSON object");
  auto it = object.find(key);
  if (it == object.end()) {
    throw CompileError(what + ": missing field '" + std::string(key) + "'");
  }
  return *it;
}

std::pair<std::string, const Json*> union_member(const Json& value, const std::string& what) {
  if (!value.is_object() || value.size() != 1) {
    throw CompileError(what + ": expected a one-key union object, got " +
                       value.dump().substr(0, 80));
  }
  return {value.begin().key(), &value.begin().value()};
}

int64_t json_int(const Json& value, const std::string& what) {
  if (!value.is_number_integer()) {
    throw CompileError(what + ": expected an integer, got " + value.dump().substr(0, 80));
  }
  return value.get<int64_t>();
}

double json_double(const Json& value, const std::string& what) {
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw CompileError(what + ": expected a number, got " + value.dump().substr(0, 80));
}

bool json_bool(const Json& value, const std::string& what) {
  if (!value.is_boolean()) {
    throw CompileError(what + ": expected true/false, got " + value.dump().substr(0, 80));
  }
  return value.get<bool>();
}

std::string json_string(const Json& value, const std::string& what) {
  if (!value.is_string()) {
    throw CompileError(what + ": expected a string, got " + value.dump().substr(0, 80));
  }
  return value.get<std::string>();
}

ir::ScalarType scalar_type_from_export(int64_t code, const std::string& what) {
  // torch/_export/serde/schema.py ScalarType -> c10::ScalarType.
  static constexpr std::pair<int, int> kMap[] = {
      {1, 0},   {2, 1},   {3, 2},   {4, 3},   {5, 4},   {6, 5},   {7, 6},
      {8, 7},   {9, 8},   {10, 9},  {11, 10}, {12, 11}, {13, 15}, {28, 27},
      {29, 24}, {30, 23}, {31, 26}, {32, 25}, {33, 44}, {34, 28}, {35, 29},
  };
  for (auto [from, to] : kMap) {
    if (from == code) return static_cast<ir::ScalarType>(to);
  }
  throw CompileError(what + ": unknown dtype code " + std::to_string(code));
}

ir::MemoryFormat memory_format_from_export(int64_t code, const std::string& what) {
  switch (code) {
    case 1:
      return ir::MemoryFormat::Contiguous;
    case 2:
      return ir::MemoryFormat::ChannelsLast;
    case 3:
      return ir::MemoryFormat::ChannelsLast3d;
    case 4:
      return ir::MemoryFormat::Preserve;
  }
  throw CompileError(what + ": unknown memory format code " + std::to_string(code));
}

ir::Layout layout_from_export(int64_t code, const std::string& what) {
  switch (code) {
    case 1:
      return ir::Layout::Sparse;
    case 2:
      return ir::Layout::SparseCsr;
    case 3:
      return ir::Layout::SparseCsc;
    case 4:
      return ir::Layout::SparseBsr;
    case 5:
      return ir::Layout::SparseBsc;
    case 6:
      return ir::Layout::Mkldnn;
    case 7:
      return ir::Layout::Strided;
  }
  throw CompileError(what + ": unknown layout code " + std::to_string(code));
}

void throw_symbolic(const std::string& what, const std::string& detail) {
  throw CompileError(what + " has a symbolic value pteron does not support (" + detail +
                     "); pteron compiles bounded integer sizes (torch.export.Dim with a max)");
}

ir::SymExprPtr read_sym_int(const Json& value, const std::string& what) {
  auto [kind, v] = union_member(value, what);
  if (kind == "as_int") return ir::SymExpr::constant(json_int(*v, what));
  if (kind == "as_expr") {
    const std::string text = json_string(member(*v, "expr_str", what), what + " expr_str");
    return ir::fold_sym_expr(ir::parse_sym_expr(text, what));
  }
  throw CompileError(what + ": unknown SymInt kind '" + kind + "'");
}

namespace {

// A size, stride or offset: its upper and lower bound (equal when static).
ir::SymBounds sym_int(const Json& value, const std::string& what, const ir::SymbolTable* symbols,
                      ir::SymExprPtr* expr_out = nullptr) {
  ir::SymExprPtr e = read_sym_int(value, what);
  if (e->is_constant()) return {e->value, e->value};
  if (symbols == nullptr) throw_symbolic(what, e->str());
  if (expr_out) *expr_out = e;
  const ir::SymBounds b = ir::sym_bounds(*e, *symbols, what);
  return {std::max<int64_t>(b.lo, 0), b.hi};
}

}  // namespace

StridedTensor read_tensor_meta(const Json& meta, const std::string& what,
                               const ir::SymbolTable* symbols) {
  StridedTensor t;
  t.dtype = scalar_type_from_export(json_int(member(meta, "dtype", what), what + " dtype"), what);
  const Json& sizes = member(meta, "sizes", what);
  const Json& strides = member(meta, "strides", what);
  if (!sizes.is_array() || !strides.is_array() || sizes.size() != strides.size()) {
    throw CompileError(what + ": sizes and strides must be lists of equal length");
  }
  if (sizes.size() > 64) throw CompileError(what + ": rank " + std::to_string(sizes.size()));
  bool dynamic = false;
  for (const Json& s : sizes) {
    ir::SymExprPtr e;
    const ir::SymBounds b = sym_int(s, what, symbols, &e);
    t.sizes.push_back(b.hi);
    t.min_sizes.push_back(b.lo);
    t.size_exprs.push_back(e);
    dynamic = dynamic || e != nullptr;
  }
  if (!dynamic) {
    t.min_sizes.clear();
    t.size_exprs.clear();
  }
  // Strides of a dynamic tensor only serve to find its dim order: upper bounds do.
  for (const Json& s : strides) t.strides.push_back(sym_int(s, what, symbols).hi);
  for (size_t i = 0; i < t.sizes.size(); ++i) {
    if (t.sizes[i] < 0 || t.strides[i] < 0) {
      throw CompileError(what + ": negative size or stride in dimension " + std::to_string(i));
    }
  }
  if (auto it = meta.find("storage_offset"); it != meta.end()) {
    // Only a constant's offset is used (static there); a view's data-dependent one (x[k:] for
    // k = n.item()) may have no bound, and an op's output is planned afresh anyway.
    const ir::SymExprPtr offset = read_sym_int(*it, what);
    const bool unbounded = symbols != nullptr && !ir::is_bounded(*offset, *symbols);
    t.storage_offset = unbounded ? 0 : sym_int(*it, what, symbols).hi;
    if (t.storage_offset < 0) throw CompileError(what + ": negative storage offset");
  }
  if (auto it = meta.find("layout"); it != meta.end()) {
    const ir::Layout layout = layout_from_export(json_int(*it, what + " layout"), what);
    if (layout != ir::Layout::Strided) {
      throw CompileError(what + " has layout " + std::string(ir::layout_name(layout)) +
                         "; pteron supports strided (dense) tensors only");
    }
  }
  return t;
}

ir::TensorSpec StridedTensor::spec() const {
  ir::TensorSpec spec;
  spec.dtype = dtype;
  spec.sizes = sizes;
  spec.dim_order = ir::dim_order_from_strides(sizes, strides);
  spec.min_sizes = min_sizes;
  spec.sym_sizes = size_exprs;
  return spec;
}

}  // namespace pteron::compiler::frontend
