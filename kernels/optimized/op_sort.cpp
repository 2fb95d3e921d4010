// aten::sort.values_stable with stable=True (torch.sort(..., stable=True)), float32 lines
// contiguous along dim, 256+ elements: an LSD radix sort (4 passes of 8 bits) of order-
// preserving 32-bit keys with 32-bit indices as payload. A stable sort's result is unique, so
// values and indices equal the portable merge sort's and torch's: keys map -0.0 to +0.0 and
// every NaN to the largest key (ATen's comparator treats those as equal and NaN above all);
// descending sorts the complemented keys, which keeps equal elements in index order as a
// stable descending sort does. Lines over threads, each with its own scratch. Everything else
// (not stable, where ATen's std::sort fixes the tie order, other dtypes, layouts, sort.values)
// runs the portable kernel.
#include <cstring>

#include "kernels/optimized/util/parallel_blocks.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/lines.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kOp = "aten::sort.values_stable";
constexpr int64_t kMinLength = 256;

inline uint32_t sort_key(float v, bool descending) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  uint32_t k;
  if (v != v) {
    k = 0xFFFFFFFFu;  // every NaN equal, above +inf
  } else if (v == 0.0f) {
    k = 0x80000000u;  // -0.0 == +0.0
  } else {
    k = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
  return descending ? ~k : k;
}

// Sorts line x[0, n) into keys/idx order; scratch holds 4n uint32.
void radix_line(const float* x, int64_t n, bool descending, uint32_t* scratch) {
  uint32_t* keys = scratch;
  uint32_t* idx = scratch + n;
  uint32_t* keys2 = scratch + 2 * n;
  uint32_t* idx2 = scratch + 3 * n;
  uint32_t hist[4][256] = {};
  for (int64_t j = 0; j < n; ++j) {
    const uint32_t k = sort_key(x[j], descending);
    keys[j] = k;
    idx[j] = static_cast<uint32_t>(j);
    ++hist[0][k & 255];
    ++hist[1][(k >> 8) & 255];
    ++hist[2][(k >> 16) & 255];
    ++hist[3][k >> 24];
  }
  for (int pass = 0; pass < 4; ++pass) {
    const int shift = pass * 8;
    // A pass where every key has the same digit moves nothing.
    if (hist[pass][(keys[0] >> shift) & 255] == static_cast<uint32_t>(n)) continue;
    uint32_t pos[256];
    uint32_t sum = 0;
    for (int d = 0; d < 256; ++d) {
      pos[d] = sum;
      sum += hist[pass][d];
    }
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t p = pos[(keys[j] >> shift) & 255]++;
      keys2[p] = keys[j];
      idx2[p] = idx[j];
    }
    std::swap(keys, keys2);
    std::swap(idx, idx2);
  }
  if (idx != scratch + n) std::memcpy(scratch + n, idx, static_cast<size_t>(n) * 4);
}

Error sort_values_stable(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& values = *args[4]->tensor;
  Tensor& indices = *args[5]->tensor;
  const bool stable = args[1]->tag == Tag::Bool && args[1]->b;
  int32_t dim = 0;
  if (!stable || self.dtype() != ScalarType::Float || values.dtype() != ScalarType::Float ||
      indices.dtype() != ScalarType::Long || self.dim() == 0 ||
      normalize_dim(kOp, args[2]->i, self.dim(), &dim) != Error::Ok ||
      self.size(dim) < kMinLength || self.stride(dim) != 1) {
    return call_portable(kOp, ctx, args);
  }
  PTERON_TRY(expect_out_shape(kOp, values, self.sizes().data(), self.dim()));
  PTERON_TRY(expect_out_shape(kOp, indices, self.sizes().data(), self.dim()));
  const int64_t n = self.size(dim);
  const int64_t lines = self.numel() / n;
  const int64_t blocks = opt::block_count(lines, n * 8);
  uint32_t* scratch =
      static_cast<uint32_t*>(ctx.allocate_scratch(static_cast<size_t>(blocks * 4 * n) * 4, 64));
  if (scratch == nullptr) return call_portable(kOp, ctx, args);
  const float* x = self.data<const float>();
  float* y = values.data<float>();
  int64_t* yi = indices.data<int64_t>();
  const int64_t vs = values.stride(dim), is = indices.stride(dim);
  const bool descending = args[3]->b;
  const Tensor* const ts[3] = {&self, &values, &indices};
  opt::parallel_blocks(lines, blocks, [&](int64_t b, int64_t l0, int64_t l1) {
    uint32_t* mine = scratch + b * 4 * n;
    int64_t line = 0;
    for_each_line<3>(self.sizes().data(), self.dim(), dim, ts, [&](const int64_t* off) {
      const int64_t l = line++;
      if (l < l0 || l >= l1) return;
      const float* row = x + off[0];
      radix_line(row, n, descending, mine);
      const uint32_t* order = mine + n;
      for (int64_t j = 0; j < n; ++j) {
        y[off[1] + j * vs] = row[order[j]];
        yi[off[2] + j * is] = order[j];
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::sort.values_stable", sort_values_stable, "T*IBTT");

}  // namespace pteron::optimized
