#version 450
// Pointwise (1x1, stride 1, no padding, groups 1) convolution as a GEMM per image:
// out[n, oc, q] = bias[oc] + sum_c W[oc, c] * X[n, c, q] over the H * W plane q. Register tile
// of OCB channels x PX pixels per invocation as in conv2d_tiled.comp, without its tap loops
// and bounds checks. Same parameters as conv2d.comp; fused clamp. Products in F, the C-long sums
// in A = fp32 (common.glsl).
#define PX 8
#define OCB 16
layout(local_size_x = 32) in;
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define PTERON_CONV2D_PARAMS
#include "push_constants.h"

void main() {
  const uint plane = p.H * p.W;
  const uint p0 = gl_GlobalInvocationID.x * PX;
  if (p0 >= plane) return;
  const uint oc0 = gl_WorkGroupID.y * OCB;
  const uint ocn = min(OCB, p.OC - oc0);
  const uint n = gl_WorkGroupID.z;
  uint xq[PX];  // pixels past the plane's end read the last one
  [[unroll]] for (uint j = 0; j < PX; ++j) xq[j] = n * p.C * plane + min(p0 + j, plane - 1);
  uint wrow[OCB];
  [[unroll]] for (uint o = 0; o < OCB; ++o) wrow[o] = (oc0 + min(o, ocn - 1)) * p.C;
  A acc[OCB * PX];
  [[unroll]] for (uint i = 0; i < OCB * PX; ++i) acc[i] = A(0.0);
  for (uint c = 0; c < p.C; ++c) {
    F xv[PX];
    [[unroll]] for (uint j = 0; j < PX; ++j) xv[j] = IN0(xq[j] + c * plane);
    [[unroll]] for (uint o = 0; o < OCB; ++o) {
      const F wv = IN1(wrow[o] + c);
      [[unroll]] for (uint j = 0; j < PX; ++j) acc[o * PX + j] += A(wv * xv[j]);
    }
  }
  [[unroll]] for (uint o = 0; o < OCB; ++o) {  // constant bounds keep acc in registers
    if (o >= ocn) break;
    const A b = p.has_bias != 0 ? A(IN2(oc0 + o)) : A(0.0);
    const uint out_base = (n * p.OC + oc0 + o) * plane;
    [[unroll]] for (uint j = 0; j < PX; ++j) {
      if (p0 + j < plane) {
        STORE(out_base + p0 + j, min(max(F(acc[o * PX + j] + b), F(p.lo)), F(p.hi)));
      }
    }
  }
}
