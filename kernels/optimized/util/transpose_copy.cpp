#include "kernels/optimized/util/transpose_copy.h"

#include <cstring>

#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"

namespace pteron::optimized {
namespace {

// Strips of at least this many elements along a: each transpose reads a strip of contiguous
// input floats per output-innermost step and writes a strip of output rows.
constexpr int64_t kStrip = 16;
// Elements an item moves at least: a narrow innermost output dim (pixel shuffle's 2) made items
// of 32 floats, each paying its index arithmetic (0.74 ms for [1, 64, 2, 2, 48, 48]).
constexpr int64_t kItemElements = 1024;

int64_t strip_of(const TransposeCopy& t) {
  const int64_t nb = t.sizes[t.rank - 1];
  const int64_t wide = (kItemElements / nb + kStrip - 1) / kStrip * kStrip;
  return wide > kStrip ? wide : kStrip;
}

// Items are (every output dim but a and the innermost) x strips along a; each covers the whole
// innermost dim.
void run_strips(const TransposeCopy& t, int64_t begin, int64_t end) {
  const int32_t b = t.rank - 1;
  const int64_t na = t.sizes[t.a], nb = t.sizes[b];
  const int64_t strip = strip_of(t);
  const int64_t strips = (na + strip - 1) / strip;
  const opt::IsaKernels& isa = opt::isa_kernels();
  for (int64_t item = begin; item < end; ++item) {
    int64_t rest = item / strips;
    const int64_t a0 = (item % strips) * strip;
    int64_t io = 0, oo = 0;
    for (int32_t d = b - 1; d >= 0; --d) {
      if (d == t.a) continue;
      const int64_t i = rest % t.sizes[d];
      rest /= t.sizes[d];
      io += i * t.in_strides[d];
      oo += i * t.out_strides[d];
    }
    const int64_t count = a0 + strip < na ? strip : na - a0;
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
  const int64_t strip = strip_of(t);
  const int64_t strips = (na + strip - 1) / strip;
  opt::parallel_for(outer * strips, strip * nb,
                    [&](int64_t begin, int64_t end) { run_strips(t, begin, end); });
}

bool run_row_copy(const TransposeCopy& t) {
  // Merge each dim into the one inside it where the input steps over both contiguously (the
  // output always does); size-1 dims drop out.
  int64_t sizes[kMaxTensorDim], in_strides[kMaxTensorDim];
  int32_t n = 0;
  for (int32_t d = t.rank - 1; d >= 0; --d) {  // innermost first
    if (t.sizes[d] == 1) continue;
    if (n > 0 && in_strides[n - 1] * sizes[n - 1] == t.in_strides[d]) {
      sizes[n - 1] *= t.sizes[d];
    } else {
      sizes[n] = t.sizes[d];
      in_strides[n] = t.in_strides[d];
      ++n;
    }
  }
  // The innermost output dim of more than one element must be the input's contiguous one (a
  // size-1 innermost dim hides which is); else these are not rows.
  if (n > 0 && in_strides[0] != 1) return false;
  const int64_t row = n > 0 ? sizes[0] : 1;
  int64_t rows = 1;
  for (int32_t d = 1; d < n; ++d) rows *= sizes[d];
  if (row == 0 || rows == 0) return true;
  opt::parallel_for(rows, row, [&](int64_t begin, int64_t end) {
    // The first row's position by division, then an odometer over the outer dims.
    int64_t index[kMaxTensorDim] = {}, in = 0, rest = begin;
    for (int32_t d = 1; d < n; ++d) {
      index[d] = rest % sizes[d];
      rest /= sizes[d];
      in += index[d] * in_strides[d];
    }
    float* out = t.out + begin * row;
    for (int64_t r = begin; r < end; ++r, out += row) {
      std::memcpy(out, t.in + in, static_cast<size_t>(row) * sizeof(float));
      for (int32_t d = 1; d < n; ++d) {
        in += in_strides[d];
        if (++index[d] < sizes[d]) break;
        in -= in_strides[d] * sizes[d];
        index[d] = 0;
      }
    }
  });
  return true;
}

}  // namespace pteron::optimized
