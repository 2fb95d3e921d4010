// aten::normal.Tensor_float_out(Tensor mean, float std=1., *, Generator? generator=None,
//     Tensor(a!) out)
// aten::normal.float_Tensor_out(float mean, Tensor std, *, Generator? generator=None,
//     Tensor(a!) out)
// aten::normal.Tensor_Tensor_out(Tensor mean, Tensor std, *, Generator? generator=None,
//     Tensor(a!) out)
// aten::normal.float_float_out(float mean, float std, SymInt[] size, *,
//     Generator? generator=None, Tensor(a!) out)
// out = mean + std * z, z standard normal from pteron's seeded generator (util/random.h; the
// generator argument, always None in an export, is not read), mean and std broadcast; a negative
// std is refused, as torch. Floating dtypes. Not decomposed by run_decompositions() (VAE
// reparameterisation written as torch.normal(mu, sigma)).
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/random.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error expect_std(const char* op, double std) {
  PTERON_CHECK(std >= 0, Error::InvalidArgument, "%s: std must be >= 0, got %g", op, std);
  return Error::Ok;
}

// Every element of a dense tensor (any dim order) >= 0.
Error expect_std(const char* op, const Tensor& std) {
  for (int64_t i = 0; i < std.numel(); ++i) PTERON_TRY(expect_std(op, load_as_double(std, i)));
  return Error::Ok;
}

// out (its shape set already) = mean + std * z; a null tensor takes the scalar instead.
Error normal_into(const char* op, const Tensor* mean, double mean_value, const Tensor* std,
                  double std_value, Tensor& out) {
  PTERON_TRY(fill_random(op, out, /*normal=*/true));
  if (std != nullptr) {
    PTERON_TRY(binary_float_elementwise(op, out, *std, out, [](auto z, auto s) { return z * s; }));
  } else {
    PTERON_TRY(unary_float_op(
        op, out, out, [std_value](auto z) { return z * static_cast<decltype(z)>(std_value); }));
  }
  if (mean != nullptr)
    return binary_float_elementwise(op, out, *mean, out, [](auto z, auto m) { return z + m; });
  return unary_float_op(op, out, out,
                        [mean_value](auto z) { return z + static_cast<decltype(z)>(mean_value); });
}

Error expect_broadcast_out(const char* op, const Tensor& a, const Tensor* b, Tensor& out) {
  int32_t sizes[kMaxTensorDim];
  int32_t dim = 0;
  if (b != nullptr) {
    PTERON_TRY(broadcast_shape(op, a, *b, sizes, &dim));
  } else {
    dim = a.dim();
    for (int32_t d = 0; d < dim; ++d) sizes[d] = a.size(d);
  }
  return expect_out_shape(op, out, sizes, dim);
}

Error normal_tensor_float_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::normal.Tensor_float_out";
  const Tensor& mean = *args[0]->tensor;
  const double std = args[1]->d;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_std(kOp, std));
  PTERON_TRY(expect_broadcast_out(kOp, mean, nullptr, out));
  return normal_into(kOp, &mean, 0, nullptr, std, out);
}

Error normal_float_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::normal.float_Tensor_out";
  const double mean = args[0]->d;
  const Tensor& std = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_std(kOp, std));
  PTERON_TRY(expect_broadcast_out(kOp, std, nullptr, out));
  return normal_into(kOp, nullptr, mean, &std, 0, out);
}

Error normal_tensor_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::normal.Tensor_Tensor_out";
  const Tensor& mean = *args[0]->tensor;
  const Tensor& std = *args[1]->tensor;
  Tensor& out = *args[3]->tensor;
  PTERON_TRY(expect_std(kOp, std));
  PTERON_TRY(expect_broadcast_out(kOp, mean, &std, out));
  return normal_into(kOp, &mean, 0, &std, 0, out);
}

Error normal_float_float_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::normal.float_float_out";
  const double mean = args[0]->d, std = args[1]->d;
  Tensor& out = *args[4]->tensor;
  PTERON_TRY(expect_std(kOp, std));
  PTERON_TRY(expect_out_size_list(kOp, args[2]->int_list, out));
  return normal_into(kOp, nullptr, mean, nullptr, std, out);
}

}  // namespace

PTERON_KERNEL("aten::normal.Tensor_float_out", normal_tensor_float_out, "TD*T");
PTERON_KERNEL("aten::normal.float_Tensor_out", normal_float_tensor_out, "DT*T");
PTERON_KERNEL("aten::normal.Tensor_Tensor_out", normal_tensor_tensor_out, "TT*T");
PTERON_KERNEL("aten::normal.float_float_out", normal_float_float_out, "DDL*T");

}  // namespace pteron
