// aten::cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out)
//
// The scan and its dtype rules are util/cum_scan.h's (shared with cumsum). Integer products
// wrap on overflow (int64 accumulator), as torch's do in practice, where C++ would leave it
// undefined.
#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/cum_scan.h"

namespace pteron {
namespace {

// acc * v, wrapping for integers.
template <typename A>
inline A times(A acc, A v) {
  if constexpr (std::is_integral_v<A>)
    return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(v));
  else
    return acc * v;
}

Error cumprod_out(KernelContext&, Span<EValue*> args) {
  return cum_scan::scan_out("aten::cumprod.out", args, 1,
                            [](auto acc, auto v) { return times(acc, v); });
}

}  // namespace

PTERON_KERNEL("aten::cumprod.out", cumprod_out, "TIiT");

}  // namespace pteron
