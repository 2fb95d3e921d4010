// Export JSON arguments -> ir::Argument, checked against the op schema's declared type.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "compiler/frontend/export_json.h"
#include "compiler/ir/argument.h"
#include "compiler/ir/op_schema.h"

namespace pteron::compiler::frontend {

// How the reader turns names and literals into values.
struct ValueResolver {
  // Resolves a tensor name to its value id; throws when the name is unknown.
  std::function<ir::ValueId(const std::string& name)> lookup;
  // A Python number passed where the schema wants a Tensor (mul.Tensor(x, 2)): torch wraps
  // it in a 0-dim tensor; this makes that tensor a constant and returns its id.
  std::function<ir::ValueId(const ir::Scalar& value)> wrap_scalar;
  // A SymInt passed where the schema wants a Tensor (a cache's counter.add_(seq_len)): torch
  // wraps it in a 0-dim int64 tensor; this computes that tensor at run time and returns its id.
  std::function<ir::ValueId(const ir::SymExprPtr& value)> wrap_sym_int;
  // Resolves a SymInt's name ({"as_name": "sym_size_int_5"}) to its expression over the
  // graph's symbols; throws when the name is unknown or the graph has no symbols.
  std::function<ir::SymExprPtr(const std::string& name)> sym_int;
  // A SymFloat or SymBool read from a tensor with item() that the program computes
  // (frontend/value_checks.h: LiftedScalars), by name: its 0-dim tensor, or nullopt for any
  // other name. read_argument returns it as a TensorRef in Tensor and in Scalar positions (the
  // caller replaces a Scalar one's op by its Tensor overload).
  std::function<std::optional<ir::ValueId>(const std::string& name)> lifted;
};

// Converts one serialized Argument union (e.g. {"as_ints": [1, 0]}) for the schema argument
// `schema`. `what` prefixes every error ("x.pt2: node 'addmm' (...): argument 'mat1'").
ir::Argument read_argument(const Json& arg, const ir::ArgSchema& schema,
                           const ValueResolver& values, const std::string& what);

}  // namespace pteron::compiler::frontend
