// Window geometry of 3-D pooling over (N, C, D, H, W) or (C, D, H, W) input, with torch's rules
// (1-value lists expand to all three dims, an empty stride means stride = kernel, ceil_mode keeps
// the last window starting inside the padded input). Default dim order only, like the 2-D pools.
#pragma once

#include <cstdint>

#include "kernels/portable/util/layout.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"

namespace pteron {

struct Pool3dShape {
  int64_t planes = 0;  // N * C
  int64_t in[3] = {0, 0, 0}, out[3] = {0, 0, 0};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
};

inline Error check_pool3d_input(const char* op, const Tensor& input) {
  PTERON_CHECK(input.dim() == 4 || input.dim() == 5, Error::InvalidArgument,
               "%s: expected 4-D or 5-D input, got %d-D", op, static_cast<int>(input.dim()));
  PTERON_CHECK(is_row_major(input), Error::NotSupported,
               "%s: only the default (NCDHW) dim order is supported", op);
  for (int32_t d = input.dim() - 3; d < input.dim(); ++d) {
    PTERON_CHECK(input.size(d) > 0, Error::InvalidArgument, "%s: spatial dim %d is empty", op,
                 static_cast<int>(d));
  }
  return Error::Ok;
}

// A 1- or 3-value list into v; an empty list takes `fallback`.
inline Error read_triple(const char* op, const char* name, const EValue& e, const int64_t* fallback,
                         int64_t min_value, int64_t* v) {
  const Span<const int64_t> list = e.int_list;
  if (list.empty() && fallback != nullptr) {
    for (int i = 0; i < 3; ++i) v[i] = fallback[i];
    return Error::Ok;
  }
  PTERON_CHECK(list.size() == 1 || list.size() == 3, Error::InvalidArgument,
               "%s: %s must have 1 or 3 values, got %zu", op, name, list.size());
  for (int i = 0; i < 3; ++i) {
    v[i] = list[list.size() == 1 ? 0 : i];
    PTERON_CHECK(v[i] >= min_value && v[i] <= INT32_MAX, Error::InvalidArgument,
                 "%s: %s must be in [%lld, 2^31)", op, name, static_cast<long long>(min_value));
  }
  return Error::Ok;
}

// torch's pooling_output_shape.
inline int64_t pooled_size_3d(int64_t in, int64_t kernel, int64_t pad, int64_t stride,
                              int64_t dilation, bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

inline Error parse_pool3d_shape(const char* op, const Tensor& input, const EValue& kernel_size,
                                const EValue& stride, const EValue& padding, const EValue* dilation,
                                bool ceil_mode, Pool3dShape* s) {
  PTERON_TRY(check_pool3d_input(op, input));
  PTERON_TRY(read_triple(op, "kernel_size", kernel_size, nullptr, 1, s->kernel));
  PTERON_TRY(read_triple(op, "stride", stride, s->kernel, 1, s->stride));
  PTERON_TRY(read_triple(op, "padding", padding, nullptr, 0, s->pad));
  if (dilation != nullptr)
    PTERON_TRY(read_triple(op, "dilation", *dilation, nullptr, 1, s->dilation));
  const int32_t first = input.dim() - 3;
  s->planes = 1;
  for (int32_t d = 0; d < first; ++d) s->planes *= input.size(d);
  for (int i = 0; i < 3; ++i) {
    PTERON_CHECK(s->pad[i] <= s->kernel[i] / 2, Error::InvalidArgument,
                 "%s: pad should be at most half of kernel size", op);
    s->in[i] = input.size(first + i);
    s->out[i] =
        pooled_size_3d(s->in[i], s->kernel[i], s->pad[i], s->stride[i], s->dilation[i], ceil_mode);
    PTERON_CHECK(s->out[i] >= 1, Error::InvalidArgument,
                 "%s: spatial dim %d of size %lld gives an output of size %lld", op, i,
                 static_cast<long long>(s->in[i]), static_cast<long long>(s->out[i]));
  }
  return Error::Ok;
}

// Output sizes: input's leading dims, then the three pooled sizes.
inline void pool3d_out_sizes(const Tensor& input, const int64_t* out, int32_t* sizes) {
  const int32_t first = input.dim() - 3;
  for (int32_t d = 0; d < first; ++d) sizes[d] = input.size(d);
  for (int i = 0; i < 3; ++i) sizes[first + i] = static_cast<int32_t>(out[i]);
}

}  // namespace pteron
