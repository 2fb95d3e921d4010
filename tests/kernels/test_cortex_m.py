"""cortex_m:: int8 kernels on the host (their host paths where this CPU has AVX-512, the scalar
reference elsewhere or under PTERON_ISA=avx2) against cortex_m_ref.py's int8 references, bit
exact, and against torch float math within quantisation error.

Float tolerances, in output quantisation steps (LSB): requantize 1 LSB; add, mul, linear,
conv, depthwise 2 LSB (one for the output rounding, one for the requantisation's Q31 rounding
and the int32 bias rounding); avg pool 1 LSB; max pool, clamp, transpose, pad, nearest upsample exact; bilinear upsample 1 LSB
(Q11 weights, one output rounding); softmax
2/256 (TFLite's fixed-point exp). quantize/dequantize are exact against quantized_decomposed's
formulas.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from cortex_m_ref import (
    add,
    avg_pool_nhwc,
    conv_nhwc,
    dequantize,
    finish,
    linear,
    max_pool_nhwc,
    mul,
    pack_linear,
    quantize,
    quantize_multiplier,
    softmax_params,
    upsample_bilinear_nhwc,
    upsample_index_table,
    upsample_linear_table,
    upsample_nearest_nhwc,
)
from kernel_harness import run_kernel as run_library_kernel

GEN = torch.Generator().manual_seed(7)


def run_kernel(name, args):
    run_library_kernel(name, args, library="cortex_m")

INT8 = 1  # c10 ScalarType::Char


def rand_i8(*shape):
    return torch.randint(-128, 128, shape, generator=GEN, dtype=torch.int8)


def randn(*shape):
    return torch.randn(shape, generator=GEN)


def channel_requant(scales):
    pairs = [quantize_multiplier(s) for s in scales]
    return (torch.tensor([m for m, _ in pairs], dtype=torch.int32),
            torch.tensor([s for _, s in pairs], dtype=torch.int32))


# ---- quantize / dequantize ---------------------------------------------------------------

@pytest.mark.parametrize("n", [0, 1, 7, 100, 1003])
def test_quantize_dequantize_exact(n):
    x = randn(n) * 3
    x[: n // 3] *= 100  # saturates
    q = torch.empty(n, dtype=torch.int8)
    run_kernel("cortex_m::quantize_per_tensor.out", [x, 0.037, -5, -128, 127, INT8, q])
    assert torch.equal(q, quantize(x, 0.037, -5))
    d = torch.empty(n)
    run_kernel("cortex_m::dequantize_per_tensor.out", [q, 0.037, -5, -128, 127, INT8, d])
    assert torch.equal(d, dequantize(q, 0.037, -5))


def test_quantize_nan_infinities_and_a_narrow_range():
    """NaN quantises to the zero point even when a narrow range (a fused relu: qmin above the zero
    point) excludes it, infinities saturate, the rest clamps to [qmin, qmax]: the scalar's order
    of operations, which the host path's float lanes must keep."""
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), 1e30, -1e30, 0.0, 0.2, -0.2] * 5)
    q = torch.empty(x.shape, dtype=torch.int8)
    run_kernel("cortex_m::quantize_per_tensor.out", [x, 0.01, -128, -100, 127, INT8, q])
    expected = [-128, 127, -100, 127, -100, -100, -100, -100] * 5
    assert q.tolist() == expected


def test_quantize_rounds_half_to_even():
    x = torch.tensor([0.5, 1.5, 2.5, -0.5, -2.5])
    q = torch.empty(5, dtype=torch.int8)
    run_kernel("cortex_m::quantize_per_tensor.out", [x, 1.0, 0, -128, 127, INT8, q])
    assert q.tolist() == [0, 2, 2, 0, -2]


# ---- add / mul ---------------------------------------------------------------------------

@pytest.mark.parametrize("shape", [(1,), (3, 5), (2, 8, 4, 4), (17,), (3, 37, 45)])
@pytest.mark.parametrize("act", [(-128, 127), (-20, 127)])
def test_add(shape, act):
    s1, z1, s2, z2, so, zo = 0.05, 3, 0.11, -7, 0.13, -2
    a, b = rand_i8(*shape), rand_i8(*shape)
    twice_max = 2 * max(s1, s2)
    m1, sh1 = quantize_multiplier(s1 / twice_max)
    m2, sh2 = quantize_multiplier(s2 / twice_max)
    mo, sho = quantize_multiplier(twice_max / ((1 << 20) * so))
    out = torch.empty(shape, dtype=torch.int8)
    args = [a, z1, m1, sh1, b, z2, m2, sh2, zo, mo, sho, act[0], act[1]]
    run_kernel("cortex_m::quantized_add.out", args + [out])
    assert torch.equal(out, add(*args))
    expect = dequantize(a, s1, z1) + dequantize(b, s2, z2)
    expect = quantize(expect, so, zo).clamp(*act)
    assert (out.int() - expect.int()).abs().max() <= 2


