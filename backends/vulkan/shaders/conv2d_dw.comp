#version 450
// Depthwise convolution (groups == C, OC a multiple of C): each invocation computes PX
// consecutive output pixels of one channel, so each weight loaded feeds PX multiply-adds and
// the per-output index arithmetic is hoisted out of the tap loops. Workgroup x: pixel tiles,
// y: output channel, z: batch. Same parameters as conv2d.comp; any kernel size, stride,
// padding, dilation; fused clamp. Products in F, the sums over the taps in A = fp32 (common.glsl).
#define PX 8
layout(local_size_x = 32) in;
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define PTERON_CONV2D_PARAMS
#include "push_constants.h"

void main() {
  const uint plane = p.OH * p.OW;
  const uint p0 = gl_GlobalInvocationID.x * PX;
  if (p0 >= plane) return;
  const uint oc = gl_WorkGroupID.y;
  const uint n = gl_WorkGroupID.z;
  const uint c = oc / (p.OC / p.C);  // the one input channel of this output channel
  const uint x_plane = (n * p.C + c) * p.H;
  int ih0[PX], iw0[PX];
  [[unroll]] for (uint j = 0; j < PX; ++j) {
    const uint q = min(p0 + j, plane - 1);
    ih0[j] = int((q / p.OW) * p.stride_h) - int(p.pad_h);
    iw0[j] = int((q % p.OW) * p.stride_w) - int(p.pad_w);
  }
  A acc[PX];
  [[unroll]] for (uint j = 0; j < PX; ++j) acc[j] = A(0.0);
  uint w = oc * p.KH * p.KW;
  for (uint kh = 0; kh < p.KH; ++kh) {
    for (uint kw = 0; kw < p.KW; ++kw) {
      const F wv = IN1(w++);
      [[unroll]] for (uint j = 0; j < PX; ++j) {
        const int ih = ih0[j] + int(kh * p.dil_h);
        const int iw = iw0[j] + int(kw * p.dil_w);
        // Branch-free: read a clamped in-bounds position, then select zero for padding
        // (divergent branches around loads are what CPU devices pay most for).
        const bool inside = ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W);
        const F v = IN0((x_plane + uint(clamp(ih, 0, int(p.H) - 1))) * p.W +
                        uint(clamp(iw, 0, int(p.W) - 1)));
        acc[j] += A(wv * (inside ? v : F(0.0)));
      }
    }
  }
  const A b = p.has_bias != 0 ? A(IN2(oc)) : A(0.0);
  const uint out_base = (n * p.OC + oc) * plane;
  [[unroll]] for (uint j = 0; j < PX; ++j) {
    if (p0 + j < plane) STORE(out_base + p0 + j, min(max(F(acc[j] + b), F(p.lo)), F(p.hi)));
  }
}
