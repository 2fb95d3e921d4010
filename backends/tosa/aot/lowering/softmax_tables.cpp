// Softmax and the nonlinear functions (INT: 256-entry TABLEs; FP: TOSA's own operators).
#include <algorithm>
#include <cmath>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

void Lowerer::softmax(const Node& n) {
  const ir::TensorSpec& xs = g_.value(n.arg("self").tensor()).spec;
  if (n.arg("half_to_float").is<bool>() && n.arg("half_to_float").get<bool>())
    refuse("half_to_float softmax");
  const int64_t dim = norm_dim(n.arg("dim").to_int(), xs.rank());
  if (is_int()) return softmax_int(n, dim);
  TVal x = to_logical(get(n.arg("self").tensor()));
  std::vector<int64_t> reduced = x.shape;
  reduced[static_cast<size_t>(dim)] = 1;
  TosaAttr ax;
  ax.axis = static_cast<int32_t>(dim);
  // exp(x - max) / sum(exp(x - max)), with the division as a reciprocal and a multiply.
  TVal mx = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::REDUCE_MAX, {x.name}, {mx.name}, ax);
  TVal shifted = tensor(x.shape, DType::FP32, x);
  w_.add_op(Op::SUB, {x.name, mx.name}, {shifted.name});
  TVal e = tensor(x.shape, DType::FP32, x);
  w_.add_op(Op::EXP, {shifted.name}, {e.name});
  TVal sum = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::REDUCE_SUM, {e.name}, {sum.name}, ax);
  TVal inv = tensor(reduced, DType::FP32, x);
  w_.add_op(Op::RECIPROCAL, {sum.name}, {inv.name});
  TVal out = tensor(x.shape, DType::FP32, x);
  const std::string shift = w_.const_i8("shift", {1}, {0}).name;
  w_.add_op(Op::MUL, {e.name, inv.name, shift}, {out.name});
  bind(n, out, nullptr);
}

// INT softmax from operators Ethos-U's Vela compiles (TOSA INT has no EXP; Vela's TABLE is
// int8 -> int8 only, so a 16-bit exp is two int8 TABLEs, its high and low bytes):
//   m = REDUCE_MAX(x) (int8); d = x - m in int32, in [-255, 0]; d8 = d + 127 (RESCALE to int8)
//   E = round(65535 exp(s_in d)) in [0, 65535] = 256 hi + lo, hi and lo each a TABLE of d8
//       (stored minus 128), RESCALEd to int32 (x256 and x1) and ADDed. E = 65535 at the row's
//       max, so the row sum S (REDUCE_SUM, int32) is in [65535, 65535 N] and never 0
//   R ~ 2^46 / S by Newton-Raphson in int32: R <- R + (R * (2^30 - (S * R >> 16))) >> 30
//       (MULs with shifts 16 and 30), from R0 = 2^47 / (65535 (N + 1)), whose error
//       |1 - S R0 / 2^46| <= (N-1)/(N+1) squares each step; steps until it is below 2^-24
//   out = RESCALE(E * R >> 16) by 1 / (2^30 s_out) to the output's zero point.
// Every intermediate fits int32 for rows up to 4096. Against float softmax then quantize:
// within 1 int8 step, rarely off (test_tosa_ops.py).
void Lowerer::softmax_int(const Node& n, int64_t dim) {
  const OutQuant q = out_quant(n, false);
  TVal x = to_logical(operand(n.arg("self").tensor()));
  const int64_t row = x.shape[static_cast<size_t>(dim)];
  if (row > 4096) refuse("INT softmax over more than 4096 elements (int32 reciprocal range)");
  std::vector<int64_t> reduced = x.shape;
  reduced[static_cast<size_t>(dim)] = 1;
  const std::vector<int64_t> ones(x.shape.size(), 1);
  TosaAttr ax;
  ax.axis = static_cast<int32_t>(dim);
  TVal mx = tensor(reduced, DType::INT8, x);
  w_.add_op(Op::REDUCE_MAX, {x.name}, {mx.name}, ax);
  TVal xi = rescale(x, {1.0}, 0, 0, DType::INT32);
  TVal mi = rescale(mx, {1.0}, 0, 0, DType::INT32);
  TVal d = tensor(x.shape, DType::INT32, x);
  w_.add_op(Op::SUB, {xi.name, mi.name}, {d.name});
  TVal d8 = rescale(d, {1.0}, 0, 127, DType::INT8);
  std::vector<int8_t> hi(256), lo(256);
  for (int i = 0; i < 256; ++i) {
    const auto e = static_cast<int32_t>(std::lround(65535.0 * std::exp(x.scale * (i - 255))));
    hi[static_cast<size_t>(i)] = static_cast<int8_t>((e >> 8) - 128);
    lo[static_cast<size_t>(i)] = static_cast<int8_t>((e & 255) - 128);
  }
  TVal hi8 = tensor(x.shape, DType::INT8, x), lo8 = tensor(x.shape, DType::INT8, x);
  w_.add_op(Op::TABLE, {d8.name, w_.const_i8("exp_hi", {256}, hi).name}, {hi8.name});
  w_.add_op(Op::TABLE, {d8.name, w_.const_i8("exp_lo", {256}, lo).name}, {lo8.name});
  TVal e = tensor(x.shape, DType::INT32, x);
  w_.add_op(Op::ADD,
            {rescale(hi8, {256.0}, -128, 0, DType::INT32).name,
             rescale(lo8, {1.0}, -128, 0, DType::INT32).name},
            {e.name});
  TVal sum = tensor(reduced, DType::INT32, x);
  w_.add_op(Op::REDUCE_SUM, {e.name}, {sum.name}, ax);

  const double r0 = std::ldexp(1.0, 47) / (65535.0 * static_cast<double>(row + 1));
  TVal r{w_.const_i32("recip0", ones, {static_cast<int32_t>(r0)}).name, ones, DType::INT32};
  const std::string unit = w_.const_i32("one_q30", ones, {1 << 30}).name;
  const std::string shift16 = w_.const_i8("shift", {1}, {16}).name;
  const std::string shift30 = w_.const_i8("shift", {1}, {30}).name;
  double err = static_cast<double>(row - 1) / static_cast<double>(row + 1);
  while (err > std::ldexp(1.0, -24)) {
    err *= err;
    TVal p = tensor(reduced, DType::INT32, x);
    w_.add_op(Op::MUL, {sum.name, r.name, shift16}, {p.name});
    TVal dev = tensor(reduced, DType::INT32, x);
    w_.add_op(Op::SUB, {unit, p.name}, {dev.name});
    TVal corr = tensor(reduced, DType::INT32, x);
    w_.add_op(Op::MUL, {r.name, dev.name, shift30}, {corr.name});
    TVal next = tensor(reduced, DType::INT32, x);
    w_.add_op(Op::ADD, {r.name, corr.name}, {next.name});
    r = next;
  }
  TVal prod = tensor(x.shape, DType::INT32, x);
  w_.add_op(Op::MUL, {e.name, r.name, shift16}, {prod.name});
  TVal out = rescale(prod, {1.0 / (std::ldexp(1.0, 30) * q.p.scale)}, 0,
                     static_cast<int32_t>(q.p.zp), DType::INT8);
  out = clamp_i8(out, q.lo, q.hi);
  bind(n, out, &q);
}

