// pteron::_grouped_mm.out (aten::_grouped_mm's) and transformers::grouped_mm_fallback.out: a
// mixture-of-experts layer's product, each expert's rows times its matrix
// (kernels/portable/op_grouped_mm.cpp says what they compute). float32 runs one SGEMM per
// expert with rows, each threaded: a constant expert matrix is packed once and its panels
// reused on every call (one cache entry per expert), and an expert given one row (a decoded
// token) takes the SGEMM's matrix-vector path. Everything else, the checks' failures included,
// goes to the portable kernel.
#include "kernels/optimized/util/matmul_args.h"
#include "kernels/optimized/util/portable_fallback.h"
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/grouped_mm.h"
#include "runtime/kernel/kernel.h"

namespace pteron::optimized {
namespace {

constexpr const char* kAtenOp = "pteron::_grouped_mm.out";
constexpr const char* kTransformersOp = "transformers::grouped_mm_fallback.out";

// False (nothing reported) when the call is not one the SGEMM takes or scratch ran out.
bool grouped_sgemm(KernelContext& ctx, const char* op, const Tensor& self, const Tensor& mat2,
                   const Tensor& offs, Tensor& out) {
  if (!all_float32({&self, &mat2, &out})) return false;
  if (check_grouped_mm(op, self, mat2, &offs, out) != Error::Ok) return false;  // portable reports
  if (out.numel() > 0 && out.stride(1) != 1 && out.size(1) != 1) return false;
  ConstantCache* const weight_cache = constant_cache_of(mat2);
  bool ok = true;
  const int64_t start =
      for_each_group(offs, mat2.size(0), [&](int64_t g, int64_t row, int64_t rows) {
        if (!ok) return;  // scratch ran out: the portable kernel redoes the call
        SgemmProblem p;
        p.M = rows;
        p.N = mat2.size(2);
        p.K = mat2.size(1);
        p.a = self.data<const float>() + row * self.stride(0);
        p.a_rs = self.stride(0);
        p.a_cs = self.stride(1);
        p.b = mat2.data<const float>() + g * mat2.stride(0);
        p.b_rs = mat2.stride(1);
        p.b_cs = mat2.stride(2);
        p.b_cache = weight_cache;
        p.c = out.data<float>() + row * out.stride(0);
        p.c_rs = out.stride(0);
        ok = sgemm(ctx, p);
      });
  if (!ok) return false;
  float* tail = out.data<float>() + start * out.stride(0);
  for (int64_t i = start; i < out.size(0); ++i, tail += out.stride(0))
    for (int64_t j = 0; j < out.size(1); ++j) tail[j] = 0.0f;
  return true;
}

Error aten_grouped_mm_out(KernelContext& ctx, Span<EValue*> args) {
  if (args[2]->is_none() || !args[3]->is_none() || !args[4]->is_none() ||
      !grouped_sgemm(ctx, kAtenOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                     *args[5]->tensor)) {
    return call_portable(kAtenOp, ctx, args);
  }
  return Error::Ok;
}

Error transformers_grouped_mm_out(KernelContext& ctx, Span<EValue*> args) {
  if (!grouped_sgemm(ctx, kTransformersOp, *args[0]->tensor, *args[1]->tensor, *args[2]->tensor,
                     *args[3]->tensor)) {
    return call_portable(kTransformersOp, ctx, args);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("pteron::_grouped_mm.out", aten_grouped_mm_out, "TTttiT");
PTERON_KERNEL("transformers::grouped_mm_fallback.out", transformers_grouped_mm_out, "TTTT");

}  // namespace pteron::optimized
