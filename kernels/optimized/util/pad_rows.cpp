#include "kernels/optimized/util/pad_rows.h"

#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"

namespace pteron::optimized {
namespace {

struct PadGeometry {
  int32_t k = 0;
  int64_t planes = 1;
  int64_t in[3] = {}, out[3] = {}, before[3] = {};  // spatial dims, outermost first
};

inline int64_t source_index(int64_t o, int64_t n, int64_t before, PadMode mode) {
  int64_t i = o - before;
  if (mode == PadMode::Reflect) {
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  } else {
    i = i < 0 ? 0 : (i >= n ? n - 1 : i);
  }
  return i;
}

template <typename W>
void pad_rows(const PadGeometry& g, PadMode mode, const W* x, W* y) {
  const int32_t last = g.k - 1;
  const int64_t n = g.in[last], ow = g.out[last], left = g.before[last];
  const int64_t right = ow - n - left;
  int64_t out_rows_per_plane = 1, in_rows_per_plane = 1;
  for (int32_t d = 0; d < last; ++d) {
    out_rows_per_plane *= g.out[d];
    in_rows_per_plane *= g.in[d];
  }
  const int64_t rows = g.planes * out_rows_per_plane;
  opt::parallel_for(rows, ow, [&](int64_t r0, int64_t r1) {
    // Output row r0's plane and outer padded indices, then counted up row by row (divisions
    // per row cost as much as a short row's copy).
    int64_t plane = r0 / out_rows_per_plane, o[2] = {0, 0};
    for (int64_t rem = r0 % out_rows_per_plane, d = last - 1; d >= 0; --d) {
      o[d] = rem % g.out[d];
      rem /= g.out[d];
    }
    for (int64_t r = r0; r < r1; ++r) {
      int64_t src = 0, step = 1;
      for (int32_t d = last - 1; d >= 0; --d) {
        src += source_index(o[d], g.in[d], g.before[d], mode) * step;
        step *= g.in[d];
      }
      const W* row = x + (plane * in_rows_per_plane + src) * n;
      W* dst = y + r * ow;
      if (mode == PadMode::Reflect) {
        for (int64_t j = 0; j < left; ++j) dst[j] = row[left - j];
        std::memcpy(dst + left, row, static_cast<size_t>(n) * sizeof(W));
        for (int64_t j = 0; j < right; ++j) dst[left + n + j] = row[n - 2 - j];
      } else {
        for (int64_t j = 0; j < left; ++j) dst[j] = row[0];
        std::memcpy(dst + left, row, static_cast<size_t>(n) * sizeof(W));
        for (int64_t j = 0; j < right; ++j) dst[left + n + j] = row[n - 1];
      }
      int32_t d = last - 1;
      for (; d >= 0; --d) {
        if (++o[d] < g.out[d]) break;
        o[d] = 0;
      }
      if (d < 0) ++plane;
    }
  });
}

}  // namespace

Error pad_rows_out(const char* op, int32_t k, PadMode mode, KernelContext& ctx,
                   Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> pad = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  const int32_t dim = self.dim();
  if ((dim != k + 1 && dim != k + 2) || pad.size() != static_cast<size_t>(2 * k) ||
      out.dtype() != self.dtype() || !is_row_major(self)) {
    return call_portable(op, ctx, args);
  }
  PadGeometry g;
  g.k = k;
  for (int32_t d = 0; d < dim - k; ++d) g.planes *= self.size(d);
  if (g.planes == 0) return call_portable(op, ctx, args);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < dim; ++d) sizes[d] = self.size(d);
  for (int32_t p = 0; p < k; ++p) {
    const int32_t d = dim - 1 - p, s = k - 1 - p;
    const int64_t n = self.size(d), before = pad[2 * p], after = pad[2 * p + 1];
    const bool ok = n > 0 && before >= 0 && after >= 0 && before < (int64_t{1} << 30) &&
                    after < (int64_t{1} << 30) &&
                    (mode == PadMode::Replicate || (before < n && after < n)) &&
                    n + before + after <= INT32_MAX;
    if (!ok) return call_portable(op, ctx, args);
    g.in[s] = n;
    g.before[s] = before;
    g.out[s] = n + before + after;
    sizes[d] = static_cast<int32_t>(g.out[s]);
  }
  PTERON_TRY(expect_out_shape(op, out, sizes, dim));
  if (!is_row_major(out)) return call_portable(op, ctx, args);
  const void* x = self.const_data();
  void* y = out.mutable_data();
  switch (self.element_size()) {
    case 1:
      pad_rows(g, mode, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y));
      break;
    case 2:
      pad_rows(g, mode, static_cast<const uint16_t*>(x), static_cast<uint16_t*>(y));
      break;
    case 4:
      pad_rows(g, mode, static_cast<const uint32_t*>(x), static_cast<uint32_t*>(y));
      break;
    default:
      pad_rows(g, mode, static_cast<const uint64_t*>(x), static_cast<uint64_t*>(y));
      break;
  }
  return Error::Ok;
}

}  // namespace pteron::optimized
