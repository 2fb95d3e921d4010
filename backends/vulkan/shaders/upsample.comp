#version 450
// Nearest, bilinear and antialiased bilinear upsampling over NCHW planes, one invocation per
// output element (grid-stride), with the index arithmetic of ATen's CPU kernels (UpSample.h) in fp32, so the
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
// Antialiased bilinear (mode 2, _upsample_bilinear2d_aa) is ATen's separable triangle filter
// (_compute_indices_min_size_weights_aa, as kernels/portable/util/upsample_separable.h): per
// axis a window around center = scale * (o + 0.5), its half-width `scale` when shrinking (else
// 1), weights max(0, 1 - |(j - center + 0.5) / max(scale, 1)|) normalised to sum to 1; the
// output sums the rows' horizontal sums weighted by the vertical weights.
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

// The antialiasing window of output index `o` along an axis: input indices [lo, lo + n), the
// filter's center and 1 / stretch, and the weights' sum; an axis keeping its size copies.
struct Window {
  uint lo, n;
  float center, invscale, total;
  bool identity;
};

float aa_filter(Window w, uint j) {
  precise float x = ((float(w.lo + j) - w.center) + 0.5) * w.invscale;
  return max(1.0 - abs(x), 0.0);
}

float aa_weight(Window w, uint j) {
  if (w.identity) return 1.0;
  const float f = aa_filter(w, j);
  return w.total != 0.0 ? f / w.total : f;
}

// The window's ends, clamped before the conversion (the scale may come from the program).
uint aa_index(float f, uint size) {
  return f < float(size) ? (f > 0.0 ? uint(f) : 0u) : size;
}

Window aa_window(uint o, uint size, uint out_size, float scale) {
  Window w;
  w.identity = size == out_size;
  w.lo = o;
  w.n = 1;
  w.center = 0.0;
  w.invscale = 1.0;
  w.total = 0.0;
  if (w.identity) return w;
  const float support = scale >= 1.0 ? scale : 1.0;
  precise float center = scale * (float(o) + 0.5);
  w.center = center;
  w.invscale = scale >= 1.0 ? 1.0 / scale : 1.0;
  precise float first = (center - support) + 0.5;
  precise float last = (center + support) + 0.5;
  w.lo = aa_index(first, size);
  const uint hi = min(aa_index(last, size), size);
  w.n = hi > w.lo ? hi - w.lo : 0u;
  for (uint j = 0; j < w.n; ++j) w.total += aa_filter(w, j);
  return w;
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
    if (p.mode == 2) {
      const Window wh = aa_window(oh, p.H, p.OH, p.scale_h);
      const Window ww = aa_window(ow, p.W, p.OW, p.scale_w);
      A v = A(0.0);
      for (uint a = 0; a < wh.n; ++a) {
        const uint row = base + (wh.lo + a) * p.W + ww.lo;
        A acc = A(0.0);
        for (uint b = 0; b < ww.n; ++b) acc += A(IN0(row + b)) * aa_weight(ww, b);
        v += acc * aa_weight(wh, a);
      }
      STORE(i, v);
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
