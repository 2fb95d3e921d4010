#version 450
// out = f(in0) elementwise; f by `op` (fb::UnaryOp numbering): 0 sigmoid, 1 tanh, 2 gelu (erf),
// 3 gelu (tanh approximation), 4 silu, 5 hardswish, 6 hardsigmoid, 7 exp, 8 neg, 9 sqrt,
// 10 rsqrt. Grid-stride loop.
layout(local_size_x = 64) in;
#include "common.glsl"
layout(push_constant) uniform Params {
  uint numel;
  uint op;
} p;

// GLSL has no erf: Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7.
float erf_approx(float x) {
  const float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  const float y =
      1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                 t * 1.061405429)))) * exp(-x * x);
  return x < 0.0 ? -y : y;
}

// tanh through exp of a clamped argument (|x| > 15 is +-1 in fp32); some implementations'
// tanh overflow to NaN for large |x|.
float tanh_safe(float x) {
  const float e = exp(2.0 * clamp(x, -15.0, 15.0));
  return (e - 1.0) / (e + 1.0);
}

float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const float x = IN0(i);
    float y;
    switch (p.op) {
      case 0: y = sigmoid(x); break;
      case 1: y = tanh_safe(x); break;
      case 2: y = 0.5 * x * (1.0 + erf_approx(x * 0.70710678118654752)); break;
      case 3: y = 0.5 * x * (1.0 + tanh_safe(0.79788456080286536 * (x + 0.044715 * x * x * x)));
              break;
      case 4: y = x * sigmoid(x); break;
      case 5: y = x * clamp(x + 3.0, 0.0, 6.0) / 6.0; break;
      case 6: y = clamp(x + 3.0, 0.0, 6.0) / 6.0; break;
      case 7: y = exp(x); break;
      case 8: y = -x; break;
      case 9: y = sqrt(x); break;
      default: y = inversesqrt(x); break;
    }
    STORE(i, y);
  }
}
