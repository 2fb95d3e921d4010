// aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0,
//     Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))
// Training (train true or None, as torch defaults): mask (out1, bool) keeps each element with
// probability 1 - p, drawn from pteron's seeded generator (util/random.h); out0 = input * mask /
// (1 - p) (all zeros for p = 1). Inference (train false): out0 = input, mask all true.
#include "kernels/portable/util/creation.h"
#include "kernels/portable/util/random.h"
#include "kernels/portable/util/unary.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error native_dropout_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::native_dropout.out";
  PTERON_CHECK(args[2]->tag == Tag::Bool || args[2]->is_none(), Error::InvalidProgram,
               "%s argument 2: expected a bool or None, got %s", kOp, tag_name(args[2]->tag));
  const Tensor& input = *args[0]->tensor;
  const double p = args[1]->d;
  const bool train = args[2]->is_none() || args[2]->b;
  Tensor& out = *args[3]->tensor;
  Tensor& mask = *args[4]->tensor;
  PTERON_CHECK(p >= 0 && p <= 1, Error::InvalidArgument,
               "%s: dropout probability has to be between 0 and 1, got %g", kOp, p);
  PTERON_CHECK(is_floating(input.dtype()) && out.dtype() == input.dtype(), Error::NotSupported,
               "%s: needs a floating input and an out of its dtype, got %s -> %s", kOp,
               scalar_type_name(input.dtype()), scalar_type_name(out.dtype()));
  PTERON_CHECK(mask.dtype() == ScalarType::Bool, Error::InvalidArgument,
               "%s: mask out must be Bool, got %s", kOp, scalar_type_name(mask.dtype()));
  PTERON_TRY(expect_out_like(kOp, input, mask));
  PTERON_TRY(expect_out_like(kOp, input, out));
  if (!train) {
    bool* m = mask.data<bool>();
    for (int64_t k = 0; k < mask.numel(); ++k) m[k] = true;
    return unary_elementwise<kFloatTypes, kFloatTypes>(kOp, input, out, [](auto x) { return x; });
  }
  // The mask is drawn in its own memory order; out, input and mask (any three dim orders) are
  // then walked together.
  const uint64_t stream = next_random_stream();
  bool* m = mask.data<bool>();
  for (int64_t k = 0; k < mask.numel(); ++k) m[k] = uniform_double(stream, k) >= p;
  const double scale = p < 1 ? 1.0 / (1.0 - p) : 0.0;
  if (out.numel() == 0) return Error::Ok;
  int64_t so[kMaxTensorDim], si[kMaxTensorDim], sm[kMaxTensorDim];
  broadcast_strides(out, out.sizes().data(), out.dim(), so);
  broadcast_strides(input, out.sizes().data(), out.dim(), si);
  broadcast_strides(mask, out.sizes().data(), out.dim(), sm);
  const int64_t* strides[3] = {so, si, sm};
  const RowPlan<3> plan = plan_rows<3>(out.sizes().data(), out.dim(), strides);
  dispatch_dtype_in<kFloatTypes>(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = typename ComputeType<T>::type;
    const T* x = input.data<const T>();
    T* y = out.data<T>();
    const C s = static_cast<C>(scale);
    for_each_row(plan, [&](const int64_t* off, int64_t n, const int64_t* st) {
      for (int64_t k = 0; k < n; ++k) {
        const bool keep = load_value(m[off[2] + k * st[2]]);
        y[off[0] + k * st[0]] = store_value<T>(keep ? load_value(x[off[1] + k * st[1]]) * s : C(0));
      }
    });
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::native_dropout.out", native_dropout_out, "TD*TT");

}  // namespace pteron
