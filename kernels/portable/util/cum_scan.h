// cumsum / cumprod: self is first converted to out's dtype (as torch does for `dtype`), then
// scanned in place along `dim`. Accumulators follow torch's CPU kernels: double for float32/64,
// float for float16/bfloat16, int64 for integers. Any dim order: the scan walks out's strides.
#pragma once

#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace cum_scan {

template <typename T>
using AccType = std::conditional_t<
    std::is_integral_v<T>, int64_t,
    std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, double>>;

// In-place inclusive scan of `t` along `dim`: acc starts at `identity`, each element becomes
// acc = step(acc, element).
template <typename T, typename Step>
void scan_in_place(Tensor& t, int32_t dim, int identity, Step step_fn) {
  using A = AccType<T>;
  T* p = t.data<T>();
  const int64_t len = t.size(dim);
  const int64_t step = t.stride(dim);
  // Walk the line starts: every index with index[dim] == 0.
  int32_t starts[kMaxTensorDim];
  int64_t strides[kMaxTensorDim];
  for (int32_t d = 0; d < t.dim(); ++d) {
    starts[d] = d == dim ? 1 : t.size(d);
    strides[d] = t.stride(d);
  }
  const int64_t* plan_strides[1] = {strides};
  const RowPlan<1> plan = plan_rows<1>(starts, t.dim(), plan_strides);
  for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
    T* base = p + off[0];
    if (step == 1 || n == 1) {  // lines are contiguous (or alone): scan each one
      for (int64_t j = 0; j < n; ++j) {
        T* line = base + j * st[0];
        A acc = static_cast<A>(identity);
        for (int64_t k = 0; k < len; ++k) {
          acc = step_fn(acc, static_cast<A>(load_value(line[k * step])));
          line[k * step] = store_value<T>(acc);
        }
      }
      return;
    }
    // Lines side by side: scan a chunk of them together so the inner loop runs along the
    // row (contiguous for the default dim order) and vectorises.
    constexpr int64_t kChunk = 64;
    A acc[kChunk];
    for (int64_t j0 = 0; j0 < n; j0 += kChunk) {
      const int64_t m = n - j0 < kChunk ? n - j0 : kChunk;
      for (int64_t j = 0; j < m; ++j) acc[j] = static_cast<A>(identity);
      for (int64_t k = 0; k < len; ++k) {
        T* row = base + j0 * st[0] + k * step;
        for (int64_t j = 0; j < m; ++j) {
          acc[j] = step_fn(acc[j], static_cast<A>(load_value(row[j * st[0]])));
          row[j * st[0]] = store_value<T>(acc[j]);
        }
      }
    }
  });
}

// The out variant, (Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out).
// step_fn is a generic callable (acc, v) -> acc, called with every accumulator type.
template <typename Step>
Error scan_out(const char* kOp, Span<EValue*> args, int identity, Step step_fn) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[3]->tensor;
  if (!args[2]->is_none() && args[2]->i != static_cast<int64_t>(out.dtype())) {
    return fail(Error::InvalidArgument, "%s: dtype %lld does not match out's dtype %s", kOp,
                static_cast<long long>(args[2]->i), scalar_type_name(out.dtype()));
  }
  if (self.dim() > kMaxTensorDim) {
    return fail(Error::NotSupported, "%s: rank %d above %d", kOp, static_cast<int>(self.dim()),
                kMaxTensorDim);
  }
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, self.dim(), &dim));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  if (!dtype_in(out.dtype(), kRealTypes) || !copy_convert(self, out)) {
    return fail(Error::NotSupported, "%s: dtype %s -> %s not supported", kOp,
                scalar_type_name(self.dtype()), scalar_type_name(out.dtype()));
  }
  if (self.dim() == 0) return Error::Ok;
  dispatch_dtype_in<kRealTypes>(out.dtype(), [&](auto tag) {
    scan_in_place<typename decltype(tag)::type>(out, dim, identity, step_fn);
  });
  return Error::Ok;
}

}  // namespace cum_scan
}  // namespace pteron
