"""aten::convolution.out against torch: 1-D and 2-D, groups, depthwise (with channel
multiplier), stride, padding, dilation, 1x1 pointwise, transposed, bias or none, dtypes.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) with K = in_channels / groups * kH * kW (sums
in another order); float64 1e-10; float16/bfloat16 accumulate in float and round once, compared
with the float64 result rounded (rtol 1e-2, atol 1e-2 * sqrt(K)).
"""

import math

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def tol(dtype, k):
    if dtype == torch.float64:
        return dict(atol=1e-10, rtol=1e-10)
    if dtype in (torch.float16, torch.bfloat16):
        return dict(atol=1e-2 * math.sqrt(k), rtol=1e-2)
    return dict(atol=1e-4 * math.sqrt(k), rtol=1e-4)


def check_conv(x, w, bias, stride, padding, dilation, groups, transposed=False,
               output_padding=None, what=""):
    spatial = x.dim() - 2
    output_padding = output_padding or [0] * spatial
    ref = torch.ops.aten.convolution(x.double(), w.double(),
                                     None if bias is None else bias.double(), stride, padding,
                                     dilation, transposed, output_padding, groups).to(x.dtype)
    out = torch.empty_like(ref)
    run_kernel("aten::convolution.out",
               [x, w, bias, stride, padding, dilation, transposed, output_padding, groups, out])
    k = (w.shape[0] if transposed else w.shape[1]) * math.prod(w.shape[2:])
    assert_close(out, ref, what=what, **tol(x.dtype, k))


# (N, C, H, W, Cout, kH, kW, stride, padding, dilation, groups)
CONV2D = [
    (1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1),
    (1, 3, 9, 9, 8, 3, 3, 1, 1, 1, 1),
    (2, 3, 10, 7, 5, 3, 2, 2, 1, 1, 1),
    (1, 4, 11, 13, 6, 3, 3, 1, 0, 2, 2),
    (3, 6, 8, 8, 9, 1, 1, 1, 0, 1, 3),  # grouped pointwise
    (1, 16, 7, 7, 24, 1, 1, 1, 0, 1, 1),  # pointwise straight to GEMM
    (1, 8, 9, 9, 4, 1, 1, 2, 0, 1, 1),  # strided 1x1 goes through im2col
    (1, 5, 6, 17, 7, 5, 5, (2, 3), (2, 1), (1, 2), 1),
    (1, 2, 5, 5, 3, 5, 5, 1, 2, 1, 1),  # kernel as large as the padded input
    (1, 3, 224, 224, 32, 3, 3, 2, 1, 1, 1),  # mobilenet stem
    (1, 64, 14, 14, 130, 3, 3, 1, 1, 1, 1),  # K = 576 spans K blocks; M past a register tile
]


def pair(v):
    return list(v) if isinstance(v, tuple) else [v, v]


