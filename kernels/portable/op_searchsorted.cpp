// aten::searchsorted.Tensor_out(Tensor sorted_sequence, Tensor self, *, bool out_int32=False,
//     bool right=False, str? side=None, Tensor? sorter=None, Tensor(a!) out)
// aten::searchsorted.Scalar_out(Tensor sorted_sequence, Scalar self, *, ...same..., out)
// out = where each value would be inserted to keep each row sorted (util/search_sorted.h).
// side ("left"/"right") wins over right, and contradicting it is an error, as in torch.
#include "kernels/portable/util/args.h"
#include "kernels/portable/util/search_sorted.h"

namespace pteron {
namespace {

Error parse_side(const char* op, const EValue& right, const EValue& side, bool* out_right) {
  PTERON_TRY(check_string_arg(op, side, 4, /*optional=*/true));
  *out_right = right.b;
  if (side.is_none()) return Error::Ok;
  const bool side_right = string_equals(side, "right");
  PTERON_CHECK(side_right || string_equals(side, "left"), Error::InvalidArgument,
               "%s: side must be 'left' or 'right'", op);
  PTERON_CHECK(!(right.b && !side_right), Error::InvalidArgument,
               "%s: side='left' contradicts right=True", op);
  *out_right = side_right;
  return Error::Ok;
}

Error searchsorted_tensor_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::searchsorted.Tensor_out";
  bool right = false;
  PTERON_TRY(parse_side(kOp, *args[3], *args[4], &right));
  const Tensor* sorter = args[5]->is_none() ? nullptr : args[5]->tensor;
  return search_sorted(kOp, *args[0]->tensor, args[1]->tensor, nullptr, args[2]->b, right, sorter,
                       *args[6]->tensor);
}

Error searchsorted_scalar_out(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::searchsorted.Scalar_out";
  bool right = false;
  PTERON_TRY(parse_side(kOp, *args[3], *args[4], &right));
  PTERON_CHECK(args[0]->tensor->dim() == 1, Error::InvalidArgument,
               "%s: a scalar value needs a 1-D sorted sequence", kOp);
  const Tensor* sorter = args[5]->is_none() ? nullptr : args[5]->tensor;
  const double v = args[1]->scalar_as_double();
  return search_sorted(kOp, *args[0]->tensor, nullptr, &v, args[2]->b, right, sorter,
                       *args[6]->tensor);
}

}  // namespace

PTERON_KERNEL("aten::searchsorted.Tensor_out", searchsorted_tensor_out, "TTBB*tT");
PTERON_KERNEL("aten::searchsorted.Scalar_out", searchsorted_scalar_out, "TSBB*tT");

}  // namespace pteron
