#version 450
// out = min(max(in0, lo), hi) elementwise (relu is [0, inf)). NaN stays NaN, as in torch.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_CLAMP_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const F x = IN0(i);
    STORE(i, isnan(x) ? x : min(max(x, F(p.lo)), F(p.hi)));
  }
}
