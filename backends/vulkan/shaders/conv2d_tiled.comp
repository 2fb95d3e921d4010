#version 450
// NCHW convolution, register-blocked: each invocation computes a tile of OCB output channels x
// PX output pixels (consecutive in the flattened OH * OW plane), so every input value loaded
// feeds OCB multiply-adds and every weight feeds PX. Workgroup x: pixel tiles, y: (group,
// channel block), z: batch. Same parameters as conv2d.comp; any groups, stride, padding,
// dilation; fused clamp. in0 input, in1 weight [OC, C / groups, KH, KW], in2 bias. Products in
// F, the sums over C / groups x KH x KW in A = fp32 (common.glsl).
//
// Why registers and not shared memory: on CPU Vulkan devices (lavapipe) loads from shared
// memory cost what loads from a buffer cost, and each barrier switches every invocation's
// coroutine; the register tile is what cuts the loads per multiply-add (24 per 128 here, vs 2
// per 1 in conv2d.comp) on any device.
#define PX 8
#define OCB 16
layout(local_size_x = 32) in;
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#define PTERON_CONV2D_PARAMS
#include "push_constants.h"

void main() {
  const uint cin = p.C / p.groups;
  const uint cout = p.OC / p.groups;
  const uint plane = p.OH * p.OW;
  const uint p0 = gl_GlobalInvocationID.x * PX;
  if (p0 >= plane) return;
  const uint blocks = (cout + OCB - 1) / OCB;  // channel blocks per group
  const uint g = gl_WorkGroupID.y / blocks;
  const uint oc0 = g * cout + (gl_WorkGroupID.y % blocks) * OCB;
  const uint ocn = min(OCB, g * cout + cout - oc0);  // valid channels in this block
  const uint n = gl_WorkGroupID.z;
  const uint taps = p.KH * p.KW;

  int ih0[PX], iw0[PX];
  [[unroll]] for (uint j = 0; j < PX; ++j) {
    const uint q = min(p0 + j, plane - 1);  // past the end: recompute the last pixel
    ih0[j] = int((q / p.OW) * p.stride_h) - int(p.pad_h);
    iw0[j] = int((q % p.OW) * p.stride_w) - int(p.pad_w);
  }
  uint wrow[OCB];  // first weight of each channel (channels past the block's end repeat)
  [[unroll]] for (uint o = 0; o < OCB; ++o) wrow[o] = (oc0 + min(o, ocn - 1)) * cin * taps;
  A acc[OCB * PX];
  [[unroll]] for (uint i = 0; i < OCB * PX; ++i) acc[i] = A(0.0);

  for (uint c = 0; c < cin; ++c) {
    const uint x_plane = (n * p.C + g * cin + c) * p.H;
    const uint w_c = c * taps;
    for (uint kh = 0; kh < p.KH; ++kh) {
      for (uint kw = 0; kw < p.KW; ++kw) {
        F xv[PX];
        [[unroll]] for (uint j = 0; j < PX; ++j) {
          const int ih = ih0[j] + int(kh * p.dil_h);
          const int iw = iw0[j] + int(kw * p.dil_w);
          // Branch-free: a clamped in-bounds read, zero selected for padding.
          const bool inside = ih >= 0 && ih < int(p.H) && iw >= 0 && iw < int(p.W);
          const F v = IN0((x_plane + uint(clamp(ih, 0, int(p.H) - 1))) * p.W +
                          uint(clamp(iw, 0, int(p.W) - 1)));
          xv[j] = inside ? v : F(0.0);
        }
        const uint w_tap = w_c + kh * p.KW + kw;
        [[unroll]] for (uint o = 0; o < OCB; ++o) {
          const F wv = IN1(wrow[o] + w_tap);
          [[unroll]] for (uint j = 0; j < PX; ++j) acc[o * PX + j] += A(wv * xv[j]);
        }
      }
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
