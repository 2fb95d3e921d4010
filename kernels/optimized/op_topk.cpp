// aten::topk.values, float32 lines contiguous along dim with k * 64 <= n (where ATen's CPU
// kernel takes std::partial_sort): the same heap selection without building the n-element
// (value, index) array first. The first k pairs are heapified; the rest of the line is scanned
// in blocks of 64 against the heap's top, vectorised, and only blocks holding a candidate are
// visited one element at a time, each candidate replacing the top exactly as libstdc++'s
// __heap_select does (__pop_heap onto it), then std::sort_heap. Equal inputs give the portable
// kernel's (and torch's) values and indices, ties included. Lines split over threads. Anything
// else runs the portable kernel.
#include <algorithm>
#include <cmath>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/lines.h"
#include "kernels/portable/util/sort_order.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::topk.values";
using P = Pair<float>;

// libstdc++'s __adjust_heap(first, 0, len, value): sift the hole at the top down to a leaf, then
// push `value` up from there.
void replace_top(P* h, int64_t len, P value, const Before<float>& before) {
  int64_t hole = 0, child = 0;
  while (child < (len - 1) / 2) {
    child = 2 * (child + 1);
    if (before(h[child], h[child - 1])) --child;
    h[hole] = h[child];
    hole = child;
  }
  if ((len & 1) == 0 && child == (len - 2) / 2) {
    child = 2 * (child + 1);
    h[hole] = h[child - 1];
    hole = child - 1;
  }
  int64_t parent = (hole - 1) / 2;
  while (hole > 0 && before(h[parent], value)) {
    h[hole] = h[parent];
    hole = parent;
    parent = (hole - 1) / 2;
  }
  h[hole] = value;
}

// True if some x[0, n) would enter the heap whose top is t: before({x}, {t}).
bool any_candidate(const float* x, int64_t n, float t, bool largest) {
  int32_t any = 0;
  if (largest) {
    if (t != t) return false;  // nothing comes before a NaN
    for (int64_t i = 0; i < n; ++i) any |= static_cast<int32_t>(x[i] > t) | (x[i] != x[i]);
  } else {
    if (t != t) {
      for (int64_t i = 0; i < n; ++i) any |= static_cast<int32_t>(x[i] == x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) any |= static_cast<int32_t>(x[i] < t);
    }
  }
  return any != 0;
}

void select_line(const float* x, int64_t n, int64_t k, bool largest, P* h) {
  const Before<float> before{largest};
  for (int64_t j = 0; j < k; ++j) h[j] = {x[j], j};
  std::make_heap(h, h + k, before);
  constexpr int64_t kBlock = 64;
  for (int64_t j = k; j < n;) {
    const int64_t end = std::min(j + kBlock, n);
    if (!any_candidate(x + j, end - j, h[0].v, largest)) {
      j = end;
      continue;
    }
    for (; j < end; ++j) {
      const P p{x[j], j};
      if (before(p, h[0])) replace_top(h, k, p, before);
    }
  }
  std::sort_heap(h, h + k, before);
}

Error topk_values(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const int64_t k = args[1]->i;
  Tensor& values = *args[5]->tensor;
  Tensor& indices = *args[6]->tensor;
  int32_t dim = 0;
  if (self.dtype() != ScalarType::Float || values.dtype() != ScalarType::Float ||
      indices.dtype() != ScalarType::Long || self.dim() == 0 ||
      normalize_dim(kOp, args[2]->i, self.dim(), &dim) != Error::Ok) {
    return call_portable(kOp, ctx, args);
  }
  const int64_t n = self.size(dim);
  if (k <= 0 || k * 64 > n || self.stride(dim) != 1) return call_portable(kOp, ctx, args);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < self.dim(); ++d) sizes[d] = self.size(d);
  sizes[dim] = static_cast<int32_t>(k);
  PTERON_TRY(expect_out_shape(kOp, values, sizes, self.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, sizes, self.dim()));
  const int64_t lines = self.numel() / n;
  const int64_t blocks = opt::block_count(lines, n);
  P* heaps = static_cast<P*>(ctx.allocate_scratch(static_cast<size_t>(blocks * k) * sizeof(P), 64));
  if (heaps == nullptr) return call_portable(kOp, ctx, args);
  // Line offsets, walked once up front so blocks can start anywhere.
  const float* x = self.data<const float>();
  float* y = values.data<float>();
  int64_t* yi = indices.data<int64_t>();
  const int64_t vs = values.stride(dim), is = indices.stride(dim);
  const bool largest = args[3]->b;
  const Tensor* const ts[3] = {&self, &values, &indices};
  opt::parallel_blocks(lines, blocks, [&](int64_t b, int64_t l0, int64_t l1) {
    P* h = heaps + b * k;
    int64_t line = 0;
    for_each_line<3>(self.sizes().data(), self.dim(), dim, ts, [&](const int64_t* off) {
      const int64_t mine = line++;
      if (mine < l0 || mine >= l1) return;
      select_line(x + off[0], n, k, largest, h);
      for (int64_t j = 0; j < k; ++j) {
        y[off[1] + j * vs] = h[j].v;
        yi[off[2] + j * is] = h[j].i;
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::topk.values", topk_values, "TIIBBTT");

}  // namespace pteron::optimized