@pytest.mark.parametrize("shape", [(1,), (4, 9), (2, 3, 5, 5)])
def test_mul(shape):
    s1, z1, s2, z2, so, zo = 0.05, 3, 0.11, -7, 0.2, 1
    a, b = rand_i8(*shape), rand_i8(*shape)
    mo, sho = quantize_multiplier(s1 * s2 / so)
    out = torch.empty(shape, dtype=torch.int8)
    run_kernel("cortex_m::quantized_mul.out", [a, z1, b, z2, zo, mo, sho, out])
    assert torch.equal(out, mul(a, z1, b, z2, zo, mo, sho))
    expect = quantize(dequantize(a, s1, z1) * dequantize(b, s2, z2), so, zo)
    assert (out.int() - expect.int()).abs().max() <= 2


@pytest.mark.parametrize("s_in,s_out", [(0.05, 0.11), (0.11, 0.05), (0.02, 0.0201)])
def test_requantize(s_in, s_out):
    a = rand_i8(3, 50)
    m, sh = quantize_multiplier(s_in / s_out)
    out = torch.empty_like(a)
    run_kernel("cortex_m::requantize.out", [a, 4, -9, m, sh, -120, 127, out])
    assert torch.equal(out, finish(a.to(torch.int64) - 4, m, sh, -9, -120, 127))
    expect = quantize(dequantize(a, s_in, 4), s_out, -9).clamp(-120, 127)
    assert (out.int() - expect.int()).abs().max() <= 1


# ---- linear ------------------------------------------------------------------------------

@pytest.mark.parametrize("rows,k,n", [(1, 1, 1), (3, 17, 5), (2, 64, 33), (4, 100, 10)])
@pytest.mark.parametrize("per_channel", [False, True])
def test_linear(rows, k, n, per_channel):
    x_scale, x_zp, out_scale, out_zp = 0.02, -3, 0.05, 4
    xf = randn(rows, k)
    wf = randn(n, k) * 0.3
    bf = randn(n)
    w_scales = (wf.abs().amax(1) / 127).clamp(min=1e-6) if per_channel else \
        torch.full((n,), float(wf.abs().max() / 127))
    wq = torch.clamp(torch.round(wf / w_scales[:, None]), -127, 127).to(torch.int8)
    x = quantize(xf, x_scale, x_zp)
    bias = torch.round(bf / (x_scale * w_scales)).to(torch.int32)
    scales = (x_scale * w_scales / out_scale).tolist()
    if not per_channel:
        scales = scales[:1]
    pairs = [quantize_multiplier(s) for s in scales]
    mults, shifts = [m for m, _ in pairs], [s for _, s in pairs]
    out = torch.empty(rows, n, dtype=torch.int8)
    args = [x, wq, bias, None, -x_zp, 0, out_zp, mults, shifts, 127, -128]
    run_kernel("cortex_m::quantized_linear.out", args + [out])
    assert torch.equal(out, linear(x, wq, bias, -x_zp, 0, out_zp, mults, shifts, -128, 127))
    # pteron's lowering passes the multipliers and shifts as int32 tensors: the same bits.
    out_t = torch.empty_like(out)
    args_t = args[:7] + [torch.tensor(mults, dtype=torch.int32), torch.tensor(shifts, dtype=torch.int32)] + args[9:]
    run_kernel("cortex_m::quantized_linear.out", args_t + [out_t])
    assert torch.equal(out_t, out)
    ref = F.linear(dequantize(x, x_scale, x_zp), wq.float() * w_scales[:, None],
                   bias.float() * x_scale * w_scales)
    assert (out.int() - quantize(ref, out_scale, out_zp).int()).abs().max() <= 2


