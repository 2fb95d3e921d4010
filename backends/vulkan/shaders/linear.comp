#version 450
// out[M, N] = in0[M, K] . W + in2[N], clamped to [lo, hi]. W is in1[N, K]^T when
// w_transposed (torch linear weight) or in1[K, N] (mm/addmm). 16x16 output tiles; each step
// stages a 16x16 tile of A and of W in shared memory (padded rows avoid bank conflicts). Tiles
// and products in F, the K-long sum in A = fp32 (common.glsl).
layout(local_size_x = 16, local_size_y = 16) in;
#include "common.glsl"
#define PTERON_LINEAR_PARAMS
#include "push_constants.h"

shared F tile_a[16][17];
shared F tile_w[16][17];

void main() {
  const uint lx = gl_LocalInvocationID.x;
  const uint ly = gl_LocalInvocationID.y;
  const uint n = gl_WorkGroupID.x * 16 + lx;
  const uint m = gl_WorkGroupID.y * 16 + ly;
  const uint ab = gl_WorkGroupID.z * p.a_batch_stride;
  const uint wb = gl_WorkGroupID.z * p.w_batch_stride;
  A acc = 0.0;
  for (uint k0 = 0; k0 < p.K; k0 += 16) {
    const uint ak = k0 + lx;
    tile_a[ly][lx] = (m < p.M && ak < p.K) ? IN0(ab + m * p.K + ak) : F(0.0);
    const uint wk = k0 + ly;
    F w = F(0.0);
    if (wk < p.K && n < p.N) w = p.w_transposed != 0 ? IN1(wb + n * p.K + wk) : IN1(wb + wk * p.N + n);
    tile_w[ly][lx] = w;
    barrier();
    for (uint k = 0; k < 16; ++k) acc += A(tile_a[ly][k] * tile_w[k][lx]);
    barrier();
  }
  if (m < p.M && n < p.N) {
    if (p.has_bias != 0) acc += A(IN2(n));
    STORE(gl_WorkGroupID.z * p.out_batch_stride + m * p.N + n, min(max(F(acc), F(p.lo)), F(p.hi)));
  }
}
