// torchao's affine quantization primitives (torchao/quantization/quant_primitives.py, as
// torchao 0.18 registers them), with out-variants of pteron's own (torchao has none):
//   torchao::choose_qparams_affine.out(Tensor? input, str mapping_type, SymInt[] block_size,
//       ScalarType target_dtype, Scalar? quant_min=None, Scalar? quant_max=None,
//       float? eps=None, ScalarType? scale_dtype=None, ScalarType? zero_point_dtype=None,
//       bool keepdim=False, *, Tensor(a!) scale, Tensor(b!) zero_point)
//   torchao::quantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale,
//       Tensor? zero_point, ScalarType output_dtype, Scalar? quant_min=None,
//       Scalar? quant_max=None, *, Tensor(a!) out)
//   torchao::dequantize_affine.out(Tensor input, SymInt[] block_size, Tensor scale,
//       Tensor? zero_point, ScalarType input_dtype, Scalar? quant_min=None,
//       Scalar? quant_max=None, ScalarType output_dtype=6, *, Tensor(a!) out)
//
// block_size splits the input into blocks (size[d] / block[d] along each dim) that share one
// scale and zero point, laid out row-major over that grid (keepdim only changes the
// parameters' shape, not their order). The optimized library rewrites torchao's LLM patterns
// into its quantized linears (compiler/passes/quantized_linear.cpp); these kernels run what is
// left, e.g. torchao's Int8DynamicActivationInt8WeightConfig (activations quantized per token,
// multiplied with aten::_int_mm), and every torchao program on the portable library alone.
// The arithmetic is torchao's, in float32 (float32 inputs and scales; integer data of any
// width up to int32):
//   choose: per block min/max with 0 included; SYMMETRIC scale = max(-min, max) / ((qmax -
//     qmin) / 2), zero point (qmax + qmin + 1) / 2; SYMMETRIC_NO_CLIPPING_ERR scale = the larger
//     of min / qmin and max / qmax; ASYMMETRIC scale = (max - min) / (qmax - qmin), zero point
//     clamp(qmin - round(min / scale)); scale clamped below by eps (default FLT_MIN)
//   quantize: clamp(round(x * (1 / scale)) + zero_point, qmin, qmax)
//   dequantize: (q - zero_point) * scale
// with round half to even and NaN propagated as torch's min / max / clamp do.
#include <cfloat>
#include <cmath>
#include <cstring>

#include "kernels/portable/util/args.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// The block grid of a dense tensor: element e (row-major) has its parameters at block(e).
struct BlockGrid {
  int32_t rank = 0;
  int64_t size[kMaxTensorDim] = {}, block[kMaxTensorDim] = {}, grid_stride[kMaxTensorDim] = {};
  int64_t blocks = 1;
};

Error make_grid(const char* op, const Tensor& t, const EValue& block_size, BlockGrid* g) {
  PTERON_CHECK(t.is_contiguous(), Error::NotSupported, "%s: only contiguous tensors are supported",
               op);
  const Span<const int64_t> blocks = block_size.int_list;
  PTERON_CHECK(static_cast<int64_t>(blocks.size()) == t.dim(), Error::InvalidArgument,
               "%s: block_size has %zu entries for a %d-d input", op, blocks.size(), t.dim());
  g->rank = t.dim();
  for (int32_t d = g->rank - 1; d >= 0; --d) {
    const int64_t n = t.size(d), b = blocks[d];
    PTERON_CHECK(b >= 1 && n % b == 0, Error::InvalidArgument,
                 "%s: block_size[%d] = %lld does not divide the input's size %lld", op, d,
                 static_cast<long long>(b), static_cast<long long>(n));
    g->size[d] = n;
    g->block[d] = b;
    g->grid_stride[d] = g->blocks;
    g->blocks *= n / b;
  }
  return Error::Ok;
}

