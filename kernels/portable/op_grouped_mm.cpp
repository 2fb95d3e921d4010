// pteron::_grouped_mm.out(Tensor self, Tensor mat2, Tensor? offs=None, Tensor? bias=None,
//     ScalarType? out_dtype=None, *, Tensor(a!) out) -> Tensor(a!)   (aten::_grouped_mm's)
// transformers::grouped_mm_fallback.out(Tensor input, Tensor weight, Tensor offs, *,
//     Tensor(a!) out) -> Tensor(a!)
//
// A mixture-of-experts layer's product: the input's rows sorted by expert, group g the rows
// [offs[g - 1], offs[g]) (offs[-1] = 0), each group times its expert's matrix:
// out[rows of g] = self[rows of g] x mat2[g]   (self [S, K], mat2 [G, K, N], out [S, N]).
// Rows past offs[G - 1] belong to no expert and are zero (torch leaves them unwritten). The
// offsets are computed by the program (a histogram of the router's choices), so they are checked
// on every call: not decreasing, at most S.
#include "kernels/portable/util/grouped_mm.h"
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

int64_t grouped_mm_end(const Tensor& offs, int64_t g) {
  return offs.dtype() == ScalarType::Int ? offs.data<int32_t>()[g * offs.stride(0)]
                                         : offs.data<int64_t>()[g * offs.stride(0)];
}

Error check_grouped_mm(const char* op, const Tensor& self, const Tensor& mat2, const Tensor* offs,
                       Tensor& out) {
  if (offs == nullptr || self.dim() != 2 || mat2.dim() != 3) {
    return fail(Error::NotSupported,
                "%s: only the 2-D input x 3-D weight form with offs (mixture-of-experts layers) "
                "is supported, got %d-D x %d-D%s",
                op, self.dim(), mat2.dim(), offs == nullptr ? " without offs" : "");
  }
  const int64_t S = self.size(0), G = mat2.size(0);
  if (mat2.size(1) != self.size(1)) {
    return fail(Error::InvalidArgument, "%s: cannot multiply rows of %d by experts' %dx%d", op,
                self.size(1), mat2.size(1), mat2.size(2));
  }
  const Tensor* inputs[] = {&self, &mat2};
  PTERON_TRY(expect_float_dtypes(op, out, inputs, 2));
  const int32_t sizes[] = {self.size(0), mat2.size(2)};
  PTERON_TRY(expect_out_shape(op, out, sizes, 2));
  return check_grouped_offsets(op, *offs, G, S);
}

Error check_grouped_offsets(const char* op, const Tensor& offs, int64_t G, int64_t S) {
  PTERON_TRY(expect_rank(op, "offs", offs, 1));
  if (offs.size(0) != G) {
    return fail(Error::InvalidArgument, "%s: %d offsets for %lld experts", op, offs.size(0),
                static_cast<long long>(G));
  }
  if (offs.dtype() != ScalarType::Int && offs.dtype() != ScalarType::Long) {
    return fail(Error::InvalidArgument, "%s: offs must be int32 or int64", op);
  }
  int64_t previous = 0;
  for (int64_t g = 0; g < G; ++g) {
    const int64_t end = grouped_mm_end(offs, g);
    if (end < previous || end > S) {
      return fail(Error::InvalidArgument,
                  "%s: offsets must rise from 0 to at most the %lld rows; offs[%lld] = %lld "
                  "after %lld",
                  op, static_cast<long long>(S), static_cast<long long>(g),
                  static_cast<long long>(end), static_cast<long long>(previous));
    }
    previous = end;
  }
  return Error::Ok;
}

namespace {

Error grouped_mm(KernelContext& ctx, const char* op, const Tensor& self, const Tensor& mat2,
                 const Tensor* offs, Tensor& out) {
  PTERON_TRY(check_grouped_mm(op, self, mat2, offs, out));
  const int64_t S = self.size(0), K = self.size(1), N = mat2.size(2);
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, S, N, K);  // for any group's rows
    const int64_t start =
        for_each_group(*offs, mat2.size(0), [&](int64_t g, int64_t row, int64_t rows) {
          gemm<T>(ws, rows, N, K, matrix_view<const T>(self, 0, 1, row * self.stride(0)),
                  matrix_view<const T>(mat2, 1, 2, g * mat2.stride(0)),
                  matrix_view<T>(out, 0, 1, row * out.stride(0)), 1, 0);
        });
    for (int64_t i = start; i < S; ++i)
      for (int64_t j = 0; j < N; ++j) out.data<T>()[i * out.stride(0) + j * out.stride(1)] = T{};
  });
  return Error::Ok;
}

Error aten_grouped_mm_out(KernelContext& ctx, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_grouped_mm";
  if (!args[3]->is_none()) return fail(Error::NotSupported, "%s: bias is not supported", kOp);
  if (!args[4]->is_none() && static_cast<ScalarType>(args[4]->i) != args[0]->tensor->dtype())
    return fail(Error::NotSupported, "%s: out_dtype other than the input's is not supported", kOp);
  return grouped_mm(ctx, kOp, *args[0]->tensor, *args[1]->tensor,
                    args[2]->is_none() ? nullptr : args[2]->tensor, *args[5]->tensor);
}

Error transformers_grouped_mm_out(KernelContext& ctx, Span<EValue*> args) {
  return grouped_mm(ctx, "transformers::grouped_mm_fallback", *args[0]->tensor, *args[1]->tensor,
                    args[2]->tensor, *args[3]->tensor);
}

}  // namespace

PTERON_KERNEL("pteron::_grouped_mm.out", aten_grouped_mm_out, "TTttiT");
PTERON_KERNEL("transformers::grouped_mm_fallback.out", transformers_grouped_mm_out, "TTTT");

}  // namespace pteron
