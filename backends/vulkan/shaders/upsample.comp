#version 450
// Nearest and bilinear upsampling over NCHW planes, one invocation per output element
// (grid-stride), with the index arithmetic of ATen's CPU kernels (UpSample.h) in fp32, so the
// same source pixels and weights come out:
//   nearest:  src = min(floor(dst * scale), in - 1)
//   bilinear: real = align_corners ? scale * dst : max(scale * (dst + 0.5) - 0.5, 0);
//             i0 = min(floor(real), in - 1), i1 = i0 + (i0 < in - 1), l = clamp(real - i0, 0, 1);
//             an axis whose size does not change copies (i0 = i1 = dst, l = 0).
// `scale` per axis is ATen's area_pixel_compute_scale, computed by the runtime. torch's CPU
// builds compute `scale * (dst + 0.5) - 0.5` as ONE fused multiply-add (GCC contracts it in
// the AVX2/AVX512 kernels; a separately rounded product moves the source coordinate by an ulp,
// which at coordinate 30 is 2e-6 of lambda and up to 8e-6 of an N(0, 1) output). GLSL's fma()
// may run unfused (Vulkan lets it), so fused() computes the fused result exactly from an
// error-free product. Coordinates are `precise` (no contraction or reassociation) and always
// fp32; the interpolation accumulates in A = fp32 (the `_f16a` rule for weighted sums).
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_UPSAMPLE_PARAMS
#include "push_constants.h"

// The source index of `real` (>= 0), clamped to the last one before the conversion (a ratio
// from the program may put it far outside the input).
uint source_index(float real, uint size) {
  const float f = floor(real);
  return f < float(size - 1) ? uint(f) : size - 1;
}

// round(a * k - 1) / 2 with one rounding, i.e. fma(a, k / 2, -0.5), for k = 2 dst + 1 < 2^24
// (Dekker's exact product p + e = a * k from 12-bit halves; p - 1 is exact for p in
// [0.5, 2^24], and a smaller p gives a negative coordinate either way, clamped to 0 below).
float fused(float a, uint k) {
  const float a_hi = uintBitsToFloat(floatBitsToUint(a) & 0xfffff000u);
  precise float a_lo = a - a_hi;
  const float k_hi = float(k & 0xfffff000u), k_lo = float(k & 0xfffu);
  precise float prod = a * float(k);
  precise float e = (((a_hi * k_hi - prod) + a_hi * k_lo) + a_lo * k_hi) + a_lo * k_lo;
  precise float r = ((prod - 1.0) + e) * 0.5;
  return r;
}

// Bilinear taps of output index `o` along one axis: i0, i1 and the weight of i1.
void taps(uint o, uint size, uint out_size, float scale, out uint i0, out uint i1, out float l) {
  if (size == out_size) {
    i0 = o;
    i1 = o;
    l = 0.0;
    return;
  }
  precise float real = p.align_corners != 0 ? scale * float(o) : fused(scale, 2 * o + 1);
  real = max(real, 0.0);
  i0 = source_index(real, size);
  i1 = i0 + (i0 < size - 1 ? 1 : 0);
  precise float frac = real - float(i0);
  l = clamp(frac, 0.0, 1.0);
}

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint ow = i % p.OW;
    const uint oh = (i / p.OW) % p.OH;
    const uint base = (i / (p.OW * p.OH)) * p.H * p.W;
    if (p.mode == 0) {
      precise float rh = float(oh) * p.scale_h;
      precise float rw = float(ow) * p.scale_w;
      STORE(i, IN0(base + source_index(rh, p.H) * p.W + source_index(rw, p.W)));
      continue;
    }
    uint h0, h1, w0, w1;
    float lh, lw;
    taps(oh, p.H, p.OH, p.scale_h, h0, h1, lh);
    taps(ow, p.W, p.OW, p.scale_w, w0, w1, lw);
    const uint r0 = base + h0 * p.W, r1 = base + h1 * p.W;
    const A top = A(IN0(r0 + w0)) * (1.0 - lw) + A(IN0(r0 + w1)) * lw;
    const A bottom = A(IN0(r1 + w0)) * (1.0 - lw) + A(IN0(r1 + w1)) * lw;
    STORE(i, top * (1.0 - lh) + bottom * lh);
  }
}
