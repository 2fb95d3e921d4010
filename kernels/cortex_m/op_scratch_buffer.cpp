// cortex_m::scratch_buffer.out(int nbytes, *, Tensor(a!) out)
//
// pteron's own: the compiler gives each kernel that needs scratch (the MVE convolution's kernel
// sums and im2col column) a tensor of this op as its `scratch` argument, so the memory plan
// places the bytes in an arena for that kernel's lifetime instead of anything being allocated at
// run time. The buffer is preallocated by the plan; this kernel only checks its size.
#include "kernels/cortex_m/util/int8_args.h"
#include "runtime/kernel/kernel.h"

namespace pteron::cortex_m {
namespace {

constexpr const char* kOp = "cortex_m::scratch_buffer.out";

Error scratch_buffer_out(KernelContext&, Span<EValue*> args) {
  const int64_t nbytes = args[0]->i;
  const Tensor& out = *args[1]->tensor;
  if (nbytes < 0 || out.nbytes() < static_cast<size_t>(nbytes)) {
    return fail(Error::InvalidArgument, "%s: buffer of %zu bytes for %lld requested", kOp,
                out.nbytes(), static_cast<long long>(nbytes));
  }
  return Error::Ok;
}

}  // namespace

PTERON_KERNEL("cortex_m::scratch_buffer.out", scratch_buffer_out, "IT");

}  // namespace pteron::cortex_m
