// aten::nanmedian.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
// aten::nanmedian.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) values,
//     Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)
// The lower median of the values that are not NaN (NaN when all are), as torch.nanmedian: the
// ((m - 1) / 2 + 1)-th smallest of the line's m numbers. The position is ATen's: std::nth_element
// over the positions with its comparator (by value, then position; NaN after every number), so
// even all-NaN lines, where the comparator cannot order the NaNs, give torch's index.
#include <algorithm>
#include <cmath>

#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/line_reduce.h"

namespace pteron {
namespace {

template <typename C>
bool is_nan(C v) {
  return v != v;
}

// Position (within the line) of the nan-ignoring lower median of x[0], x[step], ...
template <typename T>
int64_t nanmedian_position(const T* x, int64_t step, int64_t n, int64_t* order) {
  using C = typename ComputeType<T>::type;
  int64_t nans = 0;
  for (int64_t i = 0; i < n; ++i) {
    order[i] = i;
    nans += is_nan(load_value(x[i * step])) ? 1 : 0;
  }
  int64_t* nth = order + (n - nans - 1) / 2;  // C++ division: 0 when every value is NaN
  std::nth_element(order, nth, order + n, [&](int64_t i, int64_t j) {
    const C a = load_value(x[i * step]), b = load_value(x[j * step]);
    return a < b || (a == b && i < j) || (is_nan(b) && !is_nan(a));
  });
  return *nth;
}

Error nanmedian_dim_values(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::nanmedian.dim_values";
  LineReduceArgs a;
  PTERON_TRY(read_line_reduce_args(kOp, args, &a));
  const Tensor& self = *a.self;
  const int64_t n = a.n;
  int64_t* order = nullptr;
  if (a.values->numel() > 0) {
    order = static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * n, alignof(int64_t)));
    PTERON_CHECK(order != nullptr, Error::OutOfMemory,
                 "%s: no scratch memory for a line of %lld elements", kOp,
                 static_cast<long long>(n));
  }
  const bool ok = dispatch_dtype(self.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    T* vo = a.values->data<T>();
    int64_t* io = a.indices->data<int64_t>();
    for_each_line(a, [&](int64_t in, int64_t step, int64_t len, int64_t ov, int64_t oi) {
      const int64_t at = nanmedian_position(x + in, step, len, order);
      vo[ov] = x[in + at * step];
      io[oi] = at;
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(self.dtype()));
  return Error::Ok;
}

Error nanmedian_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::nanmedian.out";
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_TRY(expect_out_shape(kOp, out, nullptr, 0));
  PTERON_CHECK(out.dtype() == self.dtype(), Error::InvalidArgument,
               "%s: out has dtype %s, expected %s", kOp, scalar_type_name(out.dtype()),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(self.numel() > 0, Error::InvalidArgument, "%s: nanmedian of an empty tensor", kOp);
  // Every element as one line: a 1-D view of self's dense storage (memory order does not
  // change the median, and this overload returns no position).
  const int64_t n = self.numel();
  int64_t* order =
      static_cast<int64_t*>(ctx.allocate_scratch(sizeof(int64_t) * n, alignof(int64_t)));
  PTERON_CHECK(order != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld elements", kOp,
               static_cast<long long>(n));
  const bool ok = dispatch_dtype(self.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    out.data<T>()[0] = x[nanmedian_position(x, 1, n, order)];
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: dtype %s not supported", kOp,
               scalar_type_name(self.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::nanmedian.out", nanmedian_out, "TT");
PTERON_KERNEL("aten::nanmedian.dim_values", nanmedian_dim_values, "TIBTT");

}  // namespace pteron
