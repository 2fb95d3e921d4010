#version 450
// out = in0 (op) in1 with numpy broadcasting: `dims` are the output's sizes (innermost last,
// `rank` of them), `stride0`/`stride1` the inputs' element strides per output dim (0 where the
// input broadcasts). op 0: a + alpha * b, 1: a - alpha * b, 2: a * b, 4: a / b, 3: a (a strided
// copy from element base0 on: permute, slice; in1 is not read). Grid-stride loop, so any element count fits the dispatch limit.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_BINARY_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    uint rest = i;
    uint ia = p.base0;
    uint ib = 0;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint c = rest % p.dims[d];
      rest /= p.dims[d];
      ia += c * p.stride0[d];
      ib += c * p.stride1[d];
    }
    const F a = IN0(ia);
    if (p.op == 3) {
      STORE(i, a);
      continue;
    }
    const F b = IN1(ib);
    const F alpha = F(p.alpha);
    const F r = p.op == 0 ? a + alpha * b
              : p.op == 1 ? a - alpha * b
              : p.op == 2 ? a * b
                          : a / b;
    STORE(i, r);
  }
}
