// The layout of cortex_m::quantized_linear_packed's constants, shared by the compiler (which
// packs them, kernels/cortex_m/aot) and the kernel (which streams them).
//
// Output channels go in groups of kLinearGroup, the reduction dim K in chunks of kLinearChunk
// bytes. weights is int8 [groups, chunks, kLinearGroup, kLinearChunk]: for each group, chunk by
// chunk, the chunk of each of the group's four rows, zero-padded past K and past N, so the
// kernel reads one input chunk and the four rows' chunks that multiply it from one pointer that
// only moves forward. channel_quant is int32 [groups, 4, kLinearGroup]: per group the four
// channels' kernel sums (bias + input_offset * sum_k w[n][k]: the input and weight offsets
// folded in at compile time; weights are symmetric), Q31 multipliers, left shifts (>= 0) and
// right shifts (<= 0, as VRSHL takes them), one vector each.
#pragma once

#include <cstdint>

namespace pteron::cortex_m {

constexpr int32_t kLinearGroup = 4;
constexpr int32_t kLinearChunk = 16;
enum LinearQuantField : int32_t {
  kLinearKernelSum = 0,
  kLinearMultiplier = 1,
  kLinearLeftShift = 2,
  kLinearRightShift = 3,
  kLinearQuantFields = 4
};

constexpr int64_t linear_groups(int64_t n) { return (n + kLinearGroup - 1) / kLinearGroup; }
constexpr int64_t linear_chunks(int64_t k) { return (k + kLinearChunk - 1) / kLinearChunk; }

// Index of w[n][k] in the packed weights.
constexpr int64_t linear_packed_index(int64_t n, int64_t k, int64_t chunks) {
  return (((n / kLinearGroup) * chunks + k / kLinearChunk) * kLinearGroup + n % kLinearGroup) *
             kLinearChunk +
         k % kLinearChunk;
}

// Index of channel n's `field` in channel_quant.
constexpr int64_t linear_quant_index(int64_t n, int32_t field) {
  return ((n / kLinearGroup) * kLinearQuantFields + field) * kLinearGroup + n % kLinearGroup;
}

}  // namespace pteron::cortex_m
