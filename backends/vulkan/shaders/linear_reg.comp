#version 450
// out[M, N] = in0[M, K] . W + in2[N], clamped to [lo, hi], with a register tile of RM rows x
// RN columns per invocation and no shared memory or barriers: each k step loads RM values of
// A and RN of W for RM * RN multiply-adds (24 loads per 128 here; linear_direct.comp does 2 per
// 1). The shader CPU Vulkan devices (lavapipe) run, where loads, not arithmetic, decide the
// speed and barriers are expensive. Same parameters as linear.comp (W = in1[N, K]^T when
// w_transposed, else in1[K, N]; workgroup z is the batch of a bmm). Products in F, the K-long
// sums in A = fp32 (common.glsl).
#define RM 8
#define RN 16
#extension GL_EXT_control_flow_attributes : require
layout(local_size_x = 32) in;
#include "common.glsl"
#define PTERON_LINEAR_PARAMS
#include "push_constants.h"

void main() {
  const uint n0 = gl_GlobalInvocationID.x * RN;
  const uint m0 = gl_GlobalInvocationID.y * RM;
  if (n0 >= p.N || m0 >= p.M) return;
  const uint batch = gl_WorkGroupID.z;
  // Rows and columns past the end repeat the last one (computed, never stored).
  uint a_row[RM];
  [[unroll]] for (uint i = 0; i < RM; ++i) {
    a_row[i] = batch * p.a_batch_stride + min(m0 + i, p.M - 1) * p.K;
  }
  uint w_col[RN];  // W[k, n] = in1[w_col[j] + k * w_step]
  const uint w_step = p.w_transposed != 0 ? 1 : p.N;
  [[unroll]] for (uint j = 0; j < RN; ++j) {
    const uint n = min(n0 + j, p.N - 1);
    w_col[j] = batch * p.w_batch_stride + (p.w_transposed != 0 ? n * p.K : n);
  }
  A acc[RM * RN];
  [[unroll]] for (uint i = 0; i < RM * RN; ++i) acc[i] = A(0.0);
  for (uint k = 0; k < p.K; ++k) {
    F a[RM], w[RN];
    [[unroll]] for (uint i = 0; i < RM; ++i) a[i] = IN0(a_row[i] + k);
    [[unroll]] for (uint j = 0; j < RN; ++j) w[j] = IN1(w_col[j] + k * w_step);
    [[unroll]] for (uint i = 0; i < RM; ++i) {
      [[unroll]] for (uint j = 0; j < RN; ++j) acc[i * RN + j] += A(a[i] * w[j]);
    }
  }
  [[unroll]] for (uint i = 0; i < RM; ++i) {
    if (m0 + i >= p.M) break;
    const uint out_row = batch * p.out_batch_stride + (m0 + i) * p.N;
    [[unroll]] for (uint j = 0; j < RN; ++j) {
      if (n0 + j >= p.N) break;
      A v = acc[i * RN + j];
      if (p.has_bias != 0) v += A(IN2(n0 + j));
      STORE(out_row + n0 + j, min(max(F(v), F(p.lo)), F(p.hi)));
    }
  }
}
