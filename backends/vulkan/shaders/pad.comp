#version 450
// Padding of the last two dims (a 1-D pad is H = OH, top = 0), one invocation per output
// element (grid-stride). mode 0: constant `value` outside the input, 1: reflect (mirror
// around the edge element, torch's reflection_pad: pads < the dim), 2: replicate (the edge
// element). A copy in every variant (F holds T exactly; the value is rounded to T once).
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_PAD_PARAMS
#include "push_constants.h"

// The source of padded coordinate `o` along an axis of `size`, or -1 (constant padding).
int source(uint o, int before, uint size) {
  int s = int(o) - before;
  if (s >= 0 && s < int(size)) return s;
  if (p.mode == 0) return -1;
  if (p.mode == 1) return s < 0 ? -s : 2 * (int(size) - 1) - s;
  return clamp(s, 0, int(size) - 1);
}

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint ow = i % p.OW;
    const uint oh = (i / p.OW) % p.OH;
    const uint base = (i / (p.OW * p.OH)) * p.H * p.W;
    const int ih = source(oh, p.top, p.H), iw = source(ow, p.left, p.W);
    if (ih < 0 || iw < 0) {
      STORE(i, F(p.value));
    } else {
      STORE(i, IN0(base + uint(ih) * p.W + uint(iw)));
    }
  }
}
