"""Straightforward int8 references for the cortex_m kernels (TFLite/CMSIS-NN numerics).

Everything is computed in int64 (or float64 where every value is an exact integer), one
formula per op, so a kernel that disagrees by one bit fails.
"""

import math

import torch
import torch.nn.functional as F


def quantize_multiplier(real):
    """A positive real factor as (Q31 multiplier, shift): real = mult * 2^(shift - 31)."""
    if real == 0.0:
        return 0, 0
    mantissa, shift = math.frexp(real)
    q = round(mantissa * (1 << 31))
    if q == (1 << 31):
        q //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return q, shift


def rounding_divide_by_pot(x, exponent):
    """x / 2^exponent, midpoint away from zero (int64 tensor, exponent int or tensor)."""
    exponent = torch.as_tensor(exponent, dtype=torch.int64)
    mask = (torch.ones_like(exponent) << exponent) - 1
    remainder = x & mask
    result = x >> exponent
    threshold = (mask >> 1) + (result < 0).to(torch.int64)
    return result + (remainder > threshold).to(torch.int64)


def requantize(acc, mult, shift):
    """CMSIS-NN arm_nn_requantize on an int64 tensor holding int32 values."""
    mult = torch.as_tensor(mult, dtype=torch.int64)
    shift = torch.as_tensor(shift, dtype=torch.int64)
    left = shift.clamp(min=0)
    right = (-shift).clamp(min=0)
    v = acc << left
    v = (v + (1 << 31)) % (1 << 32) - (1 << 31)  # wrap to int32 as the C left shift does
    high = (v * mult + (1 << 30)) >> 31
    return rounding_divide_by_pot(high, right)


def quantize(x, scale, zp, qmin=-128, qmax=127):
    inv = torch.tensor(1.0 / scale, dtype=torch.float32)
    return torch.clamp(torch.round(x * inv) + zp, qmin, qmax).to(torch.int8)


def dequantize(q, scale, zp):
    return (q.to(torch.float32) - zp) * torch.tensor(scale, dtype=torch.float32)


def finish(acc, mult, shift, out_zp, lo=-128, hi=127):
    return torch.clamp(requantize(acc, mult, shift) + out_zp, lo, hi).to(torch.int8)


def add(a, zp1, m1, s1, b, zp2, m2, s2, out_zp, out_m, out_s, lo, hi):
    x = requantize((a.to(torch.int64) - zp1) << 20, m1, s1)
    y = requantize((b.to(torch.int64) - zp2) << 20, m2, s2)
    return finish(x + y, out_m, out_s, out_zp, lo, hi)


def mul(a, zp1, b, zp2, out_zp, out_m, out_s):
    return finish((a.to(torch.int64) - zp1) * (b.to(torch.int64) - zp2), out_m, out_s, out_zp)


def linear(x, w, bias, in_off, w_off, out_off, mults, shifts, lo, hi):
    acc = (x.to(torch.float64) + in_off) @ (w.to(torch.float64) + w_off).T
    acc = acc.round().to(torch.int64)
    if bias is not None:
        acc = acc + bias.to(torch.int64)
    m = torch.tensor(mults, dtype=torch.int64)
    s = torch.tensor(shifts, dtype=torch.int64)
    return finish(acc, m, s, out_off, lo, hi)


def pack_linear(w, kernel_sum, mults, shifts):
    """quantized_linear_packed's constants (kernels/cortex_m/util/linear_packed.h) from int8
    weights [N, K] and per-channel int32 kernel sums, multipliers and shifts: weights
    [N/4, K/16, 4, 16] (zero-padded), channel_quant [N/4, 4, 4] (sums, multipliers, left shifts,
    right shifts <= 0)."""
    n, k = w.shape
    groups, chunks = (n + 3) // 4, (k + 15) // 16
    padded = torch.zeros(groups * 4, chunks * 16, dtype=torch.int8)
    padded[:n, :k] = w
    packed = padded.view(groups, 4, chunks, 16).permute(0, 2, 1, 3).contiguous()
    shifts = torch.as_tensor(shifts, dtype=torch.int64)
    fields = torch.zeros(4, groups * 4, dtype=torch.int64)
    fields[0, :n] = torch.as_tensor(kernel_sum, dtype=torch.int64)
    fields[1, :n] = torch.as_tensor(mults, dtype=torch.int64)
    fields[2, :n] = shifts.clamp(min=0)
    fields[3, :n] = shifts.clamp(max=0)
    quant = fields.view(4, groups, 4).permute(1, 0, 2).contiguous().to(torch.int32)
    return packed, quant


def conv_nhwc(x, w_ohwi, bias, stride, padding, dilation, in_off, out_off, mults, shifts, lo,
              hi, groups=1):
    """x [N,H,W,C] int8, w [O,kH,kW,I] int8 -> [N,OH,OW,O] int8 (exact in float64)."""
    xf = x.permute(0, 3, 1, 2).to(torch.float64) + in_off
    wf = w_ohwi.permute(0, 3, 1, 2).to(torch.float64)
    # Padding holds -in_off, i.e. contributes zero after the offset: pad the offset input with 0.
    acc = F.conv2d(xf, wf, None, stride, padding, dilation, groups).round().to(torch.int64)
    if bias is not None:
        acc = acc + bias.to(torch.int64).view(1, -1, 1, 1)
    m = mults.to(torch.int64).view(1, -1, 1, 1)
    s = shifts.to(torch.int64).view(1, -1, 1, 1)
    return finish(acc, m, s, out_off, lo, hi).permute(0, 2, 3, 1).contiguous()


