// aten::nonzero.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
//
// The int64 coordinates [count, self.dim()] of self's non-zero elements (NaN counts, -0.0 does
// not), in row-major order. count depends on the data: out is planned at its bound
// ([numel, dim]) as a bounded-dynamic tensor and resized here; a static out must be exact.
// Every dtype, any dim orders.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype.h"
#include "kernels/portable/util/logical_walk.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

constexpr const char* kOp = "aten::nonzero.out";

template <typename T>
bool is_nonzero(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return load_value(v);
  } else {
    return load_value(v) != 0;
  }
}

Error nonzero_out(KernelContext&, Span<EValue*> args) {
  const Tensor& self = *args[0]->tensor;
  Tensor& out = *args[1]->tensor;
  PTERON_CHECK(out.dtype() == ScalarType::Long, Error::InvalidArgument,
               "%s: out must be int64, got %s", kOp, scalar_type_name(out.dtype()));
  PTERON_CHECK(out.dim() == 2, Error::InvalidArgument, "%s: out must be 2-D, got %dD", kOp,
               out.dim());
  const int32_t dim = self.dim();
  const int64_t total = self.numel();
  bool ok = true;
  int64_t count = 0;
  ok = dispatch_dtype_in<kAllTypes>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    LogicalWalk w(self);
    for (int64_t e = 0; e < total; ++e, w.next()) count += is_nonzero(x[w.offset]) ? 1 : 0;
  });
  if (!ok) {
    return fail(Error::NotSupported, "%s: dtype %s not supported", kOp,
                scalar_type_name(self.dtype()));
  }
  PTERON_CHECK(count <= INT32_MAX, Error::InvalidArgument, "%s: result too large", kOp);
  const int32_t sizes[2] = {static_cast<int32_t>(count), dim};
  PTERON_TRY(expect_out_shape(kOp, out, sizes, 2));
  int64_t* y = out.data<int64_t>();
  const int64_t rs = out.stride(0), cs = out.stride(1);
  dispatch_dtype_in<kAllTypes>(self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* x = self.data<const T>();
    LogicalWalk w(self);
    int64_t r = 0;
    for (int64_t e = 0; e < total; ++e, w.next()) {
      if (!is_nonzero(x[w.offset])) continue;
      for (int32_t d = 0; d < dim; ++d) y[r * rs + d * cs] = w.index[d];
      ++r;
    }
  });
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::nonzero.out", nonzero_out, "TT");

}  // namespace pteron