def test_linear_filter_offset_and_kernel_sum():
    x, w = rand_i8(3, 20), rand_i8(6, 20)
    bias = torch.randint(-1000, 1000, (6,), generator=GEN, dtype=torch.int32)
    m, s = quantize_multiplier(0.003)
    out = torch.empty(3, 6, dtype=torch.int8)
    run_kernel("cortex_m::quantized_linear.out",
               [x, w, bias, None, 5, -3, 2, [m], [s], 100, -50, out])
    assert torch.equal(out, linear(x, w, bias, 5, -3, 2, [m], [s], -50, 100))
    # kernel_sum form: bias + input_offset * sum(w + filter_offset) folded in ahead of time.
    ksum = (bias.long() + 5 * (w.long() - 3).sum(1)).to(torch.int32)
    out2 = torch.empty_like(out)
    run_kernel("cortex_m::quantized_linear.out",
               [x, w, None, ksum, 0, -3, 2, [m], [s], 100, -50, out2])
    assert torch.equal(out2, out)


@pytest.mark.parametrize("rows,k,n", [(1, 1, 1), (3, 17, 5), (2, 64, 33), (1, 640, 128), (4, 8, 7)])
def test_linear_packed_is_quantized_linear(rows, k, n):
    """quantized_linear_packed (kernel sums folded at compile time, packed weights) gives
    quantized_linear's bits: per-channel multipliers with negative, zero and positive shifts."""
    x, w = rand_i8(rows, k), torch.randint(-127, 128, (n, k), generator=GEN, dtype=torch.int8)
    bias = torch.randint(-5000, 5000, (n,), generator=GEN, dtype=torch.int32)
    pairs = [quantize_multiplier(0.0007 * (i + 1)) for i in range(n)]
    pairs[0] = (pairs[0][0], 1)  # a left shift
    mults, shifts = [m for m, _ in pairs], [s for _, s in pairs]
    in_off = 9
    ksum = bias.long() + in_off * w.long().sum(1)
    packed, quant = pack_linear(w, ksum, mults, shifts)
    out = torch.empty(rows, n, dtype=torch.int8)
    run_kernel("cortex_m::quantized_linear_packed.out", [x, packed, quant, -6, -100, 120, out])
    assert torch.equal(out, linear(x, w, bias, in_off, 0, -6, mults, shifts, -100, 120))


def test_linear_packed_refuses_bad_constants():
    x, w = rand_i8(1, 20), rand_i8(6, 20)
    packed, quant = pack_linear(w, torch.zeros(6), [1 << 30] * 6, [-3] * 6)
    out = torch.empty(1, 6, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="not the packed layout"):
        run_kernel("cortex_m::quantized_linear_packed.out", [x, packed[:, :1].contiguous(), quant, 0, -128, 127, out])
    with pytest.raises(RuntimeError, match="channel_quant must be"):
        run_kernel("cortex_m::quantized_linear_packed.out", [x, packed, quant[:1].contiguous(), 0, -128, 127, out])
    for field, value in [(1, -5), (2, 32), (3, 1), (3, -32)]:
        bad = quant.clone()
        bad[1, field, 1] = value
        with pytest.raises(RuntimeError, match="channel 5's multiplier or shifts are out of range"):
            run_kernel("cortex_m::quantized_linear_packed.out", [x, packed, bad, 0, -128, 127, out])


# ---- convolutions ------------------------------------------------------------------------

def quantized_conv_case(n, h, w, cin, cout, k, depthwise_mult=0):
    x_scale, x_zp, out_scale, out_zp = 0.03, 5, 0.04, -10
    xf = randn(n, cin, h, w)
    if depthwise_mult:
        cout = cin * depthwise_mult
        wf = randn(cout, 1, k[0], k[1]) * 0.3
    else:
        wf = randn(cout, cin, k[0], k[1]) * 0.3
    w_scales = (wf.abs().amax((1, 2, 3)) / 127).clamp(min=1e-6)
    wq = torch.clamp(torch.round(wf / w_scales.view(-1, 1, 1, 1)), -127, 127).to(torch.int8)
    bias = torch.round(randn(cout) / (x_scale * w_scales)).to(torch.int32)
    mults, shifts = channel_requant((x_scale * w_scales / out_scale).tolist())
    x = quantize(xf, x_scale, x_zp)
    return dict(x=x, wq=wq, bias=bias, mults=mults, shifts=shifts, x_scale=x_scale, x_zp=x_zp,
                out_scale=out_scale, out_zp=out_zp, w_scales=w_scales)