// Calls fn(e0, n, block) for every run of n = block[last] consecutive elements (row-major)
// that share one block, in order: an odometer over the runs, the block index kept alongside.
template <typename Fn>
void for_each_run(const BlockGrid& g, int64_t numel, Fn&& fn) {
  if (numel == 0) return;
  const int32_t last = g.rank - 1;
  const int64_t n = g.rank == 0 ? 1 : g.block[last];
  int64_t index[kMaxTensorDim] = {}, in_block[kMaxTensorDim] = {};
  int64_t block = 0;
  for (int64_t e0 = 0; e0 < numel; e0 += n) {
    fn(e0, n, block);
    for (int32_t d = last; d >= 0; --d) {
      const int64_t step = d == last ? n : 1;  // the last dim advances a run at a time
      index[d] += step;
      if (index[d] < g.size[d]) {
        in_block[d] += step;
        if (in_block[d] == g.block[d]) {
          in_block[d] = 0;
          block += g.grid_stride[d];
        }
        break;
      }
      index[d] = 0;  // wrapped: back to this dim's first block
      in_block[d] = 0;
      block -= (g.size[d] / g.block[d] - 1) * g.grid_stride[d];
    }
  }
}

// torchao's _DTYPE_TO_QVALUE_BOUNDS for the integer dtypes pteron has; false for others.
bool dtype_bounds(ScalarType t, double* lo, double* hi) {
  switch (t) {
    case ScalarType::Char:
      *lo = -128, *hi = 127;
      return true;
    case ScalarType::Byte:
      *lo = 0, *hi = 255;
      return true;
    case ScalarType::Short:
      *lo = -32768, *hi = 32767;
      return true;
    case ScalarType::Int:
      *lo = -2147483648.0, *hi = 2147483647.0;
      return true;
    default:
      return false;
  }
}

// quant_min / quant_max, each defaulting to the dtype's bounds.
Error quant_range(const char* op, const EValue& dtype, const EValue& qmin, const EValue& qmax,
                  double* lo, double* hi) {
  double dlo = 0, dhi = 0;
  const auto t = static_cast<ScalarType>(dtype.i);
  const bool known = dtype_bounds(t, &dlo, &dhi);
  PTERON_CHECK(known || (!qmin.is_none() && !qmax.is_none()), Error::NotSupported,
               "%s: quantized dtype %s not supported (int8, uint8, int16, int32)", op,
               scalar_type_name(t));
  *lo = qmin.is_none() ? dlo : qmin.scalar_as_double();
  *hi = qmax.is_none() ? dhi : qmax.scalar_as_double();
  PTERON_CHECK(*lo <= *hi, Error::InvalidArgument, "%s: quant_min %g above quant_max %g", op, *lo,
               *hi);
  return Error::Ok;
}

// The zero points as floats (what torchao adds and subtracts in float32), in scratch; null
// when the argument is None or empty (torchao treats both as none).
Error zero_points_of(KernelContext& ctx, const char* op, const EValue& v, int64_t blocks,
                     const float** out) {
  *out = nullptr;
  if (v.is_none() || v.tensor->numel() == 0) return Error::Ok;
  PTERON_CHECK(v.tensor->numel() == blocks && v.tensor->is_contiguous(), Error::InvalidArgument,
               "%s: zero_point has %lld values for %lld blocks", op,
               static_cast<long long>(v.tensor->numel()), static_cast<long long>(blocks));
  auto* z = static_cast<float*>(ctx.allocate_scratch(sizeof(float) * blocks, 4));
  PTERON_CHECK(z != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld blocks", op,
               static_cast<long long>(blocks));
  for (int64_t b = 0; b < blocks; ++b) z[b] = static_cast<float>(load_as_double(*v.tensor, b));
  *out = z;
  return Error::Ok;
}

Error check_scale(const char* op, const Tensor& scale, int64_t blocks) {
  PTERON_CHECK(scale.dtype() == ScalarType::Float, Error::NotSupported,
               "%s: scale dtype %s not supported (float32)", op, scalar_type_name(scale.dtype()));
  PTERON_CHECK(scale.numel() == blocks && scale.is_contiguous(), Error::InvalidArgument,
               "%s: scale has %lld values for %lld blocks", op,
               static_cast<long long>(scale.numel()), static_cast<long long>(blocks));
  return Error::Ok;
}

float clamp_nan(float v, float lo, float hi) {  // torch.clamp: NaN stays NaN
  return v < lo ? lo : (v > hi ? hi : v);
}

