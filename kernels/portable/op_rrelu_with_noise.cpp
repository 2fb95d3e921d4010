// pteron::rrelu_with_noise_functional.out(Tensor self, Tensor noise, Scalar lower=0.125,
//     Scalar upper=1/3, bool training=False, Generator? generator=None, *, Tensor(a!) out,
//     Tensor(b!) noise_out) -> (Tensor(a!), Tensor(b!))
//
// F.rrelu / nn.RReLU (torch has no out-variant of the functional op export writes; this is
// pteron's). In eval, as torch: leaky_relu with slope (lower + upper) / 2, noise passed through.
// In training each non-positive element is scaled by a slope drawn uniformly from
// [lower, upper] (the counter-based generator of rand, util/random.h), which noise_out records
// (1 for positive elements). Floating dtypes.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/logical_walk.h"
#include "kernels/portable/util/random.h"
#include "kernels/portable/util/strided_copy.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "pteron::rrelu_with_noise_functional.out";

template <typename T>
void rrelu_train(const Tensor& self, Tensor& out, Tensor& noise_out, double lower, double upper) {
  using C = typename ComputeType<T>::type;
  const uint64_t stream = next_random_stream();
  const T* x = self.data<const T>();
  T* y = out.data<T>();
  T* r = noise_out.data<T>();
  LogicalWalk in(self), to(out), noise(noise_out);
  for (int64_t e = 0; e < self.numel(); ++e, in.next(), to.next(), noise.next()) {
    const C v = load_value(x[in.offset]);
    if (v > C(0)) {
      y[to.offset] = x[in.offset];
      r[noise.offset] = store_value<T>(C(1));
      continue;
    }
    const C slope = static_cast<C>(lower + (upper - lower) * uniform_double(stream, e));
    y[to.offset] = store_value<T>(v * slope);
    r[noise.offset] = store_value<T>(slope);
  }
}

Error rrelu_with_noise_functional_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& noise = *args[1]->tensor;
  const double lower = args[2]->scalar_as_double();
  const double upper = args[3]->scalar_as_double();
  const bool training = args[4]->b;
  Tensor& out = *args[6]->tensor;
  Tensor& noise_out = *args[7]->tensor;
  PTERON_CHECK(lower <= upper, Error::InvalidArgument,
               "%s: lower bound %g is above the upper bound %g", kOp, lower, upper);
  PTERON_TRY(expect_dtype(kOp, noise, self.dtype(), "noise"));
  if (!training) {
    PTERON_TRY(expect_out_shape(kOp, noise_out, noise.sizes().data(), noise.dim()));
    const double slope = (lower + upper) / 2;
    const auto leaky = [slope](auto x) {
      using C = decltype(x);
      return x > C(0) ? x : x * static_cast<C>(slope);
    };
    PTERON_TRY((unary_elementwise<kFloatTypes, kFloatTypes>(kOp, self, out, leaky)));
    return copy_tensor(kOp, noise, noise_out);
  }
  PTERON_CHECK(dtype_in(self.dtype(), kFloatTypes), Error::NotSupported,
               "%s: dtype %s not supported (floating only)", kOp, scalar_type_name(self.dtype()));
  PTERON_TRY(expect_dtype(kOp, out, self.dtype(), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, self.sizes().data(), self.dim()));
  PTERON_TRY(expect_dtype(kOp, noise_out, self.dtype(), "noise_out"));
  PTERON_TRY(expect_out_shape(kOp, noise_out, self.sizes().data(), self.dim()));
  dispatch_dtype_in<kFloatTypes>(self.dtype(), [&](auto tag) {
    rrelu_train<typename decltype(tag)::type>(self, out, noise_out, lower, upper);
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::rrelu_with_noise_functional.out", rrelu_with_noise_functional_out,
              "TTSSB*TT");

}  // namespace pteron
