#version 450
// Softmax over the last dim of a [rows, cols] view: one workgroup per row (grid-stride over
// rows), 64 threads reducing max and sum through shared memory. Max, x - max and exp in F; the
// sum of the exps in A = fp32.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_ROWS_PARAMS
#include "push_constants.h"

shared float partial[64];

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint base = row * p.cols;
    F m = F(-1.0 / 0.0);
    for (uint c = t; c < p.cols; c += 64) m = max(m, IN0(base + c));
    partial[t] = m;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
      if (t < s) partial[t] = max(partial[t], partial[t + s]);
      barrier();
    }
    const F row_max = F(partial[0]);
    barrier();
    A sum = 0.0;
    for (uint c = t; c < p.cols; c += 64) sum += A(exp(IN0(base + c) - row_max));
    partial[t] = sum;
    barrier();
    for (uint s = 32; s > 0; s >>= 1) {
      if (t < s) partial[t] += partial[t + s];
      barrier();
    }
    const F inv = F(1.0 / partial[0]);
    barrier();
    for (uint c = t; c < p.cols; c += 64) STORE(base + c, exp(IN0(base + c) - row_max) * inv);
  }
}
