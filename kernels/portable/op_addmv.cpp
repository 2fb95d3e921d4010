// aten::addmv.out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1,
//                 Tensor(a!) out) -> Tensor(a!)
// out = beta * self + alpha * (mat @ vec): the matrix-vector product as a one-column GEMM, self
// broadcast to out (not read when beta is 0, as torch). Floating and integer dtypes, as
// torch's CPU addmv. Not decomposed by run_decompositions(), so exported models keep it.
#include "kernels/portable/util/matmul.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::addmv.out";

Error addmv_out(KernelContext& ctx, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  const Tensor& mat = *args[1]->tensor;
  const Tensor& vec = *args[2]->tensor;
  Tensor& out = *args[5]->tensor;
  PTERON_TRY(expect_rank(kOp, "mat", mat, 2));
  PTERON_TRY(expect_rank(kOp, "vec", vec, 1));
  PTERON_CHECK(mat.size(1) == vec.size(0), Error::InvalidArgument,
               "%s: cannot multiply a %dx%d matrix and a vector of %d", kOp, mat.size(0),
               mat.size(1), vec.size(0));
  const Tensor* inputs[] = {&self, &mat, &vec};
  PTERON_TRY(expect_matmul_dtypes(kOp, out, inputs, 3));
  const int32_t sizes[] = {mat.size(0)};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 1));
  const double beta = args[3]->scalar_as_double();
  if (beta != 0) {
    PTERON_TRY(broadcast_copy(kOp, self, out));
  } else {
    PTERON_TRY(expect_broadcasts_to(kOp, self, out));
  }
  const int64_t M = mat.size(0), K = mat.size(1);
  // vec as a K x 1 matrix, out as M x 1.
  if (dispatch_dtype_in<kIntTypes>(out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        integer_gemm<T>(M, 1, K, matrix_view<const T>(mat, 0, 1),
                        {vec.data<const T>(), vec.stride(0), 1}, {out.data<T>(), out.stride(0), 1},
                        args[4]->scalar_as_int(), args[3]->scalar_as_int());
      })) {
    return Error::Ok;
  }
  dispatch_float_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = typename ComputeType<T>::type;
    const GemmWorkspace<T> ws = make_gemm_workspace<T>(ctx, M, 1, K);
    gemm<T>(ws, M, 1, K, matrix_view<const T>(mat, 0, 1), {vec.data<const T>(), vec.stride(0), 1},
            {out.data<T>(), out.stride(0), 1}, static_cast<Acc>(args[4]->scalar_as_double()),
            static_cast<Acc>(beta));
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::addmv.out", addmv_out, "TTTSST");

}  // namespace pteron
