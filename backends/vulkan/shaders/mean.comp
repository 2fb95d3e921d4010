#version 450
// Mean over the trailing dims: the input viewed as [rows, cols], one workgroup per row
// (grid-stride), 64 threads summing through shared memory; the sum is fp32 (A) in every variant.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_ROWS_PARAMS
#include "push_constants.h"

shared float partial[64];

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    A sum = 0.0;
    for (uint c = t; c < p.cols; c += 64) sum += A(IN0(row * p.cols + c));
    partial[t] = sum;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
      if (t < s) partial[t] += partial[t + s];
      barrier();
    }
    if (t == 0) STORE(row, partial[0] / float(p.cols));
    barrier();
  }
}