void Lowerer::sigmoid_tanh(const Node& n, const std::string& op) {
  const bool sigmoid = op == ops::aten::sigmoid;
  if (!is_int()) {
    TVal x = get(n.arg("self").tensor());
    TVal out = tensor(x.shape, DType::FP32, x);
    w_.add_op(sigmoid ? Op::SIGMOID : Op::TANH, {x.name}, {out.name});
    return bind(n, out, nullptr);
  }
  table_int(n, [sigmoid](double x) { return sigmoid ? 1.0 / (1.0 + std::exp(-x)) : std::tanh(x); });
}

// INT: any elementwise function as a 256-entry TABLE, entry i = quantize(f(dequantize(i - 128))).
template <typename F>
void Lowerer::table_int(const Node& n, F f) {
  const OutQuant q = out_quant(n, false);
  TVal x = operand(n.arg("self").tensor());
  std::vector<int8_t> table(256);
  for (int i = 0; i < 256; ++i) {
    const double real = (i - 128 - x.zp) * x.scale;
    table[static_cast<size_t>(i)] = quantize_value(f(real), q.p.scale, q.p.zp);
  }
  const std::string t = w_.const_i8("table", {256}, table).name;
  TVal out = tensor(x.shape, DType::INT8, x);
  w_.add_op(Op::TABLE, {x.name, t}, {out.name});
  out = clamp_i8(out, q.lo, q.hi);
  bind(n, out, &q);
}

