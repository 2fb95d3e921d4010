// The source positions int8 upsampling reads, as the lowering computes them at compile time with
// torch's float formulas (nearest_idx, area_pixel_compute_source_index): a constant int32 table
// per op, so the kernels are integer only and every ratio, align_corners and nearest-exact
// setting is the same kernel. Checked per call, since the table comes from the program.
#pragma once

#include <cstdint>

#include "kernels/cortex_m/util/int8_args.h"

namespace pteron::cortex_m {

// Bilinear weights are fixed point with this many fraction bits per axis; a pixel's four weights
// (products of two) sum to 2^(2 * kUpsampleWeightBits).
constexpr int32_t kUpsampleWeightBits = 11;
constexpr int32_t kUpsampleOne = 1 << kUpsampleWeightBits;

// input [N, H, W, C] and out [N, OH, OW, C] int8 NHWC with the same N and C, and the table:
// int32 [OH + OW, columns] (nearest: 1 column, the source index; bilinear: 3, i0, i1 and the
// weight of i1 in [0, kUpsampleOne]), rows then columns of the output, indices inside the input.
inline Error check_upsample(const char* op, const Tensor& in, const Tensor& table, int32_t columns,
                            const Tensor& out) {
  PTERON_TRY(check_int8(op, in, "input"));
  PTERON_TRY(check_int8(op, out, "out"));
  PTERON_TRY(check_rank(op, in, 4, "input"));
  PTERON_TRY(check_rank(op, out, 4, "out"));
  PTERON_TRY(check_dtype(op, table, ScalarType::Int, "table"));
  if (in.size(0) != out.size(0) || in.size(3) != out.size(3)) {
    return fail(Error::InvalidArgument, "%s: input [%d, _, _, %d] and out [%d, _, _, %d] differ",
                op, in.size(0), in.size(3), out.size(0), out.size(3));
  }
  const int64_t rows = static_cast<int64_t>(out.size(1)) + out.size(2);
  if (table.numel() != rows * columns) {
    return fail(Error::InvalidArgument, "%s: table has %lld values, expected %lld", op,
                static_cast<long long>(table.numel()), static_cast<long long>(rows * columns));
  }
  const int32_t* t = table.data<const int32_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t limit = r < out.size(1) ? in.size(1) : in.size(2);
    for (int32_t k = 0; k < columns; ++k) {
      const int32_t v = t[r * columns + k];
      const int32_t hi = k == 2 ? kUpsampleOne : limit - 1;
      if (v < 0 || v > hi) {
        return fail(Error::InvalidArgument, "%s: table entry %lld (%d) outside [0, %d]", op,
                    static_cast<long long>(r * columns + k), static_cast<int>(v),
                    static_cast<int>(hi));
      }
    }
  }
  return Error::Ok;
}

}  // namespace pteron::cortex_m
