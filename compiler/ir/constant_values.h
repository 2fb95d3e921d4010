// A constant tensor's elements as numbers, in logical (row-major) order whatever its dim order:
// the one reader lowerings use for scales, zero points, biases and small weights.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/value.h"

namespace pteron::compiler::ir {

// The elements of `v` converted to T (double: exact for every float and double, and for
// integers up to 2^53; float: exact for float constants, which is what it is for): float,
// double, int8, uint8, int16, int32, int64 and bool constants. Nullopt, with `why` set when
// given, for a value that is no constant ("'w' is not a constant"), bytes fewer than its spec
// says ("constant 'w' is short") or another dtype ("constant 'w' has dtype f16").
template <typename T>
std::optional<std::vector<T>> constant_values(const Value& v, std::string* why = nullptr);

extern template std::optional<std::vector<double>> constant_values(const Value&, std::string*);
extern template std::optional<std::vector<float>> constant_values(const Value&, std::string*);

}  // namespace pteron::compiler::ir
