// Linear layers (CONV2D 1x1) and matrix products of two activations (MATMUL).
#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

void Lowerer::linear(const Node& n) {
  const ir::TensorSpec& xs = g_.value(n.arg("input").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  const OutQuant* q = nullptr;
  OutQuant oq;
  if (is_int()) {
    oq = out_quant(n, true);
    q = &oq;
  }
  TVal x = to_logical(operand(n.arg("input").tensor()));
  Weight w = weight(n.arg("weight").tensor());
  if (w.sizes.size() != 2) refuse("weight is not 2-D");
  const int64_t ic = xs.sizes.back(), oc = w.sizes[0];
  if (w.sizes[1] != ic) refuse("weight columns differ from the input features");
  const int64_t rows = numel(xs.sizes) / ic;
  w.sizes = {oc, ic, 1, 1};
  // As CONV2D 1x1 over [rows, 1, 1, ic] (TOSA 1.0 has no FULLY_CONNECTED).
  x = reshape(x, {rows, 1, 1, ic});
  x.nhwc = true;
  TVal out = conv_core(n, x, w, n.arg("bias"), false, 1, {0, 0, 0, 0}, {1, 1}, {1, 1},
                       {rows, 1, 1, oc}, q);
  out = reshape(out, ys.sizes);
  bind(n, out, q);
}

// bmm [B, M, K] x [B, K, N] (mm as B = 1): MATMUL.
void Lowerer::matmul(const Node& n, const std::string& op) {
  fp_only("matrix multiply of two activations");
  const ir::TensorSpec& as = g_.value(n.arg("self").tensor()).spec;
  const ir::TensorSpec& bs = g_.value(n.arg("mat2").tensor()).spec;
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  TVal a = to_logical(get(n.arg("self").tensor()));
  TVal b = to_logical(get(n.arg("mat2").tensor()));
  if (op == ops::aten::mm) {
    a = reshape(a, {1, as.sizes[0], as.sizes[1]});
    b = reshape(b, {1, bs.sizes[0], bs.sizes[1]});
  }
  const std::string zp = zp_const(DType::FP32, 0);
  TVal out = tensor({a.shape[0], a.shape[1], b.shape[2]}, DType::FP32, a);
  w_.add_op(Op::MATMUL, {a.name, b.name, zp, zp}, {out.name});
  bind(n, reshape(out, ys.sizes), nullptr);
}

}  // namespace pteron::tosa_aot::detail
