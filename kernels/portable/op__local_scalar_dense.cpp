// aten::_local_scalar_dense(Tensor self) -> Scalar: Tensor.item(), the one element of a tensor
// as a scalar value. ExecuTorch's LLM exports read the start position this way
// (input_pos[0].item() feeds slicing and llama::update_cache / custom_sdpa); like the other
// prim ops it writes the value after the arguments (args: self, out). Integer tensors give an
// Int, floating ones a Double, bool a Bool, as torch's item() does; a bool read into an Int
// value (pteron's checked torch._check_tensor_all flag) is 0 or 1.
#include "kernels/portable/util/dtype.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error local_scalar_dense(KernelContext&, Span<EValue*> args) {
  constexpr const char* kOp = "aten::_local_scalar_dense";
  PTERON_CHECK(args.size() == 2, Error::InvalidProgram, "%s: %zu arguments, expected 2", kOp,
               args.size());
  const Tensor& self = *args[0]->tensor;
  PTERON_CHECK(self.numel() == 1, Error::InvalidArgument,
               "%s: a tensor of %lld elements has no single value (item() needs one)", kOp,
               static_cast<long long>(self.numel()));
  EValue out;
  const bool known = dispatch_dtype(self.dtype(), kAllTypes, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto v = load_value(*self.data<T>());
    if constexpr (std::is_same_v<T, bool>) {
      out = args[1]->tag == Tag::Int ? EValue::from_int(v ? 1 : 0) : EValue::from_bool(v);
    } else if constexpr (std::is_integral_v<T>) {
      out = EValue::from_int(static_cast<int64_t>(v));
    } else {
      out = EValue::from_double(static_cast<double>(v));
    }
  });
  PTERON_CHECK(known, Error::InvalidArgument, "%s: %s tensors are not supported", kOp,
               scalar_type_name(self.dtype()));
  *args[1] = out;
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("aten::_local_scalar_dense", local_scalar_dense, "TS");

}  // namespace pteron
