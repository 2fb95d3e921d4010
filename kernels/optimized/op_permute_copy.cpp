// aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out), optimized for 4-byte
// elements in the default dim order when the permutation moves the input's innermost dim:
// the copy is then a batch of 2-D transposes, done in cache-sized tiles (rows read and written
// 16 elements at a time) and split over threads. When the innermost dim stays innermost the
// portable kernel's contiguous row copies are already right, so it handles that case, other
// dtypes, layouts and errors.
#include <cstring>

#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "aten::permute_copy.out";
constexpr int64_t kTile = 16;

// out[.., a, .., b] = in[..] where reading along `a` is contiguous in the input and `b` is the
// output's innermost dim. `outer` walks every other output dim.
struct Transpose {
  const uint32_t* in;
  uint32_t* out;
  int32_t dim;
  int64_t sizes[kMaxTensorDim];       // output sizes
  int64_t in_strides[kMaxTensorDim];  // input stride of each output dim
  int64_t out_strides[kMaxTensorDim];
  int32_t a, b;
};

void run_tiles(const Transpose& t, int64_t outer_begin, int64_t outer_end) {
  const int64_t na = t.sizes[t.a], nb = t.sizes[t.b];
  const int64_t tiles_a = (na + kTile - 1) / kTile;
  const int64_t in_b = t.in_strides[t.b], out_a = t.out_strides[t.a];
  for (int64_t w = outer_begin; w < outer_end; ++w) {
    // w = outer index * tiles_a + tile along a
    int64_t rest = w / tiles_a;
    const int64_t a0 = (w % tiles_a) * kTile;
    int64_t io = 0, oo = 0;
    for (int32_t d = t.dim - 1; d >= 0; --d) {
      if (d == t.a || d == t.b) continue;
      const int64_t i = rest % t.sizes[d];
      rest /= t.sizes[d];
      io += i * t.in_strides[d];
      oo += i * t.out_strides[d];
    }
    const int64_t a1 = a0 + kTile < na ? a0 + kTile : na;
    for (int64_t b0 = 0; b0 < nb; b0 += kTile) {
      const int64_t b1 = b0 + kTile < nb ? b0 + kTile : nb;
      for (int64_t a = a0; a < a1; ++a) {
        const uint32_t* src = t.in + io + a;
        uint32_t* dst = t.out + oo + a * out_a;
        for (int64_t b = b0; b < b1; ++b) dst[b] = src[b * in_b];
      }
    }
  }
}

Error permute_copy_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Span<const int64_t> dims = args[1]->int_list;
  Tensor& out = *args[2]->tensor;
  const int32_t rank = self.dim();
  if (self.element_size() != 4 || out.dtype() != self.dtype() || !is_row_major(self) ||
      !is_row_major(out) || static_cast<int32_t>(dims.size()) != rank || rank < 2) {
    return optimized::call_portable(kOp, ctx, args);
  }
  Transpose t{self.data<const uint32_t>(), out.data<uint32_t>(), rank, {}, {}, {}, -1, rank - 1};
  int32_t sizes[kMaxTensorDim];
  uint32_t seen = 0;
  for (int32_t i = 0; i < rank; ++i) {
    int32_t d = 0;
    if (normalize_dim(kOp, dims[i], rank, &d) != Error::Ok || (seen & (1u << d))) {
      return optimized::call_portable(kOp, ctx, args);  // it reports the bad dims
    }
    seen |= 1u << d;
    sizes[i] = self.size(d);
    t.sizes[i] = sizes[i];
    t.in_strides[i] = self.stride(d);
    if (d == rank - 1) t.a = i;
  }
  if (t.a == t.b || self.size(rank - 1) == 1 || t.sizes[t.b] == 1) {
    return optimized::call_portable(kOp, ctx,
                                    args);  // innermost stays innermost: rows copy as they are
  }
  PTERON_TRY(expect_out_shape(kOp, out, sizes, rank));
  int64_t stride = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    t.out_strides[d] = stride;
    stride *= t.sizes[d];
  }
  if (out.numel() == 0) return Error::Ok;
  const int64_t tiles_a = (t.sizes[t.a] + kTile - 1) / kTile;
  // Outer positions (every dim but a and b) x tiles along a; each item covers all of b.
  const int64_t work = out.numel() / (t.sizes[t.a] * t.sizes[t.b]) * tiles_a;
  parallel_for(work, kTile * t.sizes[t.b],
               [&](int64_t begin, int64_t end) { run_tiles(t, begin, end); });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::permute_copy.out", permute_copy_out, "TLT");

}  // namespace pteron::opt