def avg_pool_nhwc(x, kernel, stride, padding):
    xf = x.permute(0, 3, 1, 2).to(torch.float64)
    sums = F.avg_pool2d(xf, kernel, stride, padding, count_include_pad=False, divisor_override=1)
    ones = torch.ones_like(xf[:, :1])
    counts = F.avg_pool2d(ones, kernel, stride, padding, count_include_pad=False,
                          divisor_override=1)
    s = sums.round().to(torch.int64)
    c = counts.round().to(torch.int64).expand_as(s)
    q = torch.where(s > 0, (s + c // 2) // c, -((-s + c // 2) // c))
    return q.clamp(-128, 127).to(torch.int8).permute(0, 2, 3, 1).contiguous()


def max_pool_nhwc(x, kernel, stride, padding, dilation, lo, hi):
    xf = x.permute(0, 3, 1, 2).to(torch.float32)
    m = F.max_pool2d(xf, kernel, stride, padding, dilation)
    return m.clamp(lo, hi).to(torch.int8).permute(0, 2, 3, 1).contiguous()


def softmax_params(input_scale, input_integer_bits=5):
    """(input_multiplier, input_shift, diff_min) as TFLite prepares int8 softmax."""
    real = min(input_scale * (1 << (31 - input_integer_bits)), float((1 << 31) - 1))
    mult, shift = quantize_multiplier(real)
    max_input_rescaled = (((1 << input_integer_bits) - 1) * 2.0 ** (31 - input_integer_bits)
                          / 2.0 ** shift)
    return mult, shift, -int(math.floor(max_input_rescaled))


def upsample_index_table(in_size, out_size, scale=None, exact=False):
    """Nearest (or nearest-exact) source index of each output index, torch's float32 formula
    (the cortex_m lowering's table). `scale` is torch's scale factor (output / input), if given."""
    if not exact and out_size == in_size:
        return torch.arange(out_size, dtype=torch.int32)
    if not exact and out_size == 2 * in_size:
        return torch.arange(out_size, dtype=torch.int32) // 2
    s = torch.tensor(1.0 / scale if scale else in_size / out_size, dtype=torch.float32)
    dst = torch.arange(out_size, dtype=torch.float32)
    src = torch.floor((dst + 0.5) * s) if exact else torch.floor(dst * s)
    return src.clamp(0, in_size - 1).to(torch.int32)


def upsample_linear_table(in_size, out_size, align_corners, scale=None, bits=11):
    """[out_size, 3] int32 rows (i0, i1, weight of i1 in Q`bits`): torch's float32
    area_pixel_compute_source_index and lambda, the weight rounded half up (the lowering's)."""
    dst = torch.arange(out_size, dtype=torch.float32)
    if in_size == out_size:
        i0 = dst.to(torch.int64)
        return torch.stack([i0, i0, torch.zeros_like(i0)], 1).to(torch.int32)
    if align_corners:
        s = torch.tensor((in_size - 1) / (out_size - 1) if out_size > 1 else 0.0, dtype=torch.float32)
        real = s * dst
    else:
        s = torch.tensor(1.0 / scale if scale else in_size / out_size, dtype=torch.float32)
        real = (s * (dst + 0.5) - 0.5).clamp(min=0)
    i0 = torch.floor(real).clamp(0, in_size - 1)
    lam = (real - i0).clamp(0, 1)
    i0 = i0.to(torch.int64)
    i1 = i0 + (i0 < in_size - 1).to(torch.int64)
    w1 = torch.floor(lam * (1 << bits) + 0.5).to(torch.int64)
    return torch.stack([i0, i1, w1], 1).to(torch.int32)


def upsample_nearest_nhwc(x, rows, cols):
    """x [N,H,W,C] int8; rows [OH], cols [OW] source indices."""
    return x[:, rows.long()][:, :, cols.long()].contiguous()


def upsample_bilinear_nhwc(x, row_taps, col_taps, zp_in, zp_out, mult, shift, bits=11):
    """The cortex_m bilinear kernel's integer arithmetic: sum of wy * wx * (q - zp_in) in
    Q(2 bits), requantized."""
    xi = x.to(torch.int64) - zp_in
    y0, y1, wy1 = (row_taps[:, k].long() for k in range(3))
    x0, x1, wx1 = (col_taps[:, k].long() for k in range(3))
    one = 1 << bits
    top, bottom = xi[:, y0], xi[:, y1]

    def w(wy, wx):
        return wy.view(1, -1, 1, 1) * wx.view(1, 1, -1, 1)

    acc = (w(one - wy1, one - wx1) * top[:, :, x0] + w(one - wy1, wx1) * top[:, :, x1]
           + w(wy1, one - wx1) * bottom[:, :, x0] + w(wy1, wx1) * bottom[:, :, x1])
    return finish(acc, mult, shift, zp_out)
