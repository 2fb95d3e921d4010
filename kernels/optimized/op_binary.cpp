// Optimized add / sub / mul / div for float32, Tensor and Scalar forms, with broadcasting:
//   aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)
//   aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out)
//   aten::sub.out / sub.Scalar_out (same arguments), aten::mul.out(self, other, *, out),
//   aten::mul.Scalar_out, aten::div.out, aten::div.Scalar_out.
// Inputs may have any strides (broadcast dims have stride 0); the output must have the default
// dim order. mul.out also takes complex64 tensors. Other dtypes and layouts go to the portable
// kernels.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/layout.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

struct Operand {
  const float* data;
  int64_t strides[kMaxTensorDim];
};

// Rows shorter than this run inline here, a block of them at a time, instead of through the ISA
// kernel's call.
constexpr int64_t kShortRow = 8;

// `rows` short rows of n elements, row j at a + j * a_rs (b, y alike), as the ISA kernel's tail
// computes them.
template <BinaryOp kOp>
void short_rows(const float* a, int64_t as, int64_t a_rs, const float* b, int64_t bs, int64_t b_rs,
                float alpha, float* y, int64_t y_rs, int64_t n, int64_t rows) {
  for (int64_t j = 0; j < rows; ++j, a += a_rs, b += b_rs, y += y_rs) {
    for (int64_t i = 0; i < n; ++i) {
      const float x = a[i * as], z = b[i * bs];
      y[i] = kOp == BinaryOp::kAdd ? x + alpha * z : kOp == BinaryOp::kMul ? x * z : x / z;
    }
  }
}

void short_rows(BinaryOp op, const float* a, int64_t as, int64_t a_rs, const float* b, int64_t bs,
                int64_t b_rs, float alpha, float* y, int64_t y_rs, int64_t n, int64_t rows) {
  switch (op) {
    case BinaryOp::kAdd:
      return short_rows<BinaryOp::kAdd>(a, as, a_rs, b, bs, b_rs, alpha, y, y_rs, n, rows);
    case BinaryOp::kMul:
      return short_rows<BinaryOp::kMul>(a, as, a_rs, b, bs, b_rs, alpha, y, y_rs, n, rows);
    case BinaryOp::kDiv:
      return short_rows<BinaryOp::kDiv>(a, as, a_rs, b, bs, b_rs, alpha, y, y_rs, n, rows);
    case BinaryOp::kComplexMul:
      return;  // complex rows go to the ISA kernel (run_strided)
  }
}

