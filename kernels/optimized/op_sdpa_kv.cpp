// pteron::sdpa_kv.out(Tensor q, Tensor k, Tensor v, Tensor? mask, float scale, int heads,
//     bool safe_softmax, *, Tensor(a!) out) -> Tensor(a!)
// Attention over a KV cache read in place, the op compiler/passes/attention_kv.cpp puts in place
// of pteron::sdpa when its keys and values are views of a cache (transformers' repeat_kv expand
// of grouped-query heads, the keys' transpose, a constant scale of the keys):
//   out[b * heads + h] = softmax(scale * q[b * heads + h] @ k[b, h / rep]^T + mask) @ v[b, h / rep]
// q [B * heads, Lq, D], k [B, Hkv, Lk, D], v [B, Hkv, Lk, Dv] (the caches as stored), out
// [B * heads, Lq, Dv], rep = heads / Hkv. The mask broadcasts against [B, heads, Lq, Lk] (float
// added, bool true = masked out); the rows of the rep heads sharing a K/V head are one slice, so
// each cache row is read once for all of them (decode: 3 query rows per read for 12 heads over
// 4). Blocks of keys the mask hides from every row (the causal mask's future) are skipped. With
// many query rows per K/V head (prefill) the keys are first transposed into scratch, the layout
// the score loop reads fastest. float32, default dim order, Dv <= 512.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr const char* kOp = "pteron::sdpa_kv.out";
constexpr int64_t kRowBlock = 16;
constexpr int64_t kMaxDv = 512;
// Query rows per K/V head from which the keys are transposed once (into scratch) rather than
// read as rows by every block of four query rows.
constexpr int64_t kTransposeRows = 32;

Error sdpa_kv_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& q = *args[0]->tensor;
  const Tensor& k = *args[1]->tensor;
  const Tensor& v = *args[2]->tensor;
  const Tensor* mask = args[3]->is_none() ? nullptr : args[3]->tensor;
  const float scale = static_cast<float>(args[4]->scalar_as_double());
  const int64_t heads = args[5]->i;
  const bool safe_softmax = args[6]->b;
  Tensor& out = *args[7]->tensor;
  PTERON_CHECK(q.dim() == 3 && k.dim() == 4 && v.dim() == 4, Error::InvalidArgument,
               "%s: q must be 3-d [B * heads, Lq, D], k and v 4-d [B, Hkv, Lk, D]", kOp);
  for (const Tensor* t : {&q, &k, &v, static_cast<const Tensor*>(&out)}) {
    PTERON_CHECK(t->dtype() == ScalarType::Float, Error::InvalidArgument,
                 "%s: q, k, v and out must be float32", kOp);
    PTERON_CHECK(is_row_major(*t), Error::NotSupported,
                 "%s: only the default dim order is supported", kOp);
  }
  const int64_t N = q.size(0), Lq = q.size(1), D = q.size(2);
  const int64_t B = k.size(0), Hkv = k.size(1), Lk = k.size(2), Dv = v.size(3);
  PTERON_CHECK(heads >= 1 && Hkv >= 1 && heads % Hkv == 0 && N == B * heads, Error::InvalidArgument,
               "%s: %lld query heads do not fit q's %lld slices over %lld batch(es) of %lld "
               "key/value heads",
               kOp, static_cast<long long>(heads), static_cast<long long>(N),
               static_cast<long long>(B), static_cast<long long>(Hkv));
  PTERON_CHECK(k.size(3) == D && v.size(0) == B && v.size(1) == Hkv && v.size(2) == Lk,
               Error::InvalidArgument,
               "%s: shapes do not match: q [%d,%d,%d], k [%d,%d,%d,%d], v [%d,%d,%d,%d]", kOp,
               q.size(0), q.size(1), q.size(2), k.size(0), k.size(1), k.size(2), k.size(3),
               v.size(0), v.size(1), v.size(2), v.size(3));
  PTERON_CHECK(Dv <= kMaxDv, Error::NotSupported, "%s: value head size %lld above %lld", kOp,
               static_cast<long long>(Dv), static_cast<long long>(kMaxDv));
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
    const int64_t full[4] = {B, heads, Lq, Lk};
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

  const IsaKernels& isa = isa_kernels();
  const int64_t rep = heads / Hkv, rows = rep * Lq;  // query rows per K/V head
  // Keys as stored ([Lk, D] rows), or transposed once per K/V head into scratch.
  const float* keys = k.data<const float>();
  int64_t kt_row = 1, kt_col = D;
  if (rows >= kTransposeRows) {
    auto* kt = static_cast<float*>(
        ctx.allocate_scratch(static_cast<size_t>(B * Hkv * D * Lk) * sizeof(float), 64));
    PTERON_CHECK(kt != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld keys", kOp,
                 static_cast<long long>(B * Hkv * Lk));
    parallel_for(B * Hkv, Lk * D, [&](int64_t h0, int64_t h1) {
      for (int64_t h = h0; h < h1; ++h)
        isa.transpose(keys + h * Lk * D, D, kt + h * D * Lk, Lk, Lk, D);
    });
    keys = kt;
    kt_row = Lk;
    kt_col = 1;
  }

  AttentionSlice base{};
  base.q = q.data<const float>();
  base.k_t = keys;
  base.v = v.data<const float>();
  base.out = out.data<float>();
  base.mask = mask ? mask->const_data() : nullptr;
  base.mask_is_bool = mask != nullptr && mask->dtype() == ScalarType::Bool;
  base.q_row = D;
  base.kt_row = kt_row;
  base.kt_col = kt_col;
  base.v_row = Dv;
  base.out_row = Dv;
  base.mask_row = ms[2];
  base.mask_col = ms[3];
  base.head_rows = Lq;
  base.mask_head = ms[1];
  base.D = D;
  base.Dv = Dv;
  base.Lk = Lk;
  base.scale = scale;
  base.zero_masked_rows = safe_softmax;
  const int64_t blocks = (rows + kRowBlock - 1) / kRowBlock;
  const size_t mask_elem = mask ? mask->element_size() : 0;
  parallel_for(B * Hkv * blocks, kRowBlock * Lk * (D + Dv), [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      const int64_t kv = w / blocks, b = kv / Hkv, g = kv % Hkv;
      const int64_t i0 = (w % blocks) * kRowBlock;
      const int64_t i1 = i0 + kRowBlock < rows ? i0 + kRowBlock : rows;
      AttentionSlice s = base;
      const int64_t first_head = b * heads + g * rep;  // q / out slices of this K/V head
      s.q += first_head * Lq * D;
      s.out += first_head * Lq * Dv;
      s.k_t += kv * Lk * D;
      s.v += kv * Lk * Dv;
      if (s.mask != nullptr) {
        const int64_t offset = b * ms[0] + g * rep * ms[1];
        s.mask = static_cast<const char*>(s.mask) + offset * static_cast<int64_t>(mask_elem);
      }
      isa.attention(s, i0, i1);
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::sdpa_kv.out", sdpa_kv_out, "TTTtDIBT");

}  // namespace pteron::opt