Error choose_qparams_affine_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "torchao::choose_qparams_affine.out";
  PTERON_CHECK(!args[0]->is_none(), Error::InvalidArgument, "%s: input is None", kOp);
  const Tensor& input = *args[0]->tensor;
  Tensor& scale = *args[10]->tensor;
  Tensor& zero = *args[11]->tensor;
  PTERON_CHECK(input.dtype() == ScalarType::Float, Error::NotSupported,
               "%s: input dtype %s not supported (float32)", kOp, scalar_type_name(input.dtype()));
  PTERON_TRY(check_string_arg(kOp, *args[1], 1, /*optional=*/false));
  const bool symmetric = string_equals(*args[1], "SYMMETRIC");
  const bool no_clipping = string_equals(*args[1], "SYMMETRIC_NO_CLIPPING_ERR");
  PTERON_CHECK(symmetric || no_clipping || string_equals(*args[1], "ASYMMETRIC"),
               Error::NotSupported,
               "%s: mapping_type must be SYMMETRIC, SYMMETRIC_NO_CLIPPING_ERR or ASYMMETRIC", kOp);
  BlockGrid g;
  PTERON_TRY(make_grid(kOp, input, *args[2], &g));
  double qmin = 0, qmax = 0;
  PTERON_TRY(quant_range(kOp, *args[3], *args[4], *args[5], &qmin, &qmax));
  const float eps = args[6]->is_none() ? FLT_MIN : static_cast<float>(args[6]->d);
  PTERON_CHECK(scale.numel() == g.blocks && zero.numel() == g.blocks && scale.is_contiguous() &&
                   zero.is_contiguous(),
               Error::InvalidArgument, "%s: scale and zero_point must hold the %lld blocks", kOp,
               static_cast<long long>(g.blocks));
  auto* range = static_cast<float*>(ctx.allocate_scratch(sizeof(float) * 2 * g.blocks, 4));
  PTERON_CHECK(range != nullptr, Error::OutOfMemory, "%s: no scratch memory for %lld blocks", kOp,
               static_cast<long long>(g.blocks));
  float* lo = range;
  float* hi = range + g.blocks;
  for (int64_t b = 0; b < g.blocks; ++b) lo[b] = INFINITY, hi[b] = -INFINITY;
  const float* x = input.data<const float>();
  for_each_run(g, input.numel(), [&](int64_t e0, int64_t n, int64_t b) {
    float mn = lo[b], mx = hi[b];
    for (int64_t e = e0; e < e0 + n; ++e) {
      const float v = x[e];
      if (mn == mn && !(v >= mn)) mn = v;  // a NaN sticks, as amin's
      if (mx == mx && !(v <= mx)) mx = v;
    }
    lo[b] = mn;
    hi[b] = mx;
  });
  for (int64_t b = 0; b < g.blocks; ++b) {
    const float neg = lo[b] != lo[b] ? lo[b] : (lo[b] < 0.0f ? lo[b] : 0.0f);
    const float pos = hi[b] != hi[b] ? hi[b] : (hi[b] > 0.0f ? hi[b] : 0.0f);
    float s = 0.0f, z = 0.0f;
    if (symmetric) {
      const float m = neg != neg || pos != pos ? NAN : (-neg > pos ? -neg : pos);  // torch.max
      s = m / static_cast<float>((qmax - qmin) / 2);
      z = static_cast<float>(static_cast<int64_t>((qmax + qmin + 1) / 2));
    } else if (no_clipping) {
      const float smin = neg / static_cast<float>(qmin), smax = pos / static_cast<float>(qmax);
      s = smin > smax ? smin : smax;
      z = static_cast<float>(static_cast<int64_t>((qmax + qmin + 1) / 2));
    } else {
      s = (pos - neg) / static_cast<float>(qmax - qmin);
    }
    s = s != s ? s : (s < eps ? eps : s);
    if (!symmetric && !no_clipping) {
      z = clamp_nan(static_cast<float>(qmin) - std::nearbyint(neg / s), static_cast<float>(qmin),
                    static_cast<float>(qmax));
    }
    store_from_double(scale, b, s);
    store_from_double(zero, b, z);
  }
  return Error::Ok;
}

