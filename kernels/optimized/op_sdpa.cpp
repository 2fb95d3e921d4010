// pteron::sdpa.out(Tensor q, Tensor k_t, Tensor v, Tensor? mask, float scale, int heads,
//     bool safe_softmax, *, Tensor(a!) out) -> Tensor(a!)
// Fused scaled dot-product attention, the op compiler/passes/fuse_attention.cpp puts in place of
// bmm -> scale -> mask -> softmax -> bmm:
//   out[n] = softmax(scale * q[n] @ k_t[n] + mask) @ v[n]
// with q [N, Lq, D], k_t [N, D, Lk] (keys already transposed, as the graph's first bmm takes
// them), v [N, Lk, Dv], out [N, Lq, Dv], N = batch * heads. The mask (optional) broadcasts
// against [N / heads, heads, Lq, Lk]: float32 is added to the scores, bool true means "masked
// out" (masked_fill(mask, -inf)). A query row whose every key is masked out gives NaN, as
// softmax does, or zeros with `safe_softmax` (torch's _safe_softmax, which
// nn.MultiheadAttention's math path uses). float32, default dim order, Dv <= 512. Flash-attention
// style: keys are visited in blocks with a running max and sum, so no [Lq, Lk] score matrix is ever
// stored; (n, query block) pairs are split over threads.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "pteron::sdpa.out";
constexpr int64_t kQueryBlock = 16;
constexpr int64_t kMaxDv = 512;

Error sdpa_out(KernelContext&, Span<EValue*> args) {
  const Tensor& q = *args[0]->tensor;
  const Tensor& kt = *args[1]->tensor;
  const Tensor& v = *args[2]->tensor;
  const Tensor* mask = args[3]->is_none() ? nullptr : args[3]->tensor;
  const float scale = static_cast<float>(args[4]->scalar_as_double());
  const int64_t heads = args[5]->i;
  const bool safe_softmax = args[6]->b;
  Tensor& out = *args[7]->tensor;
  for (const Tensor* t : {&q, &kt, &v, static_cast<const Tensor*>(&out)}) {
    PTERON_CHECK(t->dtype() == ScalarType::Float && t->dim() == 3, Error::InvalidArgument,
                 "%s: q, k_t, v and out must be 3-d float32 tensors", kOp);
    PTERON_CHECK(is_row_major(*t), Error::NotSupported,
                 "%s: only the default dim order is supported", kOp);
  }
  const int64_t N = q.size(0), Lq = q.size(1), D = q.size(2), Lk = kt.size(2), Dv = v.size(2);
  PTERON_CHECK(kt.size(0) == N && v.size(0) == N && kt.size(1) == D && v.size(1) == Lk,
               Error::InvalidArgument,
               "%s: shapes do not match: q [%d,%d,%d], k_t [%d,%d,%d], v [%d,%d,%d]", kOp,
               q.size(0), q.size(1), q.size(2), kt.size(0), kt.size(1), kt.size(2), v.size(0),
               v.size(1), v.size(2));
  PTERON_CHECK(Dv <= kMaxDv, Error::NotSupported, "%s: value head size %lld above %lld", kOp,
               static_cast<long long>(Dv), static_cast<long long>(kMaxDv));
  PTERON_CHECK(heads >= 1 && N % heads == 0, Error::InvalidArgument,
               "%s: heads = %lld does not divide the batch of %lld", kOp,
               static_cast<long long>(heads), static_cast<long long>(N));
  const int32_t out_sizes[] = {static_cast<int32_t>(N), static_cast<int32_t>(Lq),
                               static_cast<int32_t>(Dv)};
  PTERON_TRY(expect_out_shape(kOp, out, out_sizes, 3));

  // Mask strides for (batch, head, query, key), 0 on broadcast dims.
  int64_t ms[4] = {0, 0, 0, 0};
  if (mask != nullptr) {
    PTERON_CHECK(mask->dtype() == ScalarType::Float || mask->dtype() == ScalarType::Bool,
                 Error::InvalidArgument, "%s: mask must be float32 or bool, got %s", kOp,
                 scalar_type_name(mask->dtype()));
    PTERON_CHECK(mask->dim() <= 4, Error::InvalidArgument, "%s: mask has %d dims (at most 4)", kOp,
                 mask->dim());
    const int64_t full[4] = {N / heads, heads, Lq, Lk};
    for (int32_t d = 0; d < mask->dim(); ++d) {
      const int32_t at = 4 - mask->dim() + d;
      const int64_t size = mask->size(d);
      PTERON_CHECK(size == full[at] || size == 1, Error::InvalidArgument,
                   "%s: mask dim %d of size %lld does not broadcast to %lld", kOp, d,
                   static_cast<long long>(size), static_cast<long long>(full[at]));
      ms[at] = size == 1 ? 0 : mask->stride(d);
    }
  }
  if (out.numel() == 0) return Error::Ok;

  AttentionSlice base{q.data<const float>(),
                      kt.data<const float>(),
                      v.data<const float>(),
                      out.data<float>(),
                      mask ? mask->const_data() : nullptr,
                      mask != nullptr && mask->dtype() == ScalarType::Bool,
                      D,
                      Lk,
                      Dv,
                      Dv,
                      ms[2],
                      ms[3],
                      D,
                      Dv,
                      Lk,
                      scale,
                      safe_softmax};
  const IsaKernels& isa = isa_kernels();
  const int64_t blocks = (Lq + kQueryBlock - 1) / kQueryBlock;
  const size_t mask_elem = mask ? mask->element_size() : 0;
  parallel_for(N * blocks, kQueryBlock * Lk * (D + Dv), [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      const int64_t n = w / blocks, i0 = (w % blocks) * kQueryBlock;
      const int64_t i1 = i0 + kQueryBlock < Lq ? i0 + kQueryBlock : Lq;
      AttentionSlice s = base;
      s.q += n * Lq * D;
      s.k_t += n * D * Lk;
      s.v += n * Lk * Dv;
      s.out += n * Lq * Dv;
      if (s.mask != nullptr) {
        const int64_t offset = (n / heads) * ms[0] + (n % heads) * ms[1];
        s.mask = static_cast<const char*>(s.mask) + offset * static_cast<int64_t>(mask_elem);
      }
      isa.attention(s, i0, i1);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::sdpa.out", sdpa_out, "TTTtDIBT");

}  // namespace pteron::opt
