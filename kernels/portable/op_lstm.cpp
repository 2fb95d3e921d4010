// pteron::lstm.out(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers,
//     float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor(a!) output,
//     Tensor(b!) hy, Tensor(c!) cy) -> (Tensor(a!), Tensor(b!), Tensor(c!))
// aten::lstm.input kept whole (pteron.export with dynamic shapes): any number of steps per
// call. The driver (util/recurrent.h) is shared with GRU and RNN and the optimized library.
#include "kernels/portable/util/recurrent.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error lstm_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::lstm.out", RecurrentCell::Lstm, args);
}

}  // namespace

PTERON_KERNEL("pteron::lstm.out", lstm_out, kLstmSignature);

}  // namespace pteron
