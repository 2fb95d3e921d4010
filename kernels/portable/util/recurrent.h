// Recurrent layers over a run-time number of steps: the kernels of aten::lstm.input,
// gru.input, rnn_tanh.input and rnn_relu.input kept whole by pteron.export (pteron::lstm.out,
// pteron::gru.out, pteron::rnn_tanh.out, pteron::rnn_relu.out; args as the aten op, then the
// outputs: output, hy (and cy for the LSTM)). float32, torch's parameter layout (per layer and
// direction w_ih, w_hh, then b_ih, b_hh with biases, then w_hr with an LSTM projection),
// inference (dropout only matters in training, which is refused).
//
// Per layer and direction: every step's input projection at once (x W_ih^T + b_ih, one
// product of steps x batch rows), then step by step the hidden state's (h W_hh^T + b_hh, one
// product of batch rows) and the cell: LSTM gates i, f, g, o; GRU r, z, n (n from r times the
// hidden product, as torch); tanh/relu RNN. A layer's output feeds the next; the last writes
// `output` through its strides (time-major, or batch_first). The products are the kernel
// library's (RecurrentProducts): the portable GEMM by default, the optimized library's SGEMM.
#pragma once

#include <cstdint>

#include "kernels/portable/util/gemm.h"
#include "runtime/kernel/kernel.h"

namespace pteron {

enum class RecurrentCell { Lstm, Gru, RnnTanh, RnnRelu };

// The kernels' signatures (KernelEntry::signature), the same in every library: the LSTM's hx
// is (h0, c0) and it has a third output, cy.
constexpr const char* kLstmSignature = "TAABIDBBBTTT";
constexpr const char* kGruRnnSignature = "TTABIDBBBTT";

// c (M x N) = a (M x K) * w^T + bias: w row-major [N, K] (a weight as torch stores it), bias N
// values or null, a and c strided (row stride, column stride).
struct RecurrentProduct {
  int64_t M = 0, N = 0, K = 0;
  MatrixRef<const float> a{nullptr, 0, 1};
  const float* w = nullptr;
  const float* bias = nullptr;
  MatrixRef<float> c{nullptr, 0, 1};
};

// A kernel library's products: `all_steps` computes every step's input projection of one layer
// and direction (M = steps x batch, once), `one_step` a step's hidden-state product (M =
// batch, once per step). `workspace` is portable GEMM packing memory sized for the largest
// product, which a library may use. Null members take the portable GEMM.
struct RecurrentProducts {
  void (*all_steps)(KernelContext& ctx, const RecurrentProduct& p,
                    const GemmWorkspace<float>& workspace) = nullptr;
  void (*one_step)(KernelContext& ctx, const RecurrentProduct& p,
                   const GemmWorkspace<float>& workspace) = nullptr;
};

// Checks `args` (the out variant's, see above; their tags were checked against the
// signature above by call_kernel), resizes the outputs and runs the layer.
Error run_recurrent(KernelContext& ctx, const char* op, RecurrentCell cell, Span<EValue*> args,
                    const RecurrentProducts& products = {});

// The portable product: bias written into c, then c += a * w^T with the workspace's GEMM.
void recurrent_product(const RecurrentProduct& p, const GemmWorkspace<float>& workspace);

}  // namespace pteron
