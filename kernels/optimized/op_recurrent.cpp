// pteron::lstm.out, pteron::gru.out, pteron::rnn_tanh.out, pteron::rnn_relu.out (arguments in
// kernels/portable/util/recurrent.h, whose driver runs the steps): the optimized library's
// products. Every step's input projection of a layer (steps x batch rows) is one threaded
// SGEMM; a step's hidden product with batch 1 is the SGEMM's threaded matrix-vector path
// (weights streamed once, no packing); larger batches and anything the SGEMM declines use the
// portable GEMM with its workspace, reused by every step.
#include "kernels/optimized/util/sgemm.h"
#include "kernels/portable/util/recurrent.h"
#include "runtime/kernel/kernel.h"

namespace pteron::opt {
namespace {

// c = a w^T + bias on the SGEMM; false when it needs scratch the context does not have.
bool sgemm_product(KernelContext& ctx, const RecurrentProduct& p) {
  if (p.c.cs != 1) return false;
  optimized::SgemmProblem g;
  g.M = p.M;
  g.N = p.N;
  g.K = p.K;
  g.a = p.a.data;
  g.a_rs = p.a.rs;
  g.a_cs = p.a.cs;
  g.b = p.w;  // [N, K]: element (k, n) at n * K + k
  g.b_rs = 1;
  g.b_cs = p.K;
  g.c = p.c.data;
  g.c_rs = p.c.rs;
  g.bias = p.bias;
  return optimized::sgemm(ctx, g);
}

void all_steps(KernelContext& ctx, const RecurrentProduct& p, const GemmWorkspace<float>& ws) {
  if (!sgemm_product(ctx, p)) recurrent_product(p, ws);
}

void one_step(KernelContext& ctx, const RecurrentProduct& p, const GemmWorkspace<float>& ws) {
  // Batch 1 takes the SGEMM's matrix-vector path, which allocates nothing; others would pack
  // per step, so they reuse the portable workspace.
  if (p.M != 1 || p.K == 1 || !sgemm_product(ctx, p)) recurrent_product(p, ws);
}

constexpr RecurrentProducts kProducts{all_steps, one_step};

Error lstm_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::lstm.out", RecurrentCell::Lstm, args, kProducts);
}
Error gru_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::gru.out", RecurrentCell::Gru, args, kProducts);
}
Error rnn_tanh_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::rnn_tanh.out", RecurrentCell::RnnTanh, args, kProducts);
}
Error rnn_relu_out(KernelContext& ctx, Span<EValue*> args) {
  return run_recurrent(ctx, "pteron::rnn_relu.out", RecurrentCell::RnnRelu, args, kProducts);
}

}  // namespace

PTERON_KERNEL("pteron::lstm.out", lstm_out, kLstmSignature);
PTERON_KERNEL("pteron::gru.out", gru_out, kGruRnnSignature);
PTERON_KERNEL("pteron::rnn_tanh.out", rnn_tanh_out, kGruRnnSignature);
PTERON_KERNEL("pteron::rnn_relu.out", rnn_relu_out, kGruRnnSignature);

}  // namespace pteron::opt