CONV_CASES = [  # (n, h, w, cin, cout, kernel, stride, padding, dilation)
    (1, 5, 5, 3, 4, (3, 3), (1, 1), (1, 1), (1, 1)),
    (2, 9, 7, 8, 6, (3, 3), (2, 2), (1, 1), (1, 1)),
    (1, 6, 6, 16, 20, (1, 1), (1, 1), (0, 0), (1, 1)),  # 1x1 fast path
    (1, 10, 8, 5, 3, (3, 2), (1, 2), (2, 0), (2, 1)),
    (1, 1, 1, 1, 1, (1, 1), (1, 1), (0, 0), (1, 1)),
    (1, 4, 4, 33, 7, (2, 2), (2, 2), (0, 0), (1, 1)),
    # The host path's tails (host/conv_host.cpp): K = 45 (not whole 4-byte groups), 70 channels
    # (a 32-channel block and a 6-channel one), 143 pixels (a 64-pixel task's and an 8-row
    # tile's tails), padding at every edge; 64 x 3x3 x 64 over 2 images is big enough to run on
    # the thread pool; a strided 1x1.
    (1, 11, 13, 5, 70, (3, 3), (1, 1), (1, 1), (1, 1)),
    (2, 16, 16, 64, 64, (3, 3), (1, 1), (1, 1), (1, 1)),
    (1, 9, 9, 16, 40, (1, 1), (2, 2), (0, 0), (1, 1)),
    (1, 12, 10, 3, 33, (7, 7), (2, 2), (3, 3), (1, 1)),
]


@pytest.mark.parametrize("n,h,w,cin,cout,k,stride,pad,dil", CONV_CASES)
def test_conv2d_nhwc(n, h, w, cin, cout, k, stride, pad, dil):
    c = quantized_conv_case(n, h, w, cin, cout, k)
    x_nhwc = c["x"].permute(0, 2, 3, 1).contiguous()
    w_ohwi = c["wq"].permute(0, 2, 3, 1).contiguous()
    act = (-100, 127)
    ref = conv_nhwc(x_nhwc, w_ohwi, c["bias"], stride, pad, dil, -c["x_zp"], c["out_zp"],
                    c["mults"], c["shifts"], *act)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_conv2d_nhwc.out",
               [x_nhwc, w_ohwi, c["bias"], list(stride), list(pad), list(dil), -c["x_zp"],
                c["out_zp"], c["mults"], c["shifts"], act[0], act[1], None, out])
    assert torch.equal(out, ref)
    fl = F.conv2d(dequantize(c["x"], c["x_scale"], c["x_zp"]),
                  c["wq"].float() * c["w_scales"].view(-1, 1, 1, 1),
                  c["bias"].float() * c["x_scale"] * c["w_scales"], stride, pad, dil)
    expect = quantize(fl, c["out_scale"], c["out_zp"]).clamp(*act).permute(0, 2, 3, 1)
    assert (out.int() - expect.int()).abs().max() <= 2


@pytest.mark.parametrize("in_off", [-127, 0, 128])
def test_conv2d_nhwc_every_shift_and_input_offset(in_off):
    """Requantisation with left shifts (multipliers above 1) as well as right shifts up to 31,
    the input offset's extremes (padding holds -input_offset) and a narrow activation range,
    bit exact against the int64 reference: the host path's vector requantisation and its
    unsigned-byte offset correction must agree with the scalar arithmetic everywhere."""
    n, h, w, cin, cout, k = 1, 9, 7, 12, 48, (3, 3)
    x = rand_i8(n, h, w, cin)
    wt = torch.randint(-127, 128, (cout, k[0], k[1], cin), generator=GEN, dtype=torch.int8)
    bias = torch.randint(-20000, 20000, (cout,), generator=GEN, dtype=torch.int32)
    mults = torch.randint(1 << 30, (1 << 31) - 1, (cout,), generator=GEN, dtype=torch.int32)
    shifts = torch.tensor([[3, 1, 0, -1, -5, -12, -20, -31][i % 8] for i in range(cout)],
                          dtype=torch.int32)
    act = (-90, 100)
    ref = conv_nhwc(x, wt, bias, (1, 1), (1, 1), (1, 1), in_off, 7, mults, shifts, *act)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_conv2d_nhwc.out",
               [x, wt, bias, [1, 1], [1, 1], [1, 1], in_off, 7, mults, shifts, act[0], act[1],
                None, out])
    assert torch.equal(out, ref)


