#version 450
// out = f(in0) elementwise; f by `op` (fb::UnaryOp numbering): 0 sigmoid, 1 tanh, 2 gelu (erf),
// 3 gelu (tanh approximation), 4 silu, 5 hardswish, 6 hardsigmoid, 7 exp, 8 neg, 9 sqrt,
// 10 rsqrt. Grid-stride loop.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_UNARY_PARAMS
#include "push_constants.h"

// GLSL has no erf: Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7. Evaluated at fp32
// (TF) in every variant, as are tanh and the exp op (common.glsl's rule).
TF erf_approx(TF x) {
  const TF t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const TF y =
      1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                 t * 1.061405429)))) * exp(-x * x);
  return x < 0.0 ? -y : y;
}

// tanh through exp of a clamped argument (|x| > 15 is +-1 in fp32); some implementations'
// tanh overflow to NaN for large |x|.
TF tanh_safe(TF x) {
  const TF e = exp(2.0 * clamp(x, -15.0, 15.0));
  return (e - 1.0) / (e + 1.0);
}

// In F: exp(-x) overflowing to inf (x < -11 in fp16) gives the right limit, 0.
F sigmoid(F x) { return F(1.0) / (F(1.0) + exp(-x)); }

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const F x = IN0(i);
    const TF xt = TF(x);
    F y;
    switch (p.op) {
      case 0: y = sigmoid(x); break;
      case 1: y = F(tanh_safe(xt)); break;
      case 2: y = F(0.5) * x * (F(1.0) + F(erf_approx(xt * 0.70710678118654752))); break;
      case 3: y = F(0.5) * x *
                  (F(1.0) + F(tanh_safe(0.79788456080286536 * (xt + 0.044715 * xt * xt * xt))));
              break;
      case 4: y = x * sigmoid(x); break;
      case 5: y = x * clamp(x + F(3.0), F(0.0), F(6.0)) / F(6.0); break;
      case 6: y = clamp(x + F(3.0), F(0.0), F(6.0)) / F(6.0); break;
      case 7: y = F(exp(xt)); break;  // fp16 exp: error grows with |x| (common.glsl)
      case 8: y = -x; break;
      case 9: y = sqrt(x); break;
      default: y = inversesqrt(x); break;
    }
    STORE(i, y);
  }
}
