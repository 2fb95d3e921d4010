// aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/strided_copy.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

// torch still accepts 1-D empty tensors of any other shape's rank in a cat and skips them.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.size(0) == 0; }

Error cat_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::cat.out";
  const Span<Tensor* const> tensors = args[0]->tensor_list;
  Tensor& out = *args[2]->tensor;
  PTERON_CHECK(!tensors.empty(), Error::InvalidArgument, "%s: expects a non-empty list", kOp);
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size(); ++i) {
    PTERON_CHECK(tensors[i] != nullptr, Error::InvalidArgument, "%s: tensor %zu is None", kOp, i);
    if (ref == nullptr && !is_legacy_empty(*tensors[i])) ref = tensors[i];
  }
  if (ref == nullptr) {  // only empty 1-D tensors: the result is one too
    const int32_t empty[1] = {0};
    return expect_out_shape(kOp, out, empty, 1);
  }
  PTERON_CHECK(ref->dim() > 0, Error::InvalidArgument, "%s: cannot concatenate 0-d tensors", kOp);
  int32_t dim = 0;
  PTERON_TRY(normalize_dim(kOp, args[1]->i, ref->dim(), &dim));
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    if (is_legacy_empty(t)) continue;
    PTERON_CHECK(t.dim() == ref->dim(), Error::InvalidArgument,
                 "%s: tensor %zu has rank %d, expected %d", kOp, i, t.dim(), ref->dim());
    for (int32_t d = 0; d < t.dim(); ++d) {
      PTERON_CHECK(d == dim || t.size(d) == ref->size(d), Error::InvalidArgument,
                   "%s: tensor %zu has size %d at dim %d, expected %d", kOp, i, t.size(d), d,
                   ref->size(d));
    }
    total += t.size(dim);
  }
  PTERON_CHECK(total <= INT32_MAX, Error::InvalidArgument, "%s: result too large", kOp);
  int32_t sizes[kMaxTensorDim];
  for (int32_t d = 0; d < ref->dim(); ++d)
    sizes[d] = d == dim ? static_cast<int32_t>(total) : ref->size(d);
  PTERON_TRY(expect_out_shape(kOp, out, sizes, ref->dim()));
  int64_t strides[kMaxTensorDim];
  tensor_strides(out, strides);
  int64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = *tensors[i];
    if (is_legacy_empty(t)) continue;
    PTERON_CHECK(copy_into_view(t, out, offset * out.stride(dim), strides), Error::NotSupported,
                 "%s: cannot convert %s to %s", kOp, scalar_type_name(t.dtype()),
                 scalar_type_name(out.dtype()));
    offset += t.size(dim);
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::cat.out", cat_out, "AIT");

}  // namespace pteron