@pytest.mark.parametrize("mult", [1, 2])
@pytest.mark.parametrize("n,h,w,cin,k,stride,pad,dil", [
    (1, 7, 7, 8, (3, 3), (1, 1), (1, 1), (1, 1)),
    (2, 9, 6, 5, (3, 3), (2, 2), (1, 1), (1, 1)),
    (1, 8, 8, 19, (5, 3), (1, 2), (2, 1), (1, 2)),
])
def test_depthwise_conv2d_nhwc(n, h, w, cin, k, stride, pad, dil, mult):
    c = quantized_conv_case(n, h, w, cin, 0, k, depthwise_mult=mult)
    x_nhwc = c["x"].permute(0, 2, 3, 1).contiguous()
    w_1hwc = c["wq"].permute(1, 2, 3, 0).contiguous()  # [1, kH, kW, C*m]
    ref = conv_nhwc(x_nhwc, c["wq"].permute(0, 2, 3, 1), c["bias"], stride, pad, dil, -c["x_zp"],
                    c["out_zp"], c["mults"], c["shifts"], -128, 127, groups=cin)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_depthwise_conv2d_nhwc.out",
               [x_nhwc, w_1hwc, c["bias"], list(stride), list(pad), list(dil), mult, -c["x_zp"],
                c["out_zp"], c["mults"], c["shifts"], -128, 127, None, out])
    assert torch.equal(out, ref)
    fl = F.conv2d(dequantize(c["x"], c["x_scale"], c["x_zp"]),
                  c["wq"].float() * c["w_scales"].view(-1, 1, 1, 1),
                  c["bias"].float() * c["x_scale"] * c["w_scales"], stride, pad, dil, groups=cin)
    expect = quantize(fl, c["out_scale"], c["out_zp"]).permute(0, 2, 3, 1)
    assert (out.int() - expect.int()).abs().max() <= 2


# ---- pools -------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,kernel,stride,pad", [
    ((1, 6, 6, 3), [2, 2], [2, 2], [0, 0]),
    ((2, 7, 5, 9), [3, 3], [2, 1], [1, 1]),
    ((1, 5, 5, 20), [5, 5], [], [0, 0]),  # global pool, empty stride = kernel
])
def test_avg_pool2d_nhwc(shape, kernel, stride, pad):
    x = rand_i8(*shape)
    ref = avg_pool_nhwc(x, kernel, stride or kernel, pad)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_avg_pool2d_nhwc.out",
               [x, kernel, stride, pad, False, 0, 1 << 30, 1, None, out])
    assert torch.equal(out, ref)
    fl = F.avg_pool2d(x.permute(0, 3, 1, 2).float(), kernel, stride or kernel, pad,
                      count_include_pad=False).permute(0, 2, 3, 1)
    assert (out.float() - fl).abs().max() <= 0.5 + 1e-6


@pytest.mark.parametrize("shape,kernel,stride,pad,dil", [
    ((1, 6, 6, 3), [2, 2], [2, 2], [0, 0], [1, 1]),
    ((2, 9, 7, 17), [3, 3], [2, 2], [1, 1], [1, 1]),
    ((1, 10, 10, 4), [3, 2], [1, 2], [1, 0], [2, 1]),
])
def test_max_pool2d_nhwc(shape, kernel, stride, pad, dil):
    x = rand_i8(*shape)
    ref = max_pool_nhwc(x, kernel, stride, pad, dil, -10, 127)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_max_pool2d_nhwc.out",
               [x, kernel, stride, pad, dil, False, 3, 3, -10, 127, out])
    assert torch.equal(out, ref)


def test_max_pool2d_nhwc_moves_between_zero_points():
    """Output zero point 8 below the input's, over 100 channels (a 64-channel step and a tail):
    the window's maximum moves by -8 and is clamped, as the scalar reference does."""
    x = rand_i8(2, 7, 9, 100)
    lo, hi = -120, 110
    widest = max_pool_nhwc(x, [3, 3], [2, 2], [1, 1], [1, 1], -128, 127)
    ref = (widest.int() - 8).clamp(lo, hi).to(torch.int8)
    out = torch.empty_like(ref)
    run_kernel("cortex_m::quantized_max_pool2d_nhwc.out",
               [x, [3, 3], [2, 2], [1, 1], [1, 1], False, 3, -5, lo, hi, out])
    assert torch.equal(out, ref)


# ---- softmax, clamp, transpose, pad ------------------------------------------------------

