// aten::multinomial.out(Tensor self, SymInt num_samples, bool replacement=False, *,
//     Generator? generator=None, Tensor(a!) out) -> Tensor(a!)
// num_samples category indices (int64) per row of self ([k] or [n, k] non-negative weights, not
// necessarily normalised) from pteron's seeded generator (util/random.h; the generator argument,
// None in an export, is not read): with replacement each draw from the whole row, without it each
// drawn category's weight then zero. Refused as torch refuses: a weight that is negative, inf or
// NaN, a row summing to 0, more samples than categories with weight when not replacing. Not
// decomposed by run_decompositions() (sampling inside a generation graph).
#include <cmath>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/random.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::multinomial.out";

Error multinomial_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const int64_t samples = args[1]->i;
  const bool replacement = args[2]->b;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(self.dim() == 1 || self.dim() == 2, Error::InvalidArgument,
               "%s: probabilities must be 1-D or 2-D, got rank %d", kOp, self.dim());
  PTERON_CHECK(is_floating(self.dtype()), Error::NotSupported,
               "%s: probabilities must be floating, got %s", kOp, scalar_type_name(self.dtype()));
  PTERON_CHECK(out.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: out must be int64, got %s", kOp, scalar_type_name(out.dtype()));
  const int64_t rows = self.dim() == 2 ? self.size(0) : 1, k = self.size(self.dim() - 1);
  PTERON_CHECK(samples > 0 && samples <= INT32_MAX, Error::InvalidArgument,
               "%s: cannot sample %lld samples", kOp, static_cast<long long>(samples));
  PTERON_CHECK(replacement || samples <= k, Error::InvalidArgument,
               "%s: cannot sample %lld > %lld categories without replacement", kOp,
               static_cast<long long>(samples), static_cast<long long>(k));
  int32_t sizes[2] = {static_cast<int32_t>(rows), static_cast<int32_t>(samples)};
  PTERON_TRY(expect_out_shape(kOp, out, self.dim() == 2 ? sizes : sizes + 1, self.dim()));
  auto* weights = static_cast<double*>(ctx.allocate_scratch(sizeof(double) * (k > 0 ? k : 1), 8));
  PTERON_CHECK(weights != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld weights",
               kOp, static_cast<long long>(k));
  const int32_t last = self.dim() - 1;
  const uint64_t stream = next_random_stream();
  int64_t* o = out.data<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t positive = 0;
    for (int64_t c = 0; c < k; ++c) {
      const double w =
          load_as_double(self, (self.dim() == 2 ? r * self.stride(0) : 0) + c * self.stride(last));
      PTERON_CHECK(std::isfinite(w) && w >= 0, Error::InvalidArgument,
                   "%s: probability tensor contains either inf, nan or element < 0", kOp);
      weights[c] = w;
      total += w;
      positive += w > 0;
    }
    PTERON_CHECK(total > 0, Error::InvalidArgument, "%s: row %lld sums to zero", kOp,
                 static_cast<long long>(r));
    PTERON_CHECK(replacement || samples <= positive, Error::InvalidArgument,
                 "%s: row %lld has %lld categories with weight, fewer than %lld samples without "
                 "replacement",
                 kOp, static_cast<long long>(r), static_cast<long long>(positive),
                 static_cast<long long>(samples));
    for (int64_t s = 0; s < samples; ++s) {
      const double u = uniform_double(stream, r * samples + s) * total;
      int64_t pick = -1;
      double cumulative = 0;
      for (int64_t c = 0; c < k; ++c) {
        if (weights[c] <= 0) continue;
        pick = c;  // the last category with weight, should rounding leave u past the sum
        cumulative += weights[c];
        if (u < cumulative) break;
      }
      o[(out.dim() == 2 ? r * out.stride(0) : 0) + s * out.stride(out.dim() - 1)] = pick;
      if (!replacement) {
        total -= weights[pick];
        weights[pick] = 0;
      }
    }
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::multinomial.out", multinomial_out, "TIB*T");

}  // namespace pteron
