#include "kernels/optimized/util/transpose_copy.h"

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"

namespace pteron::optimized {
namespace {

// Strips of this many elements along a: each transpose reads kStrip contiguous input floats per
// output-innermost step and writes kStrip output rows.
constexpr int64_t kStrip = 16;

// Items are (every output dim but a and the innermost) x strips along a; each covers the whole
// innermost dim.
void run_strips(const TransposeCopy& t, int64_t begin, int64_t end) {
  const int32_t b = t.rank - 1;
  const int64_t na = t.sizes[t.a], nb = t.sizes[b];
  const int64_t strips = (na + kStrip - 1) / kStrip;
  const opt::IsaKernels& isa = opt::isa_kernels();
  for (int64_t item = begin; item < end; ++item) {
    int64_t rest = item / strips;
    const int64_t a0 = (item % strips) * kStrip;
    int64_t io = 0, oo = 0;
    for (int32_t d = b - 1; d >= 0; --d) {
      if (d == t.a) continue;
      const int64_t i = rest % t.sizes[d];
      rest /= t.sizes[d];
      io += i * t.in_strides[d];
      oo += i * t.out_strides[d];
    }
    const int64_t count = a0 + kStrip < na ? kStrip : na - a0;
    // rows: the innermost output dim (input stride in_strides[b]); columns: a (contiguous).
    isa.transpose(t.in + io + a0, t.in_strides[b], t.out + oo + a0 * t.out_strides[t.a],
                  t.out_strides[t.a], nb, count);
  }
}

}  // namespace

bool is_transpose_copy(const TransposeCopy& t) {
  return t.rank >= 2 && t.rank <= kMaxTensorDim && t.a >= 0 && t.a < t.rank - 1 &&
         t.in_strides[t.a] == 1 && t.out_strides[t.rank - 1] == 1;
}

void run_transpose_copy(const TransposeCopy& t) {
  int64_t outer = 1;
  for (int32_t d = 0; d < t.rank - 1; ++d) {
    if (d != t.a) outer *= t.sizes[d];
  }
  const int64_t na = t.sizes[t.a], nb = t.sizes[t.rank - 1];
  if (outer == 0 || na == 0 || nb == 0) return;
  const int64_t strips = (na + kStrip - 1) / kStrip;
  opt::parallel_for(outer * strips, kStrip * nb,
                    [&](int64_t begin, int64_t end) { run_strips(t, begin, end); });
}

}  // namespace pteron::optimized
