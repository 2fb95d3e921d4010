// aten::randperm.out(SymInt n, *, Tensor(a!) out)
// out = a random permutation of 0..n-1 (Fisher-Yates in place, swaps drawn from pteron's seeded
// generator, util/random.h) in out's dtype: any integer or floating type that holds n - 1
// exactly, as torch requires.
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/random.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error randperm_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::randperm.out";
  const int64_t n = args[0]->i;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(n >= 0, Error::InvalidArgument, "%s: n must be non-negative, got %lld", kOp,
               static_cast<long long>(n));
  PTERON_CHECK(out.dtype() != ScalarType::Bool && is_supported(out.dtype()), Error::NotSupported,
               "%s: dtype %s not supported", kOp, scalar_type_name(out.dtype()));
  PTERON_CHECK(n == 0 || n - 1 <= largest_exact_integer(out.dtype()), Error::InvalidArgument,
               "%s: n %lld is too large for dtype %s", kOp, static_cast<long long>(n),
               scalar_type_name(out.dtype()));
  const int64_t size[1] = {n};
  PTERON_TRY(expect_out_size_list(kOp, Span<const int64_t>(size, 1), out));
  const uint64_t stream = next_random_stream();
  dispatch_dtype(out.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    const int64_t step = out.dim() == 1 ? out.stride(0) : 1;
    for (int64_t i = 0; i < n; ++i) p[i * step] = store_value<T>(static_cast<double>(i));
    for (int64_t i = n - 1; i > 0; --i) {
      // j uniform in [0, i]: 53 random bits scaled (bias below 2^-20 for any n the dtypes allow).
      const int64_t j =
          static_cast<int64_t>(uniform_double(stream, i) * static_cast<double>(i + 1));
      const T tmp = p[i * step];
      p[i * step] = p[(j > i ? i : j) * step];
      p[(j > i ? i : j) * step] = tmp;
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::randperm.out", randperm_out, "IT");

}  // namespace pteron