// gelu: INT a TABLE; FP the erf form 0.5 x (1 + erf(x / sqrt 2)) with ERF, or the tanh form
// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) with TANH, as torch's `approximate` says.
void Lowerer::gelu(const Node& n) {
  std::string approximate = "none";
  if (n.arg("approximate").is<std::string>()) approximate = n.arg("approximate").get<std::string>();
  if (approximate != "none" && approximate != "tanh")
    refuse("gelu approximate='" + approximate + "'");
  const bool tanh_form = approximate == "tanh";
  const double k = std::sqrt(2.0 / M_PI);
  if (is_int()) {
    return table_int(n, [=](double x) {
      return tanh_form ? 0.5 * x * (1 + std::tanh(k * (x + 0.044715 * x * x * x)))
                       : 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    });
  }
  TVal x = get(n.arg("self").tensor());
  const std::vector<int64_t> ones(x.shape.size(), 1);
  auto scalar = [&](const char* name, double v) {
    return TVal{w_.const_f32(name, ones, {static_cast<float>(v)}).name, ones};
  };
  TVal inner;
  Op fn = Op::ERF;
  if (tanh_form) {
    TVal cube = mul_fp(mul_fp(x, x, x.shape), x, x.shape);
    TVal poly = binary_fp(Op::ADD, x, mul_fp(cube, scalar("c3", 0.044715), x.shape), x.shape);
    inner = mul_fp(poly, scalar("sqrt_2_over_pi", k), x.shape);
    fn = Op::TANH;
  } else {
    inner = mul_fp(x, scalar("inv_sqrt2", 1 / std::sqrt(2.0)), x.shape);
  }
  TVal f = tensor(x.shape, DType::FP32, x);
  w_.add_op(fn, {inner.name}, {f.name});
  TVal one_plus = binary_fp(Op::ADD, f, scalar("one", 1.0), x.shape);
  TVal half_x = mul_fp(x, scalar("half", 0.5), x.shape);
  bind(n, mul_fp(half_x, one_plus, x.shape), nullptr);
}

// hardswish, hardsigmoid, leaky_relu, silu, elu: a TABLE in INT; FP from CLAMP, MUL, ADD,
// MAXIMUM and SIGMOID (elu has no FP form here).
void Lowerer::pointwise(const Node& n, const std::string& op) {
  if (op == ops::aten::hardswish) {
    if (is_int()) return table_int(n, [](double x) { return x * std::clamp(x + 3, 0.0, 6.0) / 6; });
    TVal x = get(n.arg("self").tensor());
    TVal three{w_.const_f32("three", std::vector<int64_t>(x.shape.size(), 1), {3.0f}).name,
               std::vector<int64_t>(x.shape.size(), 1)};
    TVal shifted = binary_fp(Op::ADD, x, three, x.shape);
    TVal relu6 = clamp_f32(shifted, 0, 6);
    TVal sixth{w_.const_f32("sixth", three.shape, {1.0f / 6}).name, three.shape};
    return bind(n, mul_fp(mul_fp(x, relu6, x.shape), sixth, x.shape), nullptr);
  }
  if (op == ops::aten::hardsigmoid) {
    if (is_int()) return table_int(n, [](double x) { return std::clamp(x / 6 + 0.5, 0.0, 1.0); });
    TVal x = get(n.arg("self").tensor());
    const std::vector<int64_t> ones(x.shape.size(), 1);
    TVal sixth{w_.const_f32("sixth", ones, {1.0f / 6}).name, ones};
    TVal half{w_.const_f32("half", ones, {0.5f}).name, ones};
    TVal y = binary_fp(Op::ADD, mul_fp(x, sixth, x.shape), half, x.shape);
    return bind(n, clamp_f32(y, 0, 1), nullptr);
  }
  if (op == ops::aten::leaky_relu) {
    const double slope = n.arg("negative_slope").to_double();
    if (is_int()) return table_int(n, [slope](double x) { return x >= 0 ? x : x * slope; });
    if (slope < 0 || slope > 1) refuse("leaky_relu slope outside [0, 1] (FP: max(x, slope*x))");
    TVal x = get(n.arg("self").tensor());
    const std::vector<int64_t> ones(x.shape.size(), 1);
    TVal k{w_.const_f32("slope", ones, {static_cast<float>(slope)}).name, ones};
    TVal out = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::MAXIMUM, {x.name, mul_fp(x, k, x.shape).name}, {out.name});
    return bind(n, out, nullptr);
  }
  if (op == ops::aten::silu) {
    if (is_int()) return table_int(n, [](double x) { return x / (1.0 + std::exp(-x)); });
    TVal x = get(n.arg("self").tensor());
    TVal sg = tensor(x.shape, DType::FP32, x);
    w_.add_op(Op::SIGMOID, {x.name}, {sg.name});
    return bind(n, mul_fp(x, sg, x.shape), nullptr);
  }
  // elu(x) = x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)
  if (!is_int()) refuse("elu in the FP profile (not lowered)");
  const double alpha = n.arg("alpha").to_double(), scale = n.arg("scale").to_double(),
               in_scale = n.arg("input_scale").to_double();
  table_int(n, [=](double x) {
    return x > 0 ? scale * x : scale * alpha * (std::exp(x * in_scale) - 1);
  });
}

}  // namespace pteron::tosa_aot::detail