@pytest.mark.parametrize("n,c,h,w,co,kh,kw,stride,pad,dil,groups", CONV2D)
@pytest.mark.parametrize("with_bias", [True, False])
def test_conv2d(n, c, h, w, co, kh, kw, stride, pad, dil, groups, with_bias):
    x, wt = rand(n, c, h, w), rand(co, c // groups, kh, kw)
    bias = rand(co) if with_bias else None
    check_conv(x, wt, bias, pair(stride), pair(pad), pair(dil), groups,
               what=f"conv2d {x.shape} {wt.shape} s{stride} p{pad} d{dil} g{groups}")


# (N, C, H, W, multiplier, k, stride, padding, dilation)
DEPTHWISE = [
    (1, 1, 1, 1, 1, 1, 1, 0, 1),
    (1, 32, 112, 112, 1, 3, 1, 1, 1),  # mobilenet-v2 block
    (2, 8, 15, 15, 1, 3, 2, 1, 1),
    (1, 6, 10, 9, 2, 3, 1, 0, 1),  # channel multiplier 2
    (1, 4, 12, 12, 1, 5, 2, 2, 1),
    (1, 3, 13, 11, 1, 3, 1, 2, 2),
    (1, 4, 9, 300, 1, 3, 1, 1, 1),  # wider than one accumulator chunk
    (1, 2, 6, 20, 1, 9, 1, 4, 1),  # more taps than the padded path takes: direct loop
    (1, 2, 5, 5, 3, 7, 3, 3, 1),  # stride larger than the output
    (1, 2, 5, 1100, 1, 3, 1, 1, 1),  # rows too wide to pad on the stack: direct loop
    (1, 2, 7, 1500, 1, 3, 2, 1, 2),
]


@pytest.mark.parametrize("n,c,h,w,mult,k,stride,pad,dil", DEPTHWISE)
def test_depthwise(n, c, h, w, mult, k, stride, pad, dil):
    x, wt, bias = rand(n, c, h, w), rand(c * mult, 1, k, k), rand(c * mult)
    check_conv(x, wt, bias, [stride, stride], [pad, pad], [dil, dil], c,
               what=f"depthwise {x.shape} k{k} s{stride} p{pad} d{dil} x{mult}")


def test_depthwise_rectangular_kernel_no_bias():
    x, wt = rand(1, 3, 8, 70), rand(3, 1, 2, 67)
    check_conv(x, wt, None, [1, 2], [1, 3], [1, 1], 3, what="depthwise 2x67 kernel")


@pytest.mark.parametrize("n,c,length,co,k,stride,pad,dil,groups", [
    (1, 1, 1, 1, 1, 1, 0, 1, 1),
    (2, 4, 20, 6, 3, 1, 1, 1, 1),
    (1, 6, 33, 6, 5, 2, 2, 2, 6),  # depthwise 1-D
    (1, 8, 16, 4, 1, 1, 0, 1, 2),
    (1, 3, 50, 5, 7, 3, 0, 1, 1),
])
def test_conv1d(n, c, length, co, k, stride, pad, dil, groups):
    x, wt, bias = rand(n, c, length), rand(co, c // groups, k), rand(co)
    check_conv(x, wt, bias, [stride], [pad], [dil], groups, what=f"conv1d {x.shape} {wt.shape}")


def test_conv_single_value_params_expand():
    x, wt = rand(1, 2, 7, 7), rand(3, 2, 3, 3)
    check_conv(x, wt, None, [2], [1], [1], 1, what="conv2d with 1-element lists")


# (N, Cin, H, W, Cout, k, stride, padding, dilation, groups, output_padding)
TRANSPOSED = [
    (1, 2, 3, 3, 3, 3, 1, 0, 1, 1, 0),
    (2, 4, 5, 4, 6, 3, 2, 1, 1, 2, 1),
    (1, 3, 4, 6, 2, 4, 2, 1, 1, 1, 0),
    (1, 2, 5, 5, 2, 3, 3, 2, 2, 1, 1),
]


@pytest.mark.parametrize("n,ci,h,w,co,k,stride,pad,dil,groups,opad", TRANSPOSED)
def test_conv_transpose2d(n, ci, h, w, co, k, stride, pad, dil, groups, opad):
    x, wt, bias = rand(n, ci, h, w), rand(ci, co // groups, k, k), rand(co)
    check_conv(x, wt, bias, [stride, stride], [pad, pad], [dil, dil], groups, transposed=True,
               output_padding=[opad, opad], what=f"conv_transpose2d {x.shape} {wt.shape}")


def test_conv_transpose1d_no_bias():
    x, wt = rand(2, 3, 9), rand(3, 4, 3)
    check_conv(x, wt, None, [2], [1], [1], 1, transposed=True, output_padding=[1],
               what="conv_transpose1d")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_conv_dtypes(dtype):
    x, wt, bias = rand(1, 4, 9, 9, dtype=dtype), rand(6, 4, 3, 3, dtype=dtype), rand(6, dtype=dtype)
    check_conv(x, wt, bias, [1, 1], [1, 1], [1, 1], 1, what=f"conv2d {dtype}")
    xd, wd = rand(1, 4, 9, 9, dtype=dtype), rand(4, 1, 3, 3, dtype=dtype)
    check_conv(xd, wd, None, [2, 2], [1, 1], [1, 1], 4, what=f"depthwise {dtype}")


def run_conv(x, w, bias, out, groups=1, stride=(1, 1)):
    run_kernel("aten::convolution.out",
               [x, w, bias, list(stride), [0, 0], [1, 1], False, [0, 0], groups, out])


def test_conv_rejects_channel_mismatch():
    with pytest.raises(RuntimeError, match="aten::convolution.out: weight expects 4 input"):
        run_conv(rand(1, 3, 5, 5), rand(2, 4, 3, 3), None, torch.empty(1, 2, 3, 3))


def test_conv_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match="aten::convolution.out"):
        run_conv(rand(1, 3, 5, 5), rand(2, 3, 3, 3), None, torch.empty(1, 2, 4, 4))


def test_conv_rejects_bad_bias():
    with pytest.raises(RuntimeError, match="aten::convolution.out: bias must have 2"):
        run_conv(rand(1, 3, 5, 5), rand(2, 3, 3, 3), rand(3), torch.empty(1, 2, 3, 3))


def test_conv_rejects_kernel_larger_than_input():
    with pytest.raises(RuntimeError, match="aten::convolution.out: padded input"):
        run_conv(rand(1, 1, 2, 2), rand(1, 1, 3, 3), None, torch.empty(1, 1, 1, 1))


def test_conv_rejects_channels_last():
    x = rand(1, 3, 5, 5).to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="aten::convolution.out: only the default"):
        run_conv(x, rand(2, 3, 3, 3), None, torch.empty(1, 2, 3, 3))


def test_conv_rejects_3d_convolution():
    with pytest.raises(RuntimeError, match="aten::convolution.out: only 1-D and 2-D"):
        run_kernel("aten::convolution.out", [rand(1, 1, 3, 3, 3), rand(1, 1, 1, 1, 1), None,
                                             [1, 1, 1], [0, 0, 0], [1, 1, 1], False, [0, 0, 0],
                                             1, torch.empty(1, 1, 3, 3, 3)])
