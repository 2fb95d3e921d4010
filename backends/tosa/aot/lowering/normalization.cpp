// Layer norm and batch norm (FP) from reductions and elementwise operators.
#include <cmath>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

// Layer norm over the last dim: mean and variance by REDUCE_SUM, RSQRT, scale and shift.
void Lowerer::layer_norm(const Node& n) {
  fp_only("layer norm");
  const ir::TensorSpec& xs = g_.value(n.arg("input").tensor()).spec;
  const std::vector<int64_t> shape = int_list(n.arg("normalized_shape"));
  if (shape.size() != 1) refuse("layer norm over more than the last dim (not lowered)");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
      refuse("layer norm mean/rstd outputs are used");
  const size_t r = xs.rank();
  const int64_t c = xs.sizes.back();
  TVal x = to_logical(get(n.arg("input").tensor()));
  std::vector<int64_t> reduced = x.shape;
  reduced.back() = 1;
  std::vector<int64_t> one(r, 1);
  TosaAttr ax;
  ax.axis = static_cast<int32_t>(r - 1);
  const TVal inv_n{w_.const_f32("inv_n", one, {static_cast<float>(1.0 / c)}).name, one};
  TVal sum = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::REDUCE_SUM, {x.name}, {sum.name}, ax);
  TVal mean = mul_fp(sum, inv_n, reduced);
  TVal centered = binary_fp(Op::SUB, x, mean, x.shape);
  TVal sq = mul_fp(centered, centered, x.shape);
  TVal sq_sum = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::REDUCE_SUM, {sq.name}, {sq_sum.name}, ax);
  TVal var = mul_fp(sq_sum, inv_n, reduced);
  const TVal eps{w_.const_f32("eps", one, {static_cast<float>(n.arg("eps").to_double())}).name,
                 one};
  TVal var_eps = binary_fp(Op::ADD, var, eps, reduced);
  TVal rstd = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::RSQRT, {var_eps.name}, {rstd.name});
  TVal y = mul_fp(centered, rstd, x.shape);
  std::vector<int64_t> cshape(r, 1);
  cshape.back() = c;
  for (const std::string_view param : {"weight", "bias"}) {
    if (n.arg(param).is_none()) continue;
    TVal p = reshape(get(n.arg(param).tensor()), cshape);
    y = param == "weight" ? mul_fp(y, p, x.shape) : binary_fp(Op::ADD, y, p, x.shape);
  }
  bind(n, y, nullptr);
}

void Lowerer::batch_norm(const Node& n) {
  if (is_int()) refuse("batch norm that was not folded into a convolution (INT: fold it first)");
  // (input, weight, bias, running_mean, running_var, momentum, eps)
  const ir::TensorSpec& xs = g_.value(n.arg("input").tensor()).spec;
  if (xs.rank() != 4) refuse("batch norm of a " + std::to_string(xs.rank()) + "-D input");
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue && !g_.value(n.outputs[i]).users.empty())
      refuse("batch norm statistics outputs are used");
  const int64_t c = xs.sizes[1];
  const std::vector<double> mean = constant_numbers(g_, n.arg("running_mean").tensor());
  const std::vector<double> var = constant_numbers(g_, n.arg("running_var").tensor());
  const std::vector<double> gamma = n.arg("weight").is_none()
                                        ? std::vector<double>(static_cast<size_t>(c), 1.0)
                                        : constant_numbers(g_, n.arg("weight").tensor());
  const std::vector<double> beta = n.arg("bias").is_none()
                                       ? std::vector<double>(static_cast<size_t>(c), 0.0)
                                       : constant_numbers(g_, n.arg("bias").tensor());
  const double eps = n.arg("eps").to_double();
  std::vector<float> scale(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
  for (size_t i = 0; i < static_cast<size_t>(c); ++i) {
    const double s = gamma[i] / std::sqrt(var[i] + eps);
    scale[i] = static_cast<float>(s);
    shift[i] = static_cast<float>(beta[i] - mean[i] * s);
  }
  TVal x = to_nhwc(get(n.arg("input").tensor()));
  const std::string sc = w_.const_f32("bn_scale", {1, 1, 1, c}, scale).name;
  const std::string sh = w_.const_f32("bn_shift", {1, 1, 1, c}, shift).name;
  TVal m = tensor(x.shape, DType::FP32, x);
  w_.add_op(Op::MUL, {x.name, sc, w_.const_i8("shift", {1}, {0}).name}, {m.name});
  TVal out = tensor(x.shape, DType::FP32, x);
  w_.add_op(Op::ADD, {m.name, sh}, {out.name});
  bind(n, out, nullptr);
}

}  // namespace pteron::tosa_aot::detail
