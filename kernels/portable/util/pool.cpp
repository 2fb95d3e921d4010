#include "kernels/portable/util/pool.h"

#include "kernels/portable/util/layout.h"

namespace pteron {
namespace {

// A 1- or 2-value int list into v[0..2); an empty list takes `fallback` (stride = kernel).
Error read_pair(const char* op, const char* name, const EValue& e, const int64_t* fallback,
                int64_t min_value, int64_t* v) {
  const Span<const int64_t> list = e.int_list;
  if (list.empty() && fallback != nullptr) {
    v[0] = fallback[0];
    v[1] = fallback[1];
    return Error::Ok;
  }
  if (list.size() != 1 && list.size() != 2) {
    return fail(Error::InvalidArgument, "%s: %s must have 1 or 2 values, got %zu", op, name,
                list.size());
  }
  v[0] = list[0];
  v[1] = list[list.size() - 1];
  if (v[0] < min_value || v[1] < min_value) {
    return fail(Error::InvalidArgument, "%s: %s must be >= %lld", op, name,
                static_cast<long long>(min_value));
  }
  return Error::Ok;
}

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// torch's pooling_output_shape.
int64_t pooled_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  int64_t out =
      floor_div(in + 2 * pad - dilation * (kernel - 1) - 1 + (ceil_mode ? stride - 1 : 0), stride) +
      1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace

Error check_pool_input(const char* op, const Tensor& input) {
  if (input.dim() != 3 && input.dim() != 4) {
    return fail(Error::InvalidArgument, "%s: expected 3-D or 4-D input, got %d-D", op, input.dim());
  }
  if (!is_row_major(input)) {
    return fail(Error::NotSupported, "%s: only the default (NCHW) dim order is supported", op);
  }
  return Error::Ok;
}

Error parse_pool_shape(const char* op, const Tensor& input, const EValue& kernel_size,
                       const EValue& stride, const EValue& padding, const EValue* dilation,
                       bool ceil_mode, PoolShape* s) {
  PTERON_TRY(check_pool_input(op, input));
  int64_t k[2] = {1, 1}, st[2] = {1, 1}, p[2] = {0, 0}, d[2] = {1, 1};
  PTERON_TRY(read_pair(op, "kernel_size", kernel_size, nullptr, 1, k));
  PTERON_TRY(read_pair(op, "stride", stride, k, 1, st));
  PTERON_TRY(read_pair(op, "padding", padding, nullptr, 0, p));
  if (dilation != nullptr) PTERON_TRY(read_pair(op, "dilation", *dilation, nullptr, 1, d));
  if (p[0] > k[0] / 2 || p[1] > k[1] / 2) {
    return fail(Error::InvalidArgument, "%s: pad should be at most half of kernel size", op);
  }
  const int32_t h = input.dim() - 2;
  s->in_h = input.size(h);
  s->in_w = input.size(h + 1);
  s->planes =
      input.dim() == 4 ? static_cast<int64_t>(input.size(0)) * input.size(1) : input.size(0);
  s->kernel_h = k[0];
  s->kernel_w = k[1];
  s->stride_h = st[0];
  s->stride_w = st[1];
  s->pad_h = p[0];
  s->pad_w = p[1];
  s->dilation_h = d[0];
  s->dilation_w = d[1];
  s->out_h = pooled_size(s->in_h, k[0], p[0], st[0], d[0], ceil_mode);
  s->out_w = pooled_size(s->in_w, k[1], p[1], st[1], d[1], ceil_mode);
  if (s->in_h < 1 || s->in_w < 1 || s->out_h < 1 || s->out_w < 1) {
    return fail(Error::InvalidArgument,
                "%s: input %lld x %lld gives output %lld x %lld, which is too small", op,
                static_cast<long long>(s->in_h), static_cast<long long>(s->in_w),
                static_cast<long long>(s->out_h), static_cast<long long>(s->out_w));
  }
  return Error::Ok;
}

void pool_out_sizes(const Tensor& input, int64_t out_h, int64_t out_w, int32_t* sizes) {
  const int32_t h = input.dim() - 2;
  for (int32_t d = 0; d < h; ++d) sizes[d] = input.size(d);
  sizes[h] = static_cast<int32_t>(out_h);
  sizes[h + 1] = static_cast<int32_t>(out_w);
}

}  // namespace pteron
