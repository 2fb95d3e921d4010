#version 450
// out[r, :] = weight[indices[r], :]: in0 is the weight [V, D], in1 the Int64 indices (low and
// high 32-bit words). An index outside [0, V) (negative ones included) writes zeros: a shader
// cannot raise as torch does.
layout(local_size_x = 64) in;
#define PTERON_IN1_INDICES
#include "common.glsl"
#define PTERON_EMBEDDING_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint r = i / p.D;
    const uint lo = in1[2 * r];
    const uint hi = in1[2 * r + 1];
    STORE(i, (hi == 0 && lo < p.V) ? IN0(lo * p.D + i % p.D) : F(0.0));
  }
}
