// Embedding lookups in quantized tables, the ops compiler/passes/quantized_linear.cpp puts in
// place of torchao's dequantize_affine -> embedding:
//   pteron::embedding_q8w.out(Tensor weight, Tensor scales, Tensor indices, int group_size, *,
//       Tensor(a!) out)   int8 table [V, D]
//   pteron::embedding_q4w.out(... same ...)   int4 table packed [V, D / 2] (uint8, the block
//       layout of qlinear/qlinear_kernels.h)
// scales [V, D / group_size] float32; indices int64 or int32 (any shape) -> out [..., D] float32:
// only the looked-up rows are dequantized.
#include "kernels/optimized/util/parallel.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

Error embedding_quantized(const char* op, bool int4, Span<EValue*> args) {
  const Tensor& weight = *args[0]->tensor;
  const Tensor& scales = *args[1]->tensor;
  const Tensor& indices = *args[2]->tensor;
  const int64_t G = args[3]->i;
  Tensor& out = *args[4]->tensor;
  PTERON_CHECK(weight.dim() == 2 && scales.dim() == 2 &&
                   weight.dtype() == (int4 ? ScalarType::Byte : ScalarType::Char) &&
                   scales.dtype() == ScalarType::Float && out.dtype() == ScalarType::Float,
               Error::InvalidArgument, "%s: weight must be 2-d %s, scales and out float32", op,
               int4 ? "uint8" : "int8");
  PTERON_CHECK(indices.dtype() == ScalarType::Long || indices.dtype() == ScalarType::Int,
               Error::InvalidArgument, "%s: indices must be int64 or int32", op);
  PTERON_CHECK(is_row_major(weight) && is_row_major(scales) && is_row_major(indices) &&
                   is_row_major(out) && indices.dim() < kMaxTensorDim,
               Error::NotSupported, "%s: only the default dim order is supported", op);
  const int64_t V = weight.size(0), D = int4 ? int64_t{weight.size(1)} * 2 : weight.size(1);
  PTERON_CHECK(G >= 1 && D % G == 0 && (!int4 || G % 32 == 0) && scales.size(0) == V &&
                   scales.size(1) == D / G,
               Error::InvalidArgument,
               "%s: group size %lld and scales [%d, %d] do not fit a [%lld, %lld] table", op,
               static_cast<long long>(G), scales.size(0), scales.size(1), static_cast<long long>(V),
               static_cast<long long>(D));
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < indices.dim(); ++d) sizes[d] = indices.size(d);
  sizes[indices.dim()] = static_cast<int32_t>(D);
  PTERON_TRY(expect_out_shape(op, out, sizes, indices.dim() + 1));
  const int64_t n = indices.numel();
  auto index = [&](int64_t i) -> int64_t {
    return indices.dtype() == ScalarType::Long ? indices.data<const int64_t>()[i]
                                               : indices.data<const int32_t>()[i];
  };
  for (int64_t i = 0; i < n; ++i) {
    PTERON_CHECK(index(i) >= 0 && index(i) < V, Error::OutOfRange,
                 "%s: index %lld out of range for %lld rows", op, static_cast<long long>(index(i)),
                 static_cast<long long>(V));
  }
  const int64_t row_bytes = weight.size(1);
  const auto* w = static_cast<const uint8_t*>(weight.const_data());
  const float* s = scales.data<const float>();
  float* y = out.data<float>();
  parallel_for(n, D, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t row = index(i);
      const uint8_t* src = w + row * row_bytes;
      const float* rs = s + row * (D / G);
      float* dst = y + i * D;
      if (int4) {
        for (int64_t b = 0; b < D / 32; ++b) {
          const float scale = rs[b * 32 / G];
          for (int j = 0; j < 16; ++j) {
            const uint8_t byte = src[b * 16 + j];
            dst[b * 32 + j] = static_cast<float>((byte & 15) - 8) * scale;
            dst[b * 32 + 16 + j] = static_cast<float>((byte >> 4) - 8) * scale;
          }
        }
      } else {
        for (int64_t d = 0; d < D; ++d) {
          dst[d] = static_cast<float>(static_cast<int8_t>(src[d])) * rs[d / G];
        }
      }
    }
  });
  return Error::Ok;
}

Error embedding_q8w_out(KernelContext&, Span<EValue*> args) {
  return embedding_quantized("pteron::embedding_q8w.out", false, args);
}

Error embedding_q4w_out(KernelContext&, Span<EValue*> args) {
  return embedding_quantized("pteron::embedding_q4w.out", true, args);
}

}  // namespace

PTERON_KERNEL("pteron::embedding_q8w.out", embedding_q8w_out, "TTTIT");
PTERON_KERNEL("pteron::embedding_q4w.out", embedding_q4w_out, "TTTIT");

}  // namespace pteron::opt
