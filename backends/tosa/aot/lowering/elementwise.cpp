// Elementwise ops: add/sub/mul, clamp activations, division and where.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "backends/tosa/aot/lowering/lowerer.h"

namespace pteron::tosa_aot::detail {

TVal Lowerer::clamp_f32(const TVal& in, double lo, double hi) {
  TVal t = tensor(in.shape, in.dtype, in);
  TosaAttr a;
  const float fmax = std::numeric_limits<float>::max();
  a.min_val = f32_bytes(std::isfinite(lo) ? static_cast<float>(lo) : -fmax);
  a.max_val = f32_bytes(std::isfinite(hi) ? static_cast<float>(hi) : fmax);
  w_.add_op(Op::CLAMP, {in.name}, {t.name}, a);
  return t;
}

// Brings two operands to one rank (leading 1s, as torch broadcasts) and one layout.
std::pair<TVal, TVal> Lowerer::align(TVal a, TVal b, const std::vector<int64_t>& la,
                                     const std::vector<int64_t>& lb, size_t rank) {
  auto lift = [&](TVal t, const std::vector<int64_t>& logical) {
    if (logical.size() == rank) return t;
    std::vector<int64_t> s(rank - logical.size(), 1);
    s.insert(s.end(), logical.begin(), logical.end());
    return reshape(to_logical(t), s);
  };
  a = lift(a, la);
  b = lift(b, lb);
  if (a.nhwc != b.nhwc) {
    if (rank == 4) {
      a = to_nhwc(a);
      b = to_nhwc(b);
    } else {
      a = to_logical(a);
      b = to_logical(b);
    }
  }
  return {a, b};
}

void Lowerer::binary(const Node& n, const std::string& op) {
  if (op != ops::aten::mul_Tensor && n.arg("alpha").to_double() != 1.0)
    refuse("alpha other than 1");
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  if (!is_int()) {
    for (const char* operand : {"self", "other"}) {
      const ir::Argument& a = n.arg(operand);
      if (a.is_tensor() && g_.value(a.tensor()).spec.dtype != ScalarType::Float &&
          !(g_.value(a.tensor()).is_constant() && g_.value(a.tensor()).spec.rank() == 0))
        refuse("operands are not f32");
    }
    std::vector<int64_t> la, lb;
    TVal a0 = fp_operand(n.arg("self"), &la);
    TVal b0 = fp_operand(n.arg("other"), &lb);
    auto [a, b] = align(a0, b0, la, lb, ys.rank());
    TVal out = tensor(a.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes, DType::FP32, a);
    if (op == ops::aten::mul_Tensor) {
      const std::string shift = w_.const_i8("shift", {1}, {0}).name;
      w_.add_op(Op::MUL, {a.name, b.name, shift}, {out.name});
    } else {
      w_.add_op(op == ops::aten::add_Tensor ? Op::ADD : Op::SUB, {a.name, b.name}, {out.name});
    }
    return bind(n, out, nullptr);
  }
  if (op == ops::aten::mul_Tensor && n.arg("self").is_tensor()) {
    // x * c for a positive constant c (a Python scalar or a 0-d constant): one RESCALE.
    std::optional<double> c;
    if (!n.arg("other").is_tensor()) {
      c = n.arg("other").to_double();
    } else if (g_.value(n.arg("other").tensor()).is_constant() &&
               g_.value(n.arg("other").tensor()).spec.numel() == 1) {
      c = constant_numbers(g_, n.arg("other").tensor())[0];
    }
    if (c) {
      if (!(*c > 0)) refuse("multiply by a non-positive constant in the INT profile");
      const OutQuant q = out_quant(n, true);
      TVal x = operand(n.arg("self").tensor());
      TVal out =
          rescale(x, {x.scale * *c / q.p.scale}, x.zp, static_cast<int32_t>(q.p.zp), DType::INT8);
      out = clamp_i8(out, q.lo, q.hi);
      return bind(n, out, &q);
    }
  }
  if (!n.arg("self").is_tensor() || !n.arg("other").is_tensor())
    refuse("scalar operand in the INT profile (not lowered)");
  const ValueId av = n.arg("self").tensor(), bv = n.arg("other").tensor();
  const auto& la = g_.value(av).spec.sizes;
  const auto& lb = g_.value(bv).spec.sizes;
  const OutQuant q = out_quant(n, true);
  TVal a0 = operand(av), b0 = operand(bv);
  auto [a, b] = align(a0, b0, la, lb, ys.rank());
  const std::vector<int64_t> oshape = a.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes;
  TVal out;
  if (op == ops::aten::mul_Tensor) {
    // (a - za) * (b - zb) in int32, then scale sa * sb / so.
    TVal ai = rescale(a, {1.0}, a.zp, 0, DType::INT32);
    TVal bi = rescale(b, {1.0}, b.zp, 0, DType::INT32);
    TVal prod = tensor(oshape, DType::INT32, ai);
    const std::string shift = w_.const_i8("shift", {1}, {0}).name;
    w_.add_op(Op::MUL, {ai.name, bi.name, shift}, {prod.name});
    out = rescale(prod, {a.scale * b.scale / q.p.scale}, 0, static_cast<int32_t>(q.p.zp),
                  DType::INT8);
  } else {
    // TFLite's form: both sides to a common scale 2 * max(sa, sb) with 20 bits of headroom.
    const double common = 2 * std::max(a.scale, b.scale);
    const double lift = double(1 << 20);
    TVal ai = rescale(a, {a.scale / common * lift}, a.zp, 0, DType::INT32);
    TVal bi = rescale(b, {b.scale / common * lift}, b.zp, 0, DType::INT32);
    TVal sum = tensor(oshape, DType::INT32, ai);
    w_.add_op(op == ops::aten::add_Tensor ? Op::ADD : Op::SUB, {ai.name, bi.name}, {sum.name});
    out = rescale(sum, {common / (lift * q.p.scale)}, 0, static_cast<int32_t>(q.p.zp), DType::INT8);
  }
  out.nhwc = a.nhwc;
  out = clamp_i8(out, q.lo, q.hi);
  bind(n, out, &q);
}

void Lowerer::activation(const Node& n) {
  const auto bounds = *activation_bounds(n);
  if (!is_int()) {
    TVal x = get(n.arg("self").tensor());
    return bind(n, clamp_f32(x, bounds.first, bounds.second), nullptr);
  }
  const OutQuant q = out_quant(n, false);
  TVal x = requantize(operand(n.arg("self").tensor()), q.p.scale, static_cast<int32_t>(q.p.zp));
  int64_t lo = q.lo, hi = q.hi;
  if (std::isfinite(bounds.first))
    lo = std::max<int64_t>(lo, quantize_value(bounds.first, q.p.scale, q.p.zp));
  if (std::isfinite(bounds.second))
    hi = std::min<int64_t>(hi, quantize_value(bounds.second, q.p.scale, q.p.zp));
  TVal out = clamp_i8(x, lo, hi);
  if (out.name == x.name) {  // no-op clamp: still an operator of its own
    out = tensor(x.shape, x.dtype, x);
    w_.add_op(Op::IDENTITY, {x.name}, {out.name});
  }
  bind(n, out, &q);
}

// A tensor operand, or (FP) a Scalar argument as a [1] constant; `logical` gets its sizes.
TVal Lowerer::fp_operand(const ir::Argument& a, std::vector<int64_t>* logical) {
  if (a.is_tensor()) {
    *logical = g_.value(a.tensor()).spec.sizes;
    return get(a.tensor());
  }
  if (is_int()) refuse("scalar operand in the INT profile (not lowered)");
  logical->clear();
  TVal t;
  t.name = w_.const_f32("scalar", {1}, {static_cast<float>(a.to_double())}).name;
  t.shape = {1};
  return t;
}

TVal Lowerer::mul_fp(const TVal& a, const TVal& b, std::vector<int64_t> shape) {
  TVal out = tensor(std::move(shape), DType::FP32, a);
  w_.add_op(Op::MUL, {a.name, b.name, w_.const_i8("shift", {1}, {0}).name}, {out.name});
  return out;
}

TVal Lowerer::binary_fp(Op op, const TVal& a, const TVal& b, std::vector<int64_t> shape) {
  TVal out = tensor(std::move(shape), DType::FP32, a);
  w_.add_op(op, {a.name, b.name}, {out.name});
  return out;
}

// a / b as a * reciprocal(b) (a constant b is inverted at compile time).
void Lowerer::divide(const Node& n) {
  fp_only("division");
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  std::vector<int64_t> la, lb;
  TVal a = fp_operand(n.arg("self"), &la);
  TVal b = fp_operand(n.arg("other"), &lb);
  if (!n.arg("other").is_tensor() || g_.value(n.arg("other").tensor()).is_constant()) {
    std::vector<float> inv;
    if (n.arg("other").is_tensor()) {
      for (double x : constant_numbers(g_, n.arg("other").tensor()))
        inv.push_back(static_cast<float>(1.0 / x));
    } else {
      inv.push_back(static_cast<float>(1.0 / n.arg("other").to_double()));
    }
    b.name = w_.const_f32("reciprocal", b.shape, inv).name;
  } else {
    TVal r = tensor(b.shape, DType::FP32, b);
    w_.add_op(Op::RECIPROCAL, {b.name}, {r.name});
    b = r;
  }
  auto [x, y] = align(a, b, la, lb, ys.rank());
  bind(n, mul_fp(x, y, x.nhwc ? to_nhwc_shape(ys.sizes) : ys.sizes), nullptr);
}

// where(cond, a, b): SELECT on operands brought to the output's rank (logical layout).
void Lowerer::where(const Node& n) {
  fp_only("where");
  const ir::TensorSpec& ys = g_.value(n.outputs[0]).spec;
  std::vector<TVal> ops;
  for (const char* operand : {"condition", "self", "other"}) {
    if (!n.arg(operand).is_tensor()) refuse("scalar operand (not lowered)");
    const ValueId v = n.arg(operand).tensor();
    TVal t = to_logical(get(v));
    const auto& logical = g_.value(v).spec.sizes;
    if (logical.size() < ys.rank()) {
      std::vector<int64_t> s(ys.rank() - logical.size(), 1);
      s.insert(s.end(), logical.begin(), logical.end());
      t = reshape(t, s);
    }
    ops.push_back(t);
  }
  if (ops[0].dtype != DType::BOOL) refuse("condition is not bool");
  TVal out = tensor(ys.sizes, DType::FP32, ops[1]);
  out.nhwc = false;
  w_.add_op(Op::SELECT, {ops[0].name, ops[1].name, ops[2].name}, {out.name});
  bind(n, out, nullptr);
}

}  // namespace pteron::tosa_aot::detail
