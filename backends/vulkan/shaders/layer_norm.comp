#version 450
// Layer norm over the last dim of a [rows, cols] view: one workgroup per row (grid-stride),
// 64 threads; mean, then variance of (x - mean) (two passes, as torch), each reduced in shared
// memory. in1 = weight, in2 = bias when present. The statistics and x - mean are fp32 in every
// variant (A; fp16 would cancel when |mean| >> the spread); the affine part runs in F.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_LAYER_NORM_PARAMS
#include "push_constants.h"

shared float partial[64];

float reduce_sum(float v) {
  const uint t = gl_LocalInvocationID.x;
  partial[t] = v;
  barrier();
  for (uint s = 32; s > 0; s >>= 1) {
    if (t < s) partial[t] += partial[t + s];
    barrier();
  }
  const float total = partial[0];
  barrier();
  return total;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  for (uint row = gl_WorkGroupID.x; row < p.rows; row += gl_NumWorkGroups.x) {
    const uint base = row * p.cols;
    A sum = 0.0;
    for (uint c = t; c < p.cols; c += 64) sum += A(IN0(base + c));
    const A mean = reduce_sum(sum) / float(p.cols);
    A sq = 0.0;
    for (uint c = t; c < p.cols; c += 64) {
      const A d = A(IN0(base + c)) - mean;
      sq += d * d;
    }
    const A rstd = inversesqrt(reduce_sum(sq) / float(p.cols) + p.eps);
    for (uint c = t; c < p.cols; c += 64) {
      F y = F((A(IN0(base + c)) - mean) * rstd);
      if (p.has_weight != 0) y *= IN1(c);
      if (p.has_bias != 0) y += IN2(c);
      STORE(base + c, y);
    }
  }
}
