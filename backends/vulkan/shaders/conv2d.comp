#version 450
// NCHW direct convolution, one invocation per output element (grid-stride), any groups
// (depthwise when groups == C), stride, symmetric padding and dilation; fused clamp. in0 is the
// input, in1 the weight [OC, C / groups, KH, KW], in2 the bias. Products in F, the sum over
// C / groups x KH x KW (up to 4608 terms in resnet-18) accumulates in A = fp32 (common.glsl).
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_CONV2D_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  const uint cin = p.C / p.groups;
  const uint cout = p.OC / p.groups;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint ow = i % p.OW;
    const uint oh = (i / p.OW) % p.OH;
    const uint oc = (i / (p.OW * p.OH)) % p.OC;
    const uint n = i / (p.OW * p.OH * p.OC);
    const uint g = oc / cout;
    A acc = p.has_bias != 0 ? A(IN2(oc)) : A(0.0);
    for (uint c = 0; c < cin; ++c) {
      const uint x_base = (n * p.C + g * cin + c) * p.H;
      const uint w_base = (oc * cin + c) * p.KH;
      for (uint kh = 0; kh < p.KH; ++kh) {
        const int ih = int(oh * p.stride_h + kh * p.dil_h) - int(p.pad_h);
        if (ih < 0 || ih >= int(p.H)) continue;
        for (uint kw = 0; kw < p.KW; ++kw) {
          const int iw = int(ow * p.stride_w + kw * p.dil_w) - int(p.pad_w);
          if (iw < 0 || iw >= int(p.W)) continue;
          acc += A(IN0((x_base + uint(ih)) * p.W + uint(iw)) * IN1((w_base + kh) * p.KW + kw));
        }
      }
    }
    STORE(i, min(max(F(acc), F(p.lo)), F(p.hi)));
  }
}
