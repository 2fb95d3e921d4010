// Window geometry of 2-D pooling over (N, C, H, W) or (C, H, W) input, parsed with torch's rules
// (single-value lists expand to both dims, an empty stride means stride = kernel, ceil_mode
// keeps the last window starting inside the padded input).
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/wrapping.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

struct PoolShape {
  int64_t planes = 0;  // N * C
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};

// Input range [begin, end) of output cell o of an in -> out adaptive pool: [floor(o * in / out),
// ceil((o + 1) * in / out)), torch's start_index / end_index.
struct AdaptiveWindow {
  int64_t begin = 0, end = 0;
};

inline AdaptiveWindow adaptive_window(int64_t o, int64_t out, int64_t in) {
  return {(o * in) / out, ((o + 1) * in + out - 1) / out};
}

// Reads kernel_size, stride, padding and (if non-null) dilation from EValue int lists and
// derives the output size. Fails with messages naming `op`.
// Average of a pooling window: float division, or for int64 (torch's avg_pool takes it) C++
// integer division as ATen's, with -1 as a wrapping negation (INT64_MIN / -1 would trap).
// Start of a max pool's running maximum: -inf, or an integer type's lowest value (torch's
// integer max_pool starts there too).
template <typename Acc>
constexpr Acc pool_max_start() {
  if constexpr (std::numeric_limits<Acc>::has_infinity)
    return -std::numeric_limits<Acc>::infinity();
  return std::numeric_limits<Acc>::lowest();
}

// Whether a max pool's dtype is one the kernels run: floating point or an integer type, out's
// dtype the same (torch's CPU max_pool takes every real dtype).
inline bool max_pool_dtypes_ok(const Tensor& input, const Tensor& out) {
  return out.dtype() == input.dtype() && dispatch_dtype_in<kRealTypes>(input.dtype(), [](auto) {});
}

template <typename Acc>
Acc pool_average(Acc sum, int64_t divisor) {
  if constexpr (std::is_integral_v<Acc>) {
    return divisor == -1 ? wrapping_mul(sum, Acc(-1)) : static_cast<Acc>(sum / divisor);
  } else {
    return sum / static_cast<Acc>(divisor);
  }
}

Error parse_pool_shape(const char* op, const Tensor& input, const EValue& kernel_size,
                       const EValue& stride, const EValue& padding, const EValue* dilation,
                       bool ceil_mode, PoolShape* s);

// Output sizes: input's leading dims, then out_h, out_w.
void pool_out_sizes(const Tensor& input, int64_t out_h, int64_t out_w, int32_t* sizes);

// Fails unless input is 3-D or 4-D in the default dim order (kernels index H x W planes).
Error check_pool_input(const char* op, const Tensor& input);

}  // namespace pteron
