#version 450
// 2-D pooling over NCHW planes, one invocation per output element (grid-stride). mode 0: max
// (padding never wins, NaN propagates as in torch), 1: average with torch's divisor rules
// (count_include_pad, divisor_override, windows clipped at the padded edge for ceil_mode), 2:
// adaptive average (window [floor(o * H / OH), ceil((o + 1) * H / OH))). Max in F (exact),
// window sums in A = fp32.
layout(local_size_x = 64) in;
#include "common.glsl"
#define PTERON_POOL2D_PARAMS
#include "push_constants.h"

void main() {
  const uint step = gl_NumWorkGroups.x * 64;
  for (uint i = gl_GlobalInvocationID.x; i < p.numel; i += step) {
    const uint ow = i % p.OW;
    const uint oh = (i / p.OW) % p.OH;
    const uint base = (i / (p.OW * p.OH)) * p.H * p.W;
    if (p.mode == 0) {
      F m = F(-1.0 / 0.0);
      for (uint kh = 0; kh < p.KH; ++kh) {
        const int ih = int(oh * p.stride_h + kh * p.dil_h) - int(p.pad_h);
        if (ih < 0 || ih >= int(p.H)) continue;
        for (uint kw = 0; kw < p.KW; ++kw) {
          const int iw = int(ow * p.stride_w + kw * p.dil_w) - int(p.pad_w);
          if (iw < 0 || iw >= int(p.W)) continue;
          const F v = IN0(base + uint(ih) * p.W + uint(iw));
          m = (v > m || isnan(v)) ? v : m;
        }
      }
      STORE(i, m);
      continue;
    }
    int h0, h1, w0, w1;
    float count;
    if (p.mode == 2) {
      h0 = int((oh * p.H) / p.OH);
      h1 = int(((oh + 1) * p.H + p.OH - 1) / p.OH);
      w0 = int((ow * p.W) / p.OW);
      w1 = int(((ow + 1) * p.W + p.OW - 1) / p.OW);
      count = float((h1 - h0) * (w1 - w0));
    } else {
      h0 = int(oh * p.stride_h) - int(p.pad_h);
      w0 = int(ow * p.stride_w) - int(p.pad_w);
      h1 = min(h0 + int(p.KH), int(p.H + p.pad_h));
      w1 = min(w0 + int(p.KW), int(p.W + p.pad_w));
      const int padded = (h1 - h0) * (w1 - w0);
      h0 = max(h0, 0);
      w0 = max(w0, 0);
      h1 = min(h1, int(p.H));
      w1 = min(w1, int(p.W));
      count = p.divisor != 0 ? float(p.divisor)
              : p.count_include_pad != 0 ? float(padded) : float((h1 - h0) * (w1 - w0));
    }
    A sum = 0.0;
    for (int ih = h0; ih < h1; ++ih) {
      for (int iw = w0; iw < w1; ++iw) sum += A(IN0(base + uint(ih) * p.W + uint(iw)));
    }
    STORE(i, sum / count);
  }
}
