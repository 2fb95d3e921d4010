// aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out)
//     -> Tensor(a!)
// float32 on the optimized SGEMM (weights used in their [N, K] layout, bias added in the GEMM's
// store); anything else on the portable kernel.
// pteron::linear_relu.out (same arguments): relu(linear(...)) with the ReLU applied to each
// output tile as the SGEMM finishes it (compiler/passes/fuse_linear_relu.cpp makes it). One file
// for both: they are the same kernel but for that flag.
#include "kernels/optimized/simd/isa_kernels.h"
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/parallel.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kLinear = "aten::linear.out";
constexpr const char* kLinearRelu = "pteron::linear_relu.out";

// The unfused way: the portable linear, then ReLU in place (float32, contiguous out).
Error portable_linear_relu(KernelContext& ctx, Span<EValue*> args) {
  Tensor& out = *args[3]->tensor;
  if (out.dtype() != ScalarType::Float || !out.is_contiguous()) {
    return fail(Error::NotSupported, "%s: needs a contiguous float32 out", kLinearRelu);
  }
  PTERON_TRY(call_portable(kLinear, ctx, args));
  float* data = out.data<float>();
  for (int64_t i = 0; i < out.numel(); ++i) data[i] = data[i] < 0.0f ? 0.0f : data[i];
  return Error::Ok;
}

// A few output columns over many rows (a head: NeRF's 4, a regressor's 1, a tagger's 9): dot
// products along K with no packing (opt::SkinnyLinearArgs). The SGEMM packed all of the input
// and filled tiles of 16 columns: [4096, 256] x 4 columns 0.78 ms, eager 0.20. Rows must run
// along K (unit stride in input and weight).
bool skinny(int64_t M, int64_t N, int64_t K, const Tensor& input, const Tensor& weight,
            const Tensor* bias) {
  return N <= opt::kSkinnyMaxN && M >= 16 && K >= 16 && input.stride(input.dim() - 1) == 1 &&
         weight.stride(1) == 1 && (bias == nullptr || is_column_bias(*bias, N));
}

Error linear_impl(const char* kOp, bool relu, KernelContext& ctx, Span<EValue*> args) {
  const Tensor& input = *args[0]->tensor;
  const Tensor& weight = *args[1]->tensor;
  const Tensor* bias = args[2]->is_none() ? nullptr : args[2]->tensor;
  Tensor& out = *args[3]->tensor;
  if (relu &&
      (weight.dim() != 2 || input.dim() < 1 || input.size(input.dim() - 1) != weight.size(1))) {
    return fail(Error::InvalidArgument, "%s: input's last dim must match weight [N, K]'s K",
                kLinearRelu);
  }
  if (!all_float32({&input, &weight, bias, &out}) || weight.dim() != 2 || input.dim() < 1 ||
      input.dim() > kMaxTensorDim || input.size(input.dim() - 1) != weight.size(1)) {
    return relu ? portable_linear_relu(ctx, args) : call_portable(kOp, ctx, args);
  }
  const int32_t last = input.dim() - 1;
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < input.dim(); ++d) sizes[d] = input.size(d);
  sizes[last] = weight.size(0);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, input.dim()));
  int64_t in_rs = 0, out_rs = 0;
  if (!flat_row_stride(input, &in_rs) || !flat_row_stride(out, &out_rs) ||
      (out.numel() > 0 && out.stride(last) != 1 && out.size(last) != 1)) {
    return relu ? portable_linear_relu(ctx, args) : call_portable(kOp, ctx, args);
  }
  int64_t M = 1;
  for (int32_t d = 0; d < last; ++d) M *= input.size(d);
  const int64_t N = weight.size(0), K = input.size(last);
  if (skinny(M, N, K, input, weight, bias)) {
    const opt::SkinnyLinearArgs a{input.data<const float>(),
                                  in_rs,
                                  weight.data<const float>(),
                                  weight.stride(0),
                                  bias ? bias->data<const float>() : nullptr,
                                  out.data<float>(),
                                  out_rs,
                                  K,
                                  N,
                                  relu};
    const opt::IsaKernels& isa = opt::isa_kernels();
    opt::parallel_for(M, N * K, [&](int64_t m0, int64_t m1) { isa.skinny_linear(a, m0, m1); });
    return Error::Ok;
  }
  SgemmProblem p;
  p.M = 1;
  for (int32_t d = 0; d < last; ++d) p.M *= input.size(d);
  p.N = weight.size(0);
  p.K = input.size(last);
  p.a = input.data<const float>();
  p.a_rs = in_rs;
  p.a_cs = input.stride(last);
  p.b = weight.data<const float>();
  p.b_rs = weight.stride(1);
  p.b_cs = weight.stride(0);
  p.b_cache = constant_cache_of(weight);  // constant weights: packed once (b_cache)
  p.c = out.data<float>();
  p.c_rs = out_rs;
  if (relu) p.activation = OutputActivation::relu();
  if (bias != nullptr && is_column_bias(*bias, p.N)) {
    p.bias = bias->data<const float>();
  } else if (bias != nullptr) {
    PTERON_TRY(broadcast_copy(kOp, *bias, out));
    p.beta = 1.0f;
  }
  if (!sgemm(ctx, p)) return relu ? portable_linear_relu(ctx, args) : call_portable(kOp, ctx, args);
  return Error::Ok;
}

Error linear_out(KernelContext& ctx, Span<EValue*> args) {
  return linear_impl(kLinear, false, ctx, args);
}

Error linear_relu_out(KernelContext& ctx, Span<EValue*> args) {
  return linear_impl(kLinearRelu, true, ctx, args);
}

}  // namespace

PTERON_KERNEL("aten::linear.out", linear_out, "TTtT");
PTERON_KERNEL("pteron::linear_relu.out", linear_relu_out, "TTtT");

}  // namespace pteron::optimized
