// Element types and the other enums export arguments carry, in c10 numbering (what `.pte`
// files and kernels use). The IR may hold any c10 ScalarType, including ones the runtime does
// not run (complex, float8): later stages reject those with the node that needs them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/core/scalar_type.h"

namespace pteron::compiler::ir {

using ScalarType = ::pteron::ScalarType;

// c10::MemoryFormat.
enum class MemoryFormat : int8_t {
  Contiguous = 0,
  Preserve = 1,
  ChannelsLast = 2,
  ChannelsLast3d = 3
};

// c10::Layout.
enum class Layout : int8_t {
  Strided = 0,
  Sparse = 1,
  SparseCsr = 2,
  Mkldnn = 3,
  SparseCsc = 4,
  SparseBsr = 5,
  SparseBsc = 6,
  Jagged = 7,
};

// Bytes per element; 0 for values that are not a c10 ScalarType pteron knows.
size_t dtype_size(ScalarType t);
inline bool dtype_known(ScalarType t) { return dtype_size(t) != 0; }
// Short name as torch prints graphs ("f32", "i64", "b8", "bf16"); "dtype(N)" when unknown.
std::string dtype_name(ScalarType t);

std::string_view memory_format_name(MemoryFormat f);
std::string_view layout_name(Layout l);

}  // namespace pteron::compiler::ir
