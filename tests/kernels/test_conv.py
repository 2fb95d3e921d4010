"""aten::convolution.out against torch: 1-D, 2-D and 3-D, groups, depthwise (with channel
multiplier), stride, padding, dilation, 1x1 pointwise, transposed, bias or none, dtypes; int64
convolutions exactly.

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


# (input shape, weight shape, stride, padding, dilation, groups, transposed, output_padding)
VOLUMES = [
    ((1, 2, 5, 6, 7), (4, 2, 3, 3, 3), [1, 1, 1], [1, 1, 1], [1, 1, 1], 1, False, [0, 0, 0]),
    ((2, 4, 6, 5, 4), (6, 2, 2, 3, 1), [2, 1, 2], [0, 1, 0], [1, 2, 1], 2, False, [0, 0, 0]),
    ((1, 3, 4, 4, 4), (3, 2, 3, 3, 3), [2, 2, 2], [1, 0, 1], [1, 1, 1], 1, True, [1, 0, 1]),
    ((1, 4, 3, 5, 3), (4, 1, 2, 2, 2), [1, 2, 1], [0, 0, 0], [2, 1, 1], 2, True, [0, 1, 0]),
]


@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups,transposed,opad", VOLUMES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_conv3d(xs, ws, stride, pad, dil, groups, transposed, opad, dtype):
    x, w = rand(*xs, dtype=dtype), rand(*ws, dtype=dtype)
    bias = rand(ws[1] * groups if transposed else ws[0], dtype=dtype)
    check_conv(x, w, bias, stride, pad, dil, groups, transposed, opad,
               what=f"conv3d {xs} {ws} {dtype}")


def rand_int64(*shape):
    return torch.randint(-9, 10, shape, generator=GEN)


# int64 convolutions (torch computes them on CPU) of every rank: exact, and wrapping on
# overflow as torch does rather than undefined behaviour.
@pytest.mark.parametrize("xs,ws,transposed,groups", [
    ((2, 3, 11), (4, 3, 3), False, 1),
    ((1, 4, 6, 7), (6, 2, 3, 2), False, 2),
    ((1, 4, 5, 5), (4, 1, 3, 3), False, 4),  # depthwise
    ((1, 3, 5, 4), (3, 2, 3, 3), True, 1),
    ((1, 2, 3, 4, 5), (3, 2, 2, 2, 2), False, 1),
])
def test_conv_int64_exact(xs, ws, transposed, groups):
    spatial = len(xs) - 2
    x, w = rand_int64(*xs), rand_int64(*ws)
    bias = rand_int64(ws[1] * groups if transposed else ws[0])
    args = [[2] * spatial if transposed else [1] * spatial, [1] * spatial, [1] * spatial,
            transposed, [1] * spatial if transposed else [0] * spatial, groups]
    ref = torch.ops.aten.convolution(x, w, bias, *args)
    out = torch.empty_like(ref)
    run_kernel("aten::convolution.out", [x, w, bias, *args, out])
    assert torch.equal(out, ref)
    big = torch.full((1, 1, 2), 2**62, dtype=torch.int64)
    wrapped = torch.ops.aten.convolution(big, torch.ones(1, 1, 2, dtype=torch.int64), None, [1],
                                         [0], [1], False, [0], 1)
    out = torch.empty_like(wrapped)
    run_kernel("aten::convolution.out", [big, torch.ones(1, 1, 2, dtype=torch.int64), None, [1],
                                         [0], [1], False, [0], 1, out])
    assert torch.equal(out, wrapped)


def test_conv_rejects_integer_dtypes_torch_does_not_convolve():
    x = torch.ones(1, 1, 3, 3, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="aten::convolution.out: dtype int32 not supported .floating point or int64"):
        run_conv(x, torch.ones(1, 1, 1, 1, dtype=torch.int32), None,
                 torch.empty(1, 1, 3, 3, dtype=torch.int32))
