// Reading torch.export's JSON encoding (torch/_export/serde/schema.py, schema version 8):
// unions are one-key objects, enums are integers in export's own numbering, ±inf floats are
// strings. Every accessor throws CompileError with the caller's `what` on malformed input.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/sym_expr.h"
#include "compiler/ir/tensor_spec.h"

namespace pteron::compiler::frontend {

using Json = nlohmann::json;

// A required member of an object.
const Json& member(const Json& object, std::string_view key, const std::string& what);
// The key and value of a union ({"as_tensor": {...}}).
std::pair<std::string, const Json*> union_member(const Json& value, const std::string& what);
int64_t json_int(const Json& value, const std::string& what);
double json_double(const Json& value, const std::string& what);  // numbers, "Infinity", "NaN"
bool json_bool(const Json& value, const std::string& what);
std::string json_string(const Json& value, const std::string& what);

// Export enum numbering -> c10 numbering.
ir::ScalarType scalar_type_from_export(int64_t code, const std::string& what);
ir::MemoryFormat memory_format_from_export(int64_t code, const std::string& what);
ir::Layout layout_from_export(int64_t code, const std::string& what);

// A TensorMeta: dtype, sizes, strides, storage offset. Symbolic sizes (bounded dynamic
// shapes) are read as their upper bounds, with the lower bounds in min_sizes; without
// `symbols` they are refused.
struct StridedTensor {
  ir::ScalarType dtype = ir::ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<int64_t> min_sizes;          // empty unless a size is symbolic
  std::vector<ir::SymExprPtr> size_exprs;  // per dimension: the expression, or null if static
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;

  ir::TensorSpec spec() const;  // dim order derived from the strides
};
StridedTensor read_tensor_meta(const Json& meta, const std::string& what,
                               const ir::SymbolTable* symbols = nullptr);

// A SymInt union ({"as_int": 3} or {"as_expr": {"expr_str": ...}}) as a folded expression.
ir::SymExprPtr read_sym_int(const Json& value, const std::string& what);

// The one message for every symbolic size, stride or argument.
[[noreturn]] void throw_symbolic(const std::string& what, const std::string& detail);

}  // namespace pteron::compiler::frontend
