// aten::bincount.out(Tensor self, Tensor? weights=None, SymInt minlength=0, *, Tensor(a!) out)
//     -> Tensor(a!)
//
// out[v] = how many elements of the 1-D non-negative integer self equal v (int64), or the sum of
// their weights (float32 weights sum in float32, any other dtype in float64, as torch). The
// length, max(minlength, max(self) + 1), depends on the data: out is planned at a bound (the
// input dtype's range, or a torch._check in the model) and resized here.
#include <algorithm>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::bincount.out";

template <typename I, typename W, typename Acc>
void accumulate(const Tensor& self, const Tensor* weights, Tensor& out) {
  const I* x = self.data<const I>();
  Acc* y = out.data<Acc>();
  const int64_t xs = self.stride(0), ys = out.stride(0);
  for (int64_t k = 0; k < out.numel(); ++k) y[k * ys] = Acc(0);
  if (weights == nullptr) {
    for (int64_t i = 0; i < self.numel(); ++i) y[static_cast<int64_t>(x[i * xs]) * ys] += Acc(1);
    return;
  }
  const W* w = weights->data<const W>();
  const int64_t ws = weights->stride(0);
  for (int64_t i = 0; i < self.numel(); ++i) {
    y[static_cast<int64_t>(x[i * xs]) * ys] += static_cast<Acc>(load_value(w[i * ws]));
  }
}

Error bincount_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor* weights = args[1]->is_none() ? nullptr : args[1]->tensor;
  const int64_t minlength = args[2]->i;
  Tensor& out = *args[3]->tensor;
  PTERON_CHECK(self.dim() == 1 && dtype_in(self.dtype(), kIntTypes), Error::InvalidArgument,
               "%s: self must be a 1-D integer tensor, got %dD %s", kOp, self.dim(),
               scalar_type_name(self.dtype()));
  PTERON_CHECK(minlength >= 0, Error::InvalidArgument, "%s: minlength must be >= 0, got %lld", kOp,
               static_cast<long long>(minlength));
  PTERON_CHECK(weights == nullptr || (weights->dim() == 1 && weights->size(0) == self.size(0)),
               Error::InvalidArgument, "%s: weights must be 1-D with self's length %d", kOp,
               self.size(0));
  const ScalarType acc_type = weights == nullptr                      ? ScalarType::Long
                              : weights->dtype() == ScalarType::Float ? ScalarType::Float
                                                                      : ScalarType::Double;
  PTERON_TRY(expect_dtype(kOp, out, acc_type, "out"));
  PTERON_CHECK(weights == nullptr || dtype_in(weights->dtype(), kRealTypes), Error::NotSupported,
               "%s: weights dtype %s not supported", kOp, scalar_type_name(weights->dtype()));
  int64_t length = minlength;
  bool negative = false;
  dispatch_dtype_in<kIntTypes>(self.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    const I* x = self.data<const I>();
    for (int64_t i = 0; i < self.numel() && !negative; ++i) {
      const int64_t v = static_cast<int64_t>(x[i * self.stride(0)]);
      negative = v < 0;
      length = std::max(length, v + 1);
    }
  });
  PTERON_CHECK(!negative, Error::InvalidArgument,
               "%s: self must be non-negative (as torch requires)", kOp);
  PTERON_CHECK(length <= INT32_MAX, Error::InvalidArgument, "%s: result too large", kOp);
  const int32_t size = static_cast<int32_t>(length);
  PTERON_TRY(expect_out_shape(kOp, out, &size, 1));
  dispatch_dtype_in<kIntTypes>(self.dtype(), [&](auto itag) {
    using I = typename decltype(itag)::type;
    if (weights == nullptr) {
      accumulate<I, int64_t, int64_t>(self, nullptr, out);
      return;
    }
    dispatch_dtype_in<kRealTypes>(weights->dtype(), [&](auto wtag) {
      using W = typename decltype(wtag)::type;
      if (acc_type == ScalarType::Float) {
        accumulate<I, W, float>(self, weights, out);
      } else {
        accumulate<I, W, double>(self, weights, out);
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::bincount.out", bincount_out, "TtIT");

}  // namespace pteron
