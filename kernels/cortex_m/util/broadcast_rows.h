// The one broadcast the int8 binary kernels take: an operand repeated along a run of middle
// dimensions. The output is [outer, mid, inner] and the operand [outer, 1, inner]: a
// squeeze-excite's channel weights against an NHWC activation (outer N, mid H x W, inner C) or
// an NCHW one (outer N x C, mid H x W, inner 1), a per-channel scale against a token matrix.
// The compiler (which lowers such a multiply) and the kernel (which checks its operands again)
// both read the shapes with broadcast_rows.
#pragma once

#include <cstdint>
#include <cstring>

namespace pteron::cortex_m {

struct BroadcastRows {
  int64_t outer = 1, mid = 1, inner = 1;
};

// Whether `other` (PyTorch's broadcasting: aligned on the right, missing leading dimensions 1)
// broadcasts to `out` as [outer, 1, inner] against [outer, mid, inner]; fills `rows`. Same
// shapes give mid 1.
template <class Size>
bool broadcast_rows(const Size* out, int32_t out_rank, const Size* other, int32_t other_rank,
                    BroadcastRows* rows) {
  if (other_rank > out_rank) return false;
  BroadcastRows r;
  int stage = 0;  // 0: inner (equal sizes), 1: mid (other 1), 2: outer (equal again)
  for (int32_t d = out_rank - 1; d >= 0; --d) {
    const int32_t k = d - (out_rank - other_rank);
    const int64_t o = out[d], x = k >= 0 ? other[k] : 1;
    if (o == 1 && x == 1) continue;  // fits any stage
    if (x != o && x != 1) return false;
    const bool equal = x == o;
    if (stage == 0 && !equal) stage = 1;
    if (stage == 1 && equal) stage = 2;
    if (stage == 2 && !equal) return false;  // a second broadcast run
    (stage == 0 ? r.inner : stage == 1 ? r.mid : r.outer) *= o;
  }
  *rows = r;
  return true;
}

// How many calls for_each_broadcast_row makes over the whole output: outer x mid rows of inner
// elements, or (inner 1) outer rows of mid elements against one value each.
inline int64_t broadcast_row_count(const BroadcastRows& r) {
  return r.inner > 1 ? r.outer * r.mid : r.outer;
}

// Calls loop(a, b, out, n) for rows [first, last) of a broadcast binary op, `a` and `out` of the
// output's shape, `b` the broadcast operand: each row of inner elements against b's row of the
// same outer index; with inner 1, each of the outer rows of mid elements against b's one value,
// repeated in a small buffer so that the same element loops (scalar, MVE, host vectors) run it.
template <class Loop>
void for_each_broadcast_row(const int8_t* a, const int8_t* b, int8_t* out, const BroadcastRows& r,
                            int64_t first, int64_t last, Loop loop) {
  if (r.inner > 1) {
    for (int64_t row = first; row < last; ++row)
      loop(a + row * r.inner, b + row / r.mid * r.inner, out + row * r.inner, r.inner);
    return;
  }
  constexpr int64_t kPiece = 64;
  int8_t repeated[kPiece];
  for (int64_t row = first; row < last; ++row) {
    std::memset(repeated, b[row], sizeof repeated);
    for (int64_t j = 0; j < r.mid; j += kPiece) {
      const int64_t n = r.mid - j < kPiece ? r.mid - j : kPiece;
      loop(a + row * r.mid + j, repeated, out + row * r.mid + j, n);
    }
  }
}

}  // namespace pteron::cortex_m
