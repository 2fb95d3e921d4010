// llama::custom_sdpa.out(Tensor query, Tensor key, Tensor value, SymInt start_pos,
// Tensor? attn_mask=None, float drpout_p=0., bool is_causal=False, float? scale=None, *,
// Tensor(a!) out) -> Tensor(a!): ExecuTorch's LLM custom op (extension/llm/custom_ops, what
// export_llama's use_sdpa_with_kv_cache emits) attending a step's queries over the KV cache
// that llama::update_cache wrote.
//
// Layouts are [batch, positions, heads, head_dim] (not SDPA's [batch, heads, positions, dim]):
// query [B, S, Hq, D], key [B, L, Hkv, D], value [B, L, Hkv, Dv], out [B, S, Hq, Dv], with
// grouped-query heads (query head h reads KV head h / (Hq / Hkv)). Query row i sits at position
// start_pos + i. Without a mask only the cache's first start_pos + S positions are read (the
// rest is not written yet); is_causal further limits row i to keys 0..start_pos + i. With a
// float mask [S, L] every key is read and the mask is added to the scores (start_pos unused).
// scale defaults to 1/sqrt(D); dropout is ignored (inference). Scores, softmax and sums are
// float (float, half and bf16 tensors). Written from the op's schema, its Python meta checks
// and how the llama model calls it, not from ExecuTorch's C++.
#include <cmath>
#include <limits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/float_dispatch.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "llama::custom_sdpa.out";

Error check_shapes(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                   int64_t start, bool causal) {
  PTERON_CHECK(q.dim() == 4 && k.dim() == 4 && v.dim() == 4, Error::InvalidArgument,
               "%s: query, key and value must be 4-d [batch, positions, heads, head_dim], got "
               "%d-d, %d-d and %d-d",
               kOp, q.dim(), k.dim(), v.dim());
  PTERON_CHECK(k.dtype() == q.dtype() && v.dtype() == q.dtype(), Error::InvalidArgument,
               "%s: query, key and value must share a dtype, got %s, %s and %s", kOp,
               scalar_type_name(q.dtype()), scalar_type_name(k.dtype()),
               scalar_type_name(v.dtype()));
  PTERON_CHECK(k.size(0) == q.size(0) && v.size(0) == q.size(0) && k.size(1) == v.size(1) &&
                   k.size(2) == v.size(2) && k.size(3) == q.size(3),
               Error::InvalidArgument,
               "%s: query [%d, %d, %d, %d] does not fit key [%d, %d, %d, %d] and value [%d, %d, "
               "%d, %d]",
               kOp, q.size(0), q.size(1), q.size(2), q.size(3), k.size(0), k.size(1), k.size(2),
               k.size(3), v.size(0), v.size(1), v.size(2), v.size(3));
  PTERON_CHECK(k.size(2) > 0 && q.size(2) % k.size(2) == 0, Error::InvalidArgument,
               "%s: %d query heads do not group over %d KV heads", kOp, q.size(2), k.size(2));
  if (mask != nullptr) {
    PTERON_CHECK(!causal, Error::InvalidArgument, "%s: attn_mask and is_causal together", kOp);
    PTERON_CHECK(mask->dim() == 2 && mask->size(0) == q.size(1) && mask->size(1) == k.size(1) &&
                     (mask->dtype() == ScalarType::Float || mask->dtype() == q.dtype()),
                 Error::InvalidArgument,
                 "%s: attn_mask must be float [%d, %d] (queries, keys), got %s %d-d", kOp,
                 q.size(1), k.size(1), scalar_type_name(mask->dtype()), mask->dim());
  } else {
    PTERON_CHECK(start >= 0 && start + q.size(1) <= k.size(1), Error::InvalidArgument,
                 "%s: positions [%lld, %lld) do not fit a cache of %d positions", kOp,
                 static_cast<long long>(start), static_cast<long long>(start + q.size(1)),
                 k.size(1));
  }
  return Error::Ok;
}

template <typename T>
float mask_at(const Tensor& mask, int64_t i, int64_t j) {
  const int64_t at = i * mask.stride(0) + j * mask.stride(1);
  if (mask.dtype() == ScalarType::Float) return mask.data<float>()[at];
  return static_cast<float>(load_value(mask.data<T>()[at]));
}

