// aten::_int_mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out): the exact int8 product
// torchao's Int8DynamicActivationInt8WeightConfig exports (kernels/portable/op_int_mm.cpp says
// what it computes). 4 x 4 output tiles run on the qlinear table's int8_tile (AVX-512 VNNI
// about 150 GMAC/s per thread), which reads self's rows and mat2's columns contiguous along K:
// torchao passes the weight transposed, but constant folding makes that transpose a row-major
// [K, N] constant, so such a mat2 is transposed once into the program's constant cache (which
// gives the constant's own pages back: the copy replaces it), or per call into scratch when it
// is not a constant. Threads split the columns, each tile's four weight rows staying in cache
// while the rows of self pass. Other layouts, and every error, go to the portable kernel.
#include "kernels/optimized/qlinear/qlinear_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

constexpr uint32_t kTransposedKind = 0x494d4d54;  // "IMMT"

struct Transpose {
  const uint8_t* b;
  int64_t K, N, rs, cs;
};

// dst [N, K] = b [K, N] (strides rs, cs), a column of b per row of dst.
void transpose_bytes(const void* context, void* dst) {
  const Transpose& t = *static_cast<const Transpose*>(context);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t k = 0; k < t.K; ++k)
    for (int64_t j = 0; j < t.N; ++j) out[j * t.K + k] = t.b[k * t.rs + j * t.cs];
}

bool is_byte(ScalarType t) { return t == ScalarType::Char || t == ScalarType::Byte; }

Error int_mm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_int_mm.out";
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[2]->tensor;
  if (a.dim() != 2 || b.dim() != 2 || out.dim() != 2 || !is_byte(a.dtype()) ||
      !is_byte(b.dtype()) || out.dtype() != ScalarType::Int || a.size(1) != b.size(0) ||
      out.size(0) != a.size(0) || out.size(1) != b.size(1) || (a.stride(1) != 1 && a.size(1) > 1) ||
      (out.stride(1) != 1 && out.size(1) > 1)) {
    return optimized::call_portable(kOp, ctx, args);
  }
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  const bool a_signed = a.dtype() == ScalarType::Char, b_signed = b.dtype() == ScalarType::Char;
  const auto* ap = static_cast<const uint8_t*>(a.const_data());
  const auto* bp = static_cast<const uint8_t*>(b.const_data());
  int64_t b_cs = b.stride(1);
  if (b.stride(0) != 1 && K > 1) {  // columns not contiguous along K: transposed
    const Transpose t{bp, K, N, b.stride(0), b.stride(1)};
    const size_t bytes = static_cast<size_t>(K * N);
    const void* derived = nullptr;
    if (ConstantCache* cache = optimized::constant_cache_of(b)) {
      const ConstantKey key{bp, kTransposedKind, {K, N, t.rs, t.cs}};
      derived = cache->get_or_derive(key, bytes, bytes, &transpose_bytes, &t);
    }
    if (derived == nullptr) {
      void* scratch = ctx.allocate_scratch(bytes, 64);
      if (scratch == nullptr) return optimized::call_portable(kOp, ctx, args);
      transpose_bytes(&t, scratch);
      derived = scratch;
    }
    bp = static_cast<const uint8_t*>(derived);
    b_cs = K;
  }
  int32_t* c = out.data<int32_t>();
  const int64_t a_rs = a.stride(0), c_rs = out.stride(0);
  const QLinearKernels& kt = qlinear_kernels();
  const int64_t column_tiles = (N + kInt8Tile - 1) / kInt8Tile;
  parallel_for(column_tiles, kInt8Tile * M * K, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t j = t * kInt8Tile;
      const int cols = static_cast<int>(N - j < kInt8Tile ? N - j : kInt8Tile);
      for (int64_t i = 0; i < M; i += kInt8Tile) {
        const int rows = static_cast<int>(M - i < kInt8Tile ? M - i : kInt8Tile);
        kt.int8_tile(ap + i * a_rs, a_signed, a_rs, bp + j * b_cs, b_signed, b_cs, K, rows, cols,
                     c + i * c_rs + j, c_rs);
      }
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_int_mm.out", int_mm_out, "TTT");

}  // namespace pteron::opt