@pytest.mark.parametrize("shape", [(1, 10), (4, 37), (2, 3, 100), (5, 1)])
@pytest.mark.parametrize("scale", [0.02, 0.1, 0.5])
def test_softmax(shape, scale):
    x = rand_i8(*shape)
    mult, shift, diff_min = softmax_params(scale)
    out = torch.empty_like(x)
    run_kernel("cortex_m::softmax.out", [x, -1, 4, -128, mult, shift, diff_min, out])
    expect = torch.softmax((x.float() - 4) * scale, -1)
    got = (out.float() + 128) / 256
    assert (got - expect).abs().max() <= 2 / 256


def test_clamp_transpose_pad():
    x = rand_i8(2, 3, 4, 5)
    out = torch.empty_like(x)
    run_kernel("cortex_m::quantized_clamp.out", [x, -3, 90, out])
    assert torch.equal(out, x.clamp(-3, 90))
    for perm in ([0, 2, 3, 1], [0, 3, 1, 2], [3, 2, 1, 0], [1, 0, 2, 3]):
        ref = x.permute(perm).contiguous()
        t = torch.empty_like(ref)
        run_kernel("cortex_m::transpose.out", [x, perm, t])
        assert torch.equal(t, ref)
    y = rand_i8(3, 40)
    t = torch.empty(40, 3, dtype=torch.int8)
    run_kernel("cortex_m::transpose.out", [y, [1, 0], t])
    assert torch.equal(t, y.T.contiguous())
    p = torch.empty(2, 3, 7, 8, dtype=torch.int8)
    run_kernel("cortex_m::pad.out", [x, [0, 0, 1, 2], [0, 0, 2, 1], -9, p])
    assert torch.equal(p, F.pad(x, (2, 1, 1, 2), value=-9))


# ---- upsample ----------------------------------------------------------------------------

UPSAMPLE_SIZES = [((1, 4, 5, 3), (8, 10), None), ((2, 7, 6, 17), (21, 12), None),
                  ((1, 9, 9, 8), (4, 5), None), ((1, 5, 7, 16), (12, 13), (2.5, 1.9)),
                  ((1, 1, 1, 4), (3, 2), None), ((1, 6, 6, 1), (6, 6), None)]


@pytest.mark.parametrize("shape,size,scales", UPSAMPLE_SIZES)
@pytest.mark.parametrize("exact", [False, True])
def test_upsample_nearest_nhwc(shape, size, scales, exact):
    x = rand_i8(*shape)
    sh, sw = scales or (None, None)
    rows = upsample_index_table(shape[1], size[0], sh, exact)
    cols = upsample_index_table(shape[2], size[1], sw, exact)
    out = torch.empty(shape[0], *size, shape[3], dtype=torch.int8)
    run_kernel("cortex_m::upsample_nearest2d_nhwc.out", [x, torch.cat([rows, cols]), out])
    assert torch.equal(out, upsample_nearest_nhwc(x, rows, cols))
    mode = "nearest-exact" if exact else "nearest"
    kw = {"scale_factor": scales} if scales else {"size": size}
    ref = F.interpolate(x.permute(0, 3, 1, 2).float(), mode=mode, **kw)
    assert torch.equal(out, ref.to(torch.int8).permute(0, 2, 3, 1))


@pytest.mark.parametrize("shape,size,scales", UPSAMPLE_SIZES)
@pytest.mark.parametrize("align_corners", [False, True])
def test_upsample_bilinear_nhwc(shape, size, scales, align_corners):
    x = rand_i8(*shape)
    s_in, zp_in, s_out, zp_out = 0.05, 3, 0.04, -7
    sh, sw = (None, None) if scales is None or align_corners else scales
    rows = upsample_linear_table(shape[1], size[0], align_corners, sh)
    cols = upsample_linear_table(shape[2], size[1], align_corners, sw)
    mult, shift = quantize_multiplier(s_in / (s_out * 2.0 ** 22))
    out = torch.empty(shape[0], *size, shape[3], dtype=torch.int8)
    run_kernel("cortex_m::upsample_bilinear2d_nhwc.out",
               [x, torch.cat([rows, cols]), zp_in, zp_out, mult, shift, out])
    assert torch.equal(out, upsample_bilinear_nhwc(x, rows, cols, zp_in, zp_out, mult, shift))
    kw = {"scale_factor": scales} if sh is not None else {"size": size}
    xf = dequantize(x.permute(0, 3, 1, 2), s_in, zp_in)
    ref = quantize(F.interpolate(xf, mode="bilinear", align_corners=align_corners, **kw), s_out, zp_out)
    assert (out.permute(0, 3, 1, 2).int() - ref.int()).abs().max() <= 1