Error custom_sdpa_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& q = *args[0]->tensor;
  const Tensor& k = *args[1]->tensor;
  const Tensor& v = *args[2]->tensor;
  const int64_t start = args[3]->i;
  const Tensor* mask = args[4]->tag == Tag::Tensor ? args[4]->tensor : nullptr;
  const bool causal = args[6]->b;
  Tensor& out = *args[8]->tensor;
  PTERON_TRY(check_shapes(q, k, v, mask, start, causal));
  PTERON_CHECK(out.dtype() == q.dtype(), Error::InvalidArgument, "%s: out is %s, query is %s", kOp,
               scalar_type_name(out.dtype()), scalar_type_name(q.dtype()));
  const int32_t sizes[] = {q.size(0), q.size(1), q.size(2), v.size(3)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 4));
  const int64_t S = q.size(1), Hq = q.size(2), D = q.size(3), Dv = v.size(3);
  const int64_t group = Hq / k.size(2);
  const int64_t keys = mask != nullptr ? k.size(1) : start + S;
  const double scale =
      args[7]->tag == Tag::None
          ? 1.0 / std::sqrt(static_cast<double>(D))
          : (args[7]->tag == Tag::Int ? static_cast<double>(args[7]->i) : args[7]->d);
  auto* scores = static_cast<float*>(ctx.allocate_scratch(sizeof(float) * (keys + Dv)));
  PTERON_CHECK(scores != nullptr || keys + Dv == 0, Error::OutOfMemory,
               "%s: no scratch memory for %lld scores", kOp, static_cast<long long>(keys));
  float* acc = scores + keys;
  const bool known = dispatch_float_dtype(q.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* qd = q.data<T>();
    const T* kd = k.data<T>();
    const T* vd = v.data<T>();
    T* od = out.data<T>();
    for (int32_t b = 0; b < q.size(0); ++b) {
      for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kh = h / group;
        for (int64_t i = 0; i < S; ++i) {
          const T* qrow = qd + b * q.stride(0) + i * q.stride(1) + h * q.stride(2);
          const int64_t last = causal ? start + i + 1 : keys;  // keys [0, last) are read
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < last; ++j) {
            const T* krow = kd + b * k.stride(0) + j * k.stride(1) + kh * k.stride(2);
            float dot = 0;
            for (int64_t d = 0; d < D; ++d)
              dot += static_cast<float>(load_value(qrow[d * q.stride(3)])) *
                     static_cast<float>(load_value(krow[d * k.stride(3)]));
            float s = static_cast<float>(dot * scale);
            if (mask != nullptr) s += mask_at<T>(*mask, i, j);
            scores[j] = s;
            if (s > best) best = s;
          }
          // A row whose every score is -inf (a fully masked query) gives zeros, not NaN.
          float total = 0;
          for (int64_t j = 0; j < last; ++j) {
            scores[j] =
                best == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(scores[j] - best);
            total += scores[j];
          }
          for (int64_t d = 0; d < Dv; ++d) acc[d] = 0;
          for (int64_t j = 0; j < last; ++j) {
            if (scores[j] == 0) continue;
            const T* vrow = vd + b * v.stride(0) + j * v.stride(1) + kh * v.stride(2);
            for (int64_t d = 0; d < Dv; ++d)
              acc[d] += scores[j] * static_cast<float>(load_value(vrow[d * v.stride(3)]));
          }
          T* orow = od + b * out.stride(0) + i * out.stride(1) + h * out.stride(2);
          const float inv = total > 0 ? 1.0f / total : 0.0f;
          for (int64_t d = 0; d < Dv; ++d) orow[d * out.stride(3)] = store_value<T>(acc[d] * inv);
        }
      }
    }
  });
  PTERON_CHECK(known, Error::InvalidArgument, "%s: %s tensors are not supported", kOp,
               scalar_type_name(q.dtype()));
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("llama::custom_sdpa.out", custom_sdpa_out, "TTTItDBdT");

}  // namespace pteron
