// pteron::rnn_tanh.out / pteron::rnn_relu.out(Tensor input, Tensor hx, Tensor[] params,
//     bool has_biases, int num_layers, float dropout, bool train, bool bidirectional,
//     bool batch_first, *, Tensor(a!) output, Tensor(b!) hy) -> (Tensor(a!), Tensor(b!))
// aten::rnn_tanh.input / rnn_relu.input (nn.RNN) kept whole (pteron.export with dynamic
// shapes): any number of steps per call (util/recurrent.h).
#include "kernels/portable/util/recurrent.h"
#include "runtime/kernel/kernel.h"

namespace pteron {
namespace {

Error rnn_tanh_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::rnn_tanh.out", RecurrentCell::RnnTanh, args);
}

Error rnn_relu_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::rnn_relu.out", RecurrentCell::RnnRelu, args);
}

}  // namespace

PTERON_KERNEL("pteron::rnn_tanh.out", rnn_tanh_out, kGruRnnSignature);
PTERON_KERNEL("pteron::rnn_relu.out", rnn_relu_out, kGruRnnSignature);

}  // namespace pteron