def test_upsample_bad_tables():
    x = rand_i8(1, 4, 4, 2)
    out = torch.empty(1, 8, 8, 2, dtype=torch.int8)
    bad = torch.cat([upsample_index_table(4, 8), upsample_index_table(4, 8)])
    bad[9] = 4
    with pytest.raises(RuntimeError, match="upsample_nearest2d_nhwc.out: table entry 9 .4. outside"):
        run_kernel("cortex_m::upsample_nearest2d_nhwc.out", [x, bad, out])
    with pytest.raises(RuntimeError, match="upsample_nearest2d_nhwc.out: table has 15 values"):
        run_kernel("cortex_m::upsample_nearest2d_nhwc.out", [x, bad[:15], out])
    taps = torch.cat([upsample_linear_table(4, 8, False), upsample_linear_table(4, 8, False)])
    taps[3, 2] = 2049
    with pytest.raises(RuntimeError, match="upsample_bilinear2d_nhwc.out: table entry 11"):
        run_kernel("cortex_m::upsample_bilinear2d_nhwc.out", [x, taps, 0, 0, 1 << 30, -22, out])
    with pytest.raises(RuntimeError, match="upsample_bilinear2d_nhwc.out: input .1, _, _, 2. and out"):
        run_kernel("cortex_m::upsample_bilinear2d_nhwc.out",
                   [x, taps, 0, 0, 1 << 30, -22, torch.empty(1, 8, 8, 3, dtype=torch.int8)])


# ---- bad input ---------------------------------------------------------------------------

def test_bad_inputs_raise_with_op_name():
    x = rand_i8(1, 4, 4, 3)
    w = rand_i8(2, 3, 3, 3)
    m, s = channel_requant([0.01, 0.01])
    out = torch.empty(1, 2, 2, 2, dtype=torch.int8)
    with pytest.raises(RuntimeError, match="quantized_conv2d_nhwc"):
        run_kernel("cortex_m::quantized_conv2d_nhwc.out",
                   [x.float(), w, None, [1, 1], [0, 0], [1, 1], 0, 0, m, s, -128, 127, None, out])
    with pytest.raises(RuntimeError, match="out is"):
        run_kernel("cortex_m::quantized_conv2d_nhwc.out",
                   [x, w, None, [1, 1], [1, 1], [1, 1], 0, 0, m, s, -128, 127, None, out])
    with pytest.raises(RuntimeError, match="quantized_add"):
        a = rand_i8(3)
        run_kernel("cortex_m::quantized_add.out",
                   [a, 0, 1 << 30, 0, rand_i8(4), 0, 1 << 30, 0, 0, 1 << 30, 0, -128, 127, a])
    with pytest.raises(RuntimeError, match="softmax"):
        a = rand_i8(3, 4)
        run_kernel("cortex_m::softmax.out", [a, 0, 0, -128, 1 << 30, 1, -100, torch.empty_like(a)])
    with pytest.raises(RuntimeError, match="activation range"):
        a = rand_i8(3)
        run_kernel("cortex_m::quantized_clamp.out", [a, 5, 2, torch.empty_like(a)])
    with pytest.raises(RuntimeError, match="quantized_linear.*both be int lists or both"):
        a, wl = rand_i8(1, 4), rand_i8(2, 4)
        run_kernel("cortex_m::quantized_linear.out",
                   [a, wl, None, None, 0, 0, 0, torch.tensor([1 << 30], dtype=torch.int32), [0], 127, -128,
                    torch.empty(1, 2, dtype=torch.int8)])


# ---- every instruction set the host runs -------------------------------------------------

@pytest.mark.parametrize("isa", ["avx2", "baseline"])
def test_every_host_path_under_a_capped_isa(isa):
    """The tests above again with the kernels' ISA capped (runtime/platform/cpu_isa.h): AVX2's
    host paths (kernels/cortex_m/host/*_avx2.cpp) and the scalar reference (baseline) must give
    the same bytes as this CPU's best path. Runs in a child process, since the choice is made
    once per process."""
    env = {**os.environ, "PTERON_ISA": isa}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                          "-k", "not capped_isa", str(Path(__file__))], env=env, capture_output=True,
                         text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
