// The SIMD files' kernels are templates on the row count R (1..4, unrolled across rows); the
// table entries take `rows` at run time. with_rows turns one into the other once for all of
// them. Internal linkage, like qlinear_impl_scalar.h: each file instantiates it with its own
// flags.
#pragma once

#include <type_traits>

namespace pteron::opt::qrows {
namespace {

// Calls fn(std::integral_constant<int, R>{}) with R = rows for 1..3 and R = 4 otherwise
// (callers pass 1..4).
template <typename Fn>
inline void with_rows(int rows, Fn&& fn) {
  switch (rows) {
    case 1:
      return fn(std::integral_constant<int, 1>{});
    case 2:
      return fn(std::integral_constant<int, 2>{});
    case 3:
      return fn(std::integral_constant<int, 3>{});
    default:
      return fn(std::integral_constant<int, 4>{});
  }
}

// The same for 1..8 (callers pass 1..8).
template <typename Fn>
inline void with_rows8(int rows, Fn&& fn) {
  switch (rows) {
    case 1:
      return fn(std::integral_constant<int, 1>{});
    case 2:
      return fn(std::integral_constant<int, 2>{});
    case 3:
      return fn(std::integral_constant<int, 3>{});
    case 4:
      return fn(std::integral_constant<int, 4>{});
    case 5:
      return fn(std::integral_constant<int, 5>{});
    case 6:
      return fn(std::integral_constant<int, 6>{});
    case 7:
      return fn(std::integral_constant<int, 7>{});
    default:
      return fn(std::integral_constant<int, 8>{});
  }
}

}  // namespace
}  // namespace pteron::opt::qrows
