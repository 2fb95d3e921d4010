// pteron::gru.out(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers,
//     float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor(a!) output,
//     Tensor(b!) hy) -> (Tensor(a!), Tensor(b!))
// aten::gru.input kept whole (pteron.export with dynamic shapes): any number of steps per call
// (util/recurrent.h).
#include "kernels/portable/util/recurrent.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error gru_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::gru.out", RecurrentCell::Gru, args);
}

}  // namespace

PTERON_KERNEL("pteron::gru.out", gru_out, kGruRnnSignature);

}  // namespace pteron
