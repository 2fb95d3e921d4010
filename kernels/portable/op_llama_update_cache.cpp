// llama::update_cache.out(Tensor value, Tensor(a!) cache, SymInt start_pos, *, Tensor(b!) out)
// -> Tensor(b!): ExecuTorch's LLM custom op (extension/llm/custom_ops, what export_llama's
// use_sdpa_with_kv_cache emits) writing a step's keys or values into the KV cache in place:
// cache[b, start_pos + s, h, d] = value[b, s, h, d]. Both are [batch, positions, heads,
// head_dim] (the cache's positions dim is 1, not 2 as in an index_put cache). `out` is a
// placeholder the op returns so the graph keeps it; nothing reads it and it is left as is.
// Implemented from the op's schema and its Python meta checks (same dtype, dims 0, 2 and 3
// equal, start_pos + positions within the cache), not from ExecuTorch's C++.
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error update_cache_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "llama::update_cache.out";
  const Tensor& value = *args[0]->tensor;
  Tensor& cache = *args[1]->tensor;
  const int64_t start = args[2]->i;
  PTERON_CHECK(value.dim() == 4 && cache.dim() == 4, Error::InvalidArgument,
               "%s: value and cache must be 4-d [batch, positions, heads, head_dim], got %d-d "
               "and %d-d",
               kOp, value.dim(), cache.dim());
  PTERON_CHECK(value.dtype() == cache.dtype(), Error::InvalidArgument,
               "%s: value is %s but the cache is %s", kOp, scalar_type_name(value.dtype()),
               scalar_type_name(cache.dtype()));
  for (int32_t d : {0, 2, 3}) {
    PTERON_CHECK(value.size(d) == cache.size(d), Error::InvalidArgument,
                 "%s: value and cache differ in dim %d (%d vs %d)", kOp, d, value.size(d),
                 cache.size(d));
  }
  const int64_t n = value.size(1);
  PTERON_CHECK(start >= 0 && start + n <= cache.size(1), Error::InvalidArgument,
               "%s: positions [%lld, %lld) do not fit a cache of %d positions", kOp,
               static_cast<long long>(start), static_cast<long long>(start + n), cache.size(1));
  const size_t elem = value.element_size();
  const auto* src = value.data<uint8_t>();
  auto* dst = cache.data<uint8_t>();
  const bool rows = value.stride(3) == 1 && cache.stride(3) == 1;  // head_dim contiguous
  for (int32_t b = 0; b < value.size(0); ++b) {
    for (int64_t s = 0; s < n; ++s) {
      for (int32_t h = 0; h < value.size(2); ++h) {
        const int64_t from =
            int64_t{b} * value.stride(0) + s * value.stride(1) + int64_t{h} * value.stride(2);
        const int64_t to = int64_t{b} * cache.stride(0) + (start + s) * cache.stride(1) +
                           int64_t{h} * cache.stride(2);
        if (rows) {
          __builtin_memcpy(dst + to * elem, src + from * elem, value.size(3) * elem);
          continue;
        }
        for (int32_t d = 0; d < value.size(3); ++d) {
          __builtin_memcpy(dst + (to + int64_t{d} * cache.stride(3)) * elem,
                           src + (from + int64_t{d} * value.stride(3)) * elem, elem);
        }
      }
    }
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("llama::update_cache.out", update_cache_out, "TTIT");

}  // namespace pteron