// out[i] = a[i] op b[i] over `sizes` (row-major out), after merging dims that are contiguous
// for all three so the inner rows are as long as possible.
// `width` floats an element (2: complex values), strides in floats.
void run_strided(BinaryOp op, float alpha, const int32_t* out_sizes, int32_t dim, Operand a,
                 Operand b, float* out, int64_t width = 1) {
  int64_t sizes[kMaxTensorDim], as[kMaxTensorDim], bs[kMaxTensorDim], os[kMaxTensorDim];
  int32_t n = 0;
  int64_t o_stride = width;
  for (int32_t d = dim - 1; d >= 0; --d) {  // innermost first
    if (out_sizes[d] == 1) continue;
    if (n > 0 && as[n - 1] * sizes[n - 1] == a.strides[d] &&
        bs[n - 1] * sizes[n - 1] == b.strides[d]) {
      sizes[n - 1] *= out_sizes[d];
    } else {
      sizes[n] = out_sizes[d];
      as[n] = a.strides[d];
      bs[n] = b.strides[d];
      os[n] = o_stride;
      ++n;
    }
    o_stride *= out_sizes[d];
  }
  const int64_t numel = o_stride / width;
  if (numel == 0) return;
  const BinaryOp kop = op;
  const IsaKernels& k = isa_kernels();
  if (n == 0) {
    k.binary(kop, a.data, 0, b.data, 0, alpha, out, 1);
    return;
  }
  // Short rows go a block (the next dim's extent) at a time: the walk's unit is then the block.
  if (sizes[0] < kShortRow && n >= 2 && width == 1) {
    const int64_t inner = sizes[0], block = sizes[1];
    const int64_t units = numel / (inner * block);
    parallel_for(units, inner * block, [&](int64_t begin, int64_t end) {
      int64_t index[kMaxTensorDim] = {}, rest = begin, ao = 0, bo = 0, oo = 0;
      for (int32_t d = 2; d < n; ++d) {
        index[d] = rest % sizes[d];
        rest /= sizes[d];
        ao += index[d] * as[d];
        bo += index[d] * bs[d];
        oo += index[d] * os[d];
      }
      for (int64_t u = begin; u < end; ++u) {
        short_rows(kop, a.data + ao, as[0], as[1], b.data + bo, bs[0], bs[1], alpha, out + oo,
                   os[1], inner, block);
        for (int32_t d = 2; d < n; ++d) {
          ao += as[d], bo += bs[d], oo += os[d];
          if (++index[d] < sizes[d]) break;
          ao -= as[d] * sizes[d], bo -= bs[d] * sizes[d], oo -= os[d] * sizes[d];
          index[d] = 0;
        }
      }
    });
    return;
  }
  const int64_t inner = sizes[0];
  const int64_t rows = numel / inner;
  parallel_for(rows, inner, [&](int64_t begin, int64_t end) {
    // The first row's offsets by division, then an odometer over the outer dims (a division
    // per dim and row was most of the time of short rows).
    int64_t index[kMaxTensorDim] = {}, rest = begin, ao = 0, bo = 0, oo = 0;
    for (int32_t d = 1; d < n; ++d) {
      index[d] = rest % sizes[d];
      rest /= sizes[d];
      ao += index[d] * as[d];
      bo += index[d] * bs[d];
      oo += index[d] * os[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      k.binary(kop, a.data + ao, as[0], b.data + bo, bs[0], alpha, out + oo, inner);
      for (int32_t d = 1; d < n; ++d) {
        ao += as[d], bo += bs[d], oo += os[d];
        if (++index[d] < sizes[d]) break;
        ao -= as[d] * sizes[d], bo -= bs[d] * sizes[d], oo -= os[d] * sizes[d];
        index[d] = 0;
      }
    }
  });
}

bool fast_path_ok(const Tensor& a, const Tensor* b, const Tensor& out) {
  return a.dtype() == ScalarType::Float && (b == nullptr || b->dtype() == ScalarType::Float) &&
         out.dtype() == ScalarType::Float && is_row_major(out);
}

// complex64 a * b (Meta-style Llama's rotary embedding: view_as_complex, a product by the
// broadcast frequencies, view_as_real), as float pairs.
Error complex_mul(const char* name, const Tensor& a, const Tensor& b, Tensor& out) {
  int32_t sizes[kMaxTensorDim], dim = 0;
  PTERON_TRY(broadcast_shape(name, a, b, sizes, &dim));
  PTERON_TRY(expect_out_shape(name, out, sizes, dim));
  Operand oa{static_cast<const float*>(a.const_data()), {}};
  Operand ob{static_cast<const float*>(b.const_data()), {}};
  broadcast_strides(a, sizes, dim, oa.strides);
  broadcast_strides(b, sizes, dim, ob.strides);
  for (int32_t d = 0; d < dim; ++d) oa.strides[d] *= 2, ob.strides[d] *= 2;
  run_strided(BinaryOp::kComplexMul, 1.0f, sizes, dim, oa, ob,
              static_cast<float*>(out.mutable_data()), 2);
  return Error::Ok;
}

bool complex64(const Tensor& t) { return t.dtype() == ScalarType::ComplexFloat; }

Error tensor_op(const char* name, BinaryOp op, bool has_alpha, bool negate_alpha,
                KernelContext& ctx, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  const Tensor& b = *args[1]->tensor;
  Tensor& out = *args[has_alpha ? 3 : 2]->tensor;
  if (op == BinaryOp::kMul && complex64(a) && complex64(b) && complex64(out) && is_row_major(out))
    return complex_mul(name, a, b, out);
  if (!fast_path_ok(a, &b, out)) return optimized::call_portable(name, ctx, args);
  int32_t sizes[kMaxTensorDim], dim = 0;
  PTERON_TRY(broadcast_shape(name, a, b, sizes, &dim));
  PTERON_TRY(expect_out_shape(name, out, sizes, dim));
  float alpha = has_alpha ? static_cast<float>(args[2]->scalar_as_double()) : 1.0f;
  if (negate_alpha) alpha = -alpha;
  Operand oa{a.data<const float>(), {}}, ob{b.data<const float>(), {}};
  broadcast_strides(a, sizes, dim, oa.strides);
  broadcast_strides(b, sizes, dim, ob.strides);
  run_strided(op, alpha, sizes, dim, oa, ob, out.data<float>());
  return Error::Ok;
}

Error scalar_op(const char* name, BinaryOp op, bool has_alpha, bool negate_alpha,
                KernelContext& ctx, Span<EValue*> args) {
  const Tensor& a = *args[0]->tensor;
  Tensor& out = *args[has_alpha ? 3 : 2]->tensor;
  if (!fast_path_ok(a, nullptr, out)) return optimized::call_portable(name, ctx, args);
  PTERON_TRY(expect_out_shape(name, out, a.sizes().data(), a.dim()));
  float alpha = has_alpha ? static_cast<float>(args[2]->scalar_as_double()) : 1.0f;
  if (negate_alpha) alpha = -alpha;
  const float other = static_cast<float>(args[1]->scalar_as_double());
  Operand oa{a.data<const float>(), {}}, ob{&other, {}};
  for (int32_t d = 0; d < a.dim(); ++d) oa.strides[d] = a.size(d) == 1 ? 0 : a.stride(d);
  run_strided(op, alpha, a.sizes().data(), a.dim(), oa, ob, out.data<float>());
  return Error::Ok;
}

Error add_out(KernelContext& c, Span<EValue*> a) {
  return tensor_op("aten::add.out", BinaryOp::kAdd, true, false, c, a);
}
Error sub_out(KernelContext& c, Span<EValue*> a) {
  return tensor_op("aten::sub.out", BinaryOp::kAdd, true, true, c, a);
}
Error mul_out(KernelContext& c, Span<EValue*> a) {
  return tensor_op("aten::mul.out", BinaryOp::kMul, false, false, c, a);
}
Error div_out(KernelContext& c, Span<EValue*> a) {
  return tensor_op("aten::div.out", BinaryOp::kDiv, false, false, c, a);
}
Error add_scalar_out(KernelContext& c, Span<EValue*> a) {
  return scalar_op("aten::add.Scalar_out", BinaryOp::kAdd, true, false, c, a);
}
Error sub_scalar_out(KernelContext& c, Span<EValue*> a) {
  return scalar_op("aten::sub.Scalar_out", BinaryOp::kAdd, true, true, c, a);
}
Error mul_scalar_out(KernelContext& c, Span<EValue*> a) {
  return scalar_op("aten::mul.Scalar_out", BinaryOp::kMul, false, false, c, a);
}
Error div_scalar_out(KernelContext& c, Span<EValue*> a) {
  return scalar_op("aten::div.Scalar_out", BinaryOp::kDiv, false, false, c, a);
}

}  // namespace

PTERON_KERNEL("aten::add.out", add_out, "TTST");
PTERON_KERNEL("aten::sub.out", sub_out, "TTST");
PTERON_KERNEL("aten::mul.out", mul_out, "TTT");
PTERON_KERNEL("aten::div.out", div_out, "TTT");
PTERON_KERNEL("aten::add.Scalar_out", add_scalar_out, "TSST");
PTERON_KERNEL("aten::sub.Scalar_out", sub_scalar_out, "TSST");
PTERON_KERNEL("aten::mul.Scalar_out", mul_scalar_out, "TST");
PTERON_KERNEL("aten::div.Scalar_out", div_scalar_out, "TST");

}  // namespace pteron::opt
