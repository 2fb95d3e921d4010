// aten::randint.out(SymInt high, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)
// aten::randint.low_out(SymInt low, SymInt high, SymInt[] size, *, Tensor(a!) out)
// Integers uniform in [low, high) (low 0) from pteron's seeded generator (util/random.h), in
// out's dtype (int64 unless the model asked another); high <= low and a range out's dtype cannot
// hold are refused, as torch. Not decomposed by run_decompositions().
#include <cmath>

#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/random.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error randint_into(const char* op, int64_t low, int64_t high, Span<const int64_t> size,
                   Tensor& out) {
  PTERON_CHECK(high > low, Error::InvalidArgument,
               "%s: random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld", op,
               static_cast<long long>(low), static_cast<long long>(high));
  PTERON_CHECK(out.dtype() != ScalarType::Bool, Error::NotSupported, "%s: bool out", op);
  PTERON_TRY(expect_out_size_list(op, size, out));
  PTERON_CHECK(
      low >= smallest_exact_integer(out.dtype()) && high - 1 <= largest_exact_integer(out.dtype()),
      Error::InvalidArgument, "%s: [%lld, %lld) does not fit dtype %s", op,
      static_cast<long long>(low), static_cast<long long>(high), scalar_type_name(out.dtype()));
  const uint64_t stream = next_random_stream();
  const double span = static_cast<double>(high) - static_cast<double>(low);
  dispatch_dtype(out.dtype(), kRealTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = out.data<T>();
    for (int64_t k = 0; k < out.numel(); ++k) {
      int64_t offset = static_cast<int64_t>(std::floor(uniform_double(stream, k) * span));
      if (offset >= high - low) offset = high - low - 1;  // rounding at the top of the range
      p[k] = store_value<T>(static_cast<double>(low + offset));
    }
  });
  return Error::Ok;
}

Error randint_out(KernelContext&, Span<EValue*> args) {
  return randint_into("aten::randint.out", 0, args[0]->i, args[1]->int_list, *args[2]->tensor);
}

Error randint_low_out(KernelContext&, Span<EValue*> args) {
  return randint_into("aten::randint.low_out", args[0]->i, args[1]->i, args[2]->int_list,
                      *args[3]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::randint.out", randint_out, "ILT");
PTERON_KERNEL("aten::randint.low_out", randint_low_out, "IILT");

}  // namespace pteron
