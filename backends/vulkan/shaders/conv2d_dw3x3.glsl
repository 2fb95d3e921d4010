// Body of the 3x3 depthwise shaders (conv2d_dw3x3s1.comp, conv2d_dw3x3s2.comp define STRIDE):
// each invocation computes PX neighbouring outputs of one output row and channel, reading each
// input row of its window once ((PX - 1) * STRIDE + 3 values) instead of once per output and
// tap: 39 loads per 72 multiply-adds at stride 1 against 81 in conv2d_dw.comp. Invocation x
// walks (output row, PX-wide column tile) pairs, workgroup y is the output channel, z the
// batch. Dilation 1; any padding; same parameters as conv2d.comp; fused clamp. Products in F,
// the 9-tap sums in A = fp32 (common.glsl).
#define PX 8
#define WIN ((PX - 1) * STRIDE + 3)
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 32) in;
#include "common.glsl"
#define PTERON_CONV2D_PARAMS
#include "push_constants.h"

void main() {
  const uint tiles = (p.OW + PX - 1) / PX;  // column tiles per output row
  const uint t = gl_GlobalInvocationID.x;
  if (t >= p.OH * tiles) return;
  const uint oh = t / tiles;
  const uint ow0 = (t % tiles) * PX;
  const uint oc = gl_WorkGroupID.y;
  const uint n = gl_WorkGroupID.z;
  const uint c = oc / (p.OC / p.C);
  const uint x_plane = (n * p.C + c) * p.H;
  F w[9];
  [[unroll]] for (uint k = 0; k < 9; ++k) w[k] = IN1(oc * 9 + k);
  A acc[PX];
  [[unroll]] for (uint j = 0; j < PX; ++j) acc[j] = A(0.0);
  const int iw0 = int(ow0 * STRIDE) - int(p.pad_w);
  [[unroll]] for (uint kh = 0; kh < 3; ++kh) {
    const int ih = int(oh * STRIDE + kh) - int(p.pad_h);
    const bool row_inside = ih >= 0 && ih < int(p.H);
    const uint row = (x_plane + uint(clamp(ih, 0, int(p.H) - 1))) * p.W;
    F xr[WIN];  // the window's input row; zeros in the padding (clamped reads, selected)
    [[unroll]] for (uint i = 0; i < WIN; ++i) {
      const int iw = iw0 + int(i);
      const F v = IN0(row + uint(clamp(iw, 0, int(p.W) - 1)));
      xr[i] = row_inside && iw >= 0 && iw < int(p.W) ? v : F(0.0);
    }
    [[unroll]] for (uint j = 0; j < PX; ++j) {
      [[unroll]] for (uint kw = 0; kw < 3; ++kw) acc[j] += A(w[kh * 3 + kw] * xr[j * STRIDE + kw]);
    }
  }
  const A b = p.has_bias != 0 ? A(IN2(oc)) : A(0.0);
  const uint out_row = ((n * p.OC + oc) * p.OH + oh) * p.OW;
  [[unroll]] for (uint j = 0; j < PX; ++j) {
    if (ow0 + j < p.OW) STORE(out_row + ow0 + j, min(max(F(acc[j] + b), F(p.lo)), F(p.hi)));
  }
}
