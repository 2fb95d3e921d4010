#include "kernels/portable/util/dim_order.h"

namespace pteron {

bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  if (a.numel() == 0) return true;
  for (int32_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

Error check_dim_order_arg(const char* op, const EValue& dim_order, const Tensor& self,
                          const Tensor& out) {
  if (dim_order.is_none()) {
    if (!same_layout(self, out)) {
      return fail(Error::InvalidArgument,
                  "%s: dim_order is None (keep self's layout) but out has a different dim order",
                  op);
    }
    return Error::Ok;
  }
  const Span<const int64_t> order = dim_order.int_list;
  if (static_cast<int32_t>(order.size()) != out.dim()) {
    return fail(Error::InvalidArgument, "%s: dim_order has %zu entries for a %d-d tensor", op,
                order.size(), out.dim());
  }
  uint32_t seen = 0;
  for (const int64_t d : order) {
    if (d < 0 || d >= out.dim() || (seen & (1u << d))) {
      return fail(Error::InvalidArgument, "%s: dim_order is not a permutation of 0..%d", op,
                  out.dim() - 1);
    }
    seen |= 1u << d;
  }
  if (out.numel() == 0) return Error::Ok;
  // Strides the requested order gives out's shape, compared on the dims that matter.
  int64_t running = 1;
  for (int32_t i = out.dim() - 1; i >= 0; --i) {
    const int32_t d = static_cast<int32_t>(order[i]);
    if (out.size(d) != 1 && out.stride(d) != running) {
      return fail(Error::InvalidArgument,
                  "%s: out's dim order does not match the requested dim_order", op);
    }
    running *= out.size(d);
  }
  return Error::Ok;
}

}  // namespace pteron