Error quantize_affine_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "torchao::quantize_affine.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& scale = *args[2]->tensor;
  Tensor& out = *args[7]->tensor;
  PTERON_CHECK(input.dtype() == ScalarType::Float, Error::NotSupported,
               "%s: input dtype %s not supported (float32)", kOp, scalar_type_name(input.dtype()));
  BlockGrid g;
  PTERON_TRY(make_grid(kOp, input, *args[1], &g));
  PTERON_TRY(check_scale(kOp, scale, g.blocks));
  const float* zero = nullptr;
  PTERON_TRY(zero_points_of(ctx, kOp, *args[3], g.blocks, &zero));
  double qmin = 0, qmax = 0;
  PTERON_TRY(quant_range(kOp, *args[4], *args[5], *args[6], &qmin, &qmax));
  PTERON_TRY(expect_dtype(kOp, out, static_cast<ScalarType>(args[4]->i), "out"));
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  const float* x = input.data<const float>();
  const float* s = scale.data<const float>();
  const float lo = static_cast<float>(qmin), hi = static_cast<float>(qmax);
  const bool ok = dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* q = out.data<T>();
    for_each_run(g, input.numel(), [&](int64_t e0, int64_t n, int64_t b) {
      const float inv = 1.0f / s[b], z = zero != nullptr ? zero[b] : 0.0f;
      for (int64_t e = e0; e < e0 + n; ++e) {
        float v = std::nearbyint(x[e] * inv);
        if (zero != nullptr) v += z;
        // NaN has no integer value: torch's cast gives an unspecified one, this one 0.
        v = clamp_nan(v, lo, hi);
        q[e] = v == v ? static_cast<T>(v) : T{0};
      }
    });
  });
  PTERON_CHECK(ok, Error::NotSupported, "%s: output dtype %s not supported", kOp,
               scalar_type_name(out.dtype()));
  return Error::Ok;
}

Error dequantize_affine_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "torchao::dequantize_affine.out";
  const Tensor& input = *args[0]->tensor;
  const Tensor& scale = *args[2]->tensor;
  Tensor& out = *args[8]->tensor;
  PTERON_CHECK(input.dtype() == static_cast<ScalarType>(args[4]->i), Error::InvalidArgument,
               "%s: input is %s, input_dtype says %s", kOp, scalar_type_name(input.dtype()),
               scalar_type_name(static_cast<ScalarType>(args[4]->i)));
  double lo = 0, hi = 0;
  PTERON_CHECK(dtype_bounds(input.dtype(), &lo, &hi), Error::NotSupported,
               "%s: input dtype %s not supported (int8, uint8, int16, int32)", kOp,
               scalar_type_name(input.dtype()));
  PTERON_CHECK(static_cast<ScalarType>(args[7]->i) == ScalarType::Float, Error::NotSupported,
               "%s: output_dtype %s not supported (float32)", kOp,
               scalar_type_name(static_cast<ScalarType>(args[7]->i)));
  PTERON_TRY(expect_dtype(kOp, out, ScalarType::Float, "out"));
  PTERON_TRY(expect_out_shape(kOp, out, input.sizes().data(), input.dim()));
  BlockGrid g;
  PTERON_TRY(make_grid(kOp, input, *args[1], &g));
  PTERON_TRY(check_scale(kOp, scale, g.blocks));
  const float* zero = nullptr;
  PTERON_TRY(zero_points_of(ctx, kOp, *args[3], g.blocks, &zero));
  const float* s = scale.data<const float>();
  float* y = out.data<float>();
  dispatch_dtype_in<kIntTypes>(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* q = input.data<const T>();
    for_each_run(g, input.numel(), [&](int64_t e0, int64_t n, int64_t b) {
      const float z = zero != nullptr ? zero[b] : 0.0f, sb = s[b];
      for (int64_t e = e0; e < e0 + n; ++e) {
        float v = static_cast<float>(q[e]);
        if (zero != nullptr) v -= z;
        y[e] = v * sb;
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("torchao::choose_qparams_affine.out", choose_qparams_affine_out, "t*LIssdiiBTT");
PTERON_KERNEL("torchao::quantize_affine.out", quantize_affine_out, "TLTtIssT");
PTERON_KERNEL("torchao::dequantize_affine.out", dequantize_affine_out, "TLTtIssIT");

}  // namespace pteron
