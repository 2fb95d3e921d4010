#version 450
// The linear/matmul shader without shared memory or barriers, for CPU Vulkan implementations
// (lavapipe), where a workgroup barrier costs a coroutine switch per invocation and the tiled
// shader's shared-memory staging buys nothing (the "device memory" is the CPU's cache anyway).
// One invocation per output element, 64 along N; same parameters as linear.comp. Products in F,
// the K-long sum in A = fp32 (common.glsl).
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_LINEAR_PARAMS
#include "push_constants.h"

void main() {
  const uint n = gl_GlobalInvocationID.x;
  const uint m = gl_GlobalInvocationID.y;
  if (m >= p.M || n >= p.N) return;
  const uint batch = gl_WorkGroupID.z;
  const uint wb = batch * p.w_batch_stride;
  A acc = 0.0;
  const uint a = batch * p.a_batch_stride + m * p.K;
  if (p.w_transposed != 0) {
    const uint w = wb + n * p.K;
    for (uint k = 0; k < p.K; ++k) acc += A(IN0(a + k) * IN1(w + k));
  } else {
    for (uint k = 0; k < p.K; ++k) acc += A(IN0(a + k) * IN1(wb + k * p.N + n));
  }
  if (p.has_bias != 0) acc += A(IN2(n));
  STORE(batch * p.out_batch_stride + m * p.N + n, min(max(F(acc), F(p.lo)), F(p.hi)));
}
