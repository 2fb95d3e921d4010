"""The Winograd F(4x4, 3x3) path of the optimized convolution (kernels/optimized/util/winograd.*)
against torch.nn.functional.conv2d: aten::convolution.out, pteron::convolution_relu.out and
pteron::convolution_add_relu.out (+ residual, then ReLU) on
3x3 stride-1 float32 shapes its rule takes (outputs >= 8x8, batch x 4x4 tiles >= 32): odd
H/W, H/W not multiples of 4 (clipped edge tiles), padding 0/1/2, Cin/Cout 1..67 (channel
counts off the vector width), batch 2, with and without bias, at 1 and 2 threads (resnet-18's
layer1 shape is large enough to split over threads; each worker runs chunks of tiles end to end,
and a chunk may start and end inside a tile row, so shapes with several chunks per thread and
with chunk ends mid row are included; with few tiles per thread the phased path runs: blocks of
tile rows, each phase over the pool).

Tolerance: max|out - ref| <= 2e-5 * max|ref| (F(4,3)'s transform constants, up to 8 and 1/24,
scale float32 rounding; measured up to 1e-5 relative at 256 input channels, below the 1e-4 the
whole-model comparison allows).
"""

import pytest
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

CASES = [  # n, cin, h, w, cout, pad
    (2, 3, 17, 19, 5, 1),
    (2, 1, 19, 17, 1, 0),
    (1, 67, 23, 21, 33, 2),
    (1, 16, 30, 26, 67, 1),
    (2, 64, 14, 14, 64, 1),
    (1, 64, 56, 56, 64, 1),
    # More chunks than threads (V and M capped per chunk), chunk ends mid tile row.
    (1, 160, 28, 32, 300, 0),
    # 110 tiles: at 2 threads two chunks of 55, each ending mid tile row.
    (1, 8, 44, 40, 12, 0),
    # Few tiles per thread: the phased path at 2 threads.
    (1, 40, 18, 18, 100, 1),
]


@pytest.mark.parametrize("relu", [False, True, "add"], ids=["conv", "conv_relu", "conv_add_relu"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("n,cin,h,w,cout,pad", CASES)
def test_winograd_matches_torch(threads, n, cin, h, w, cout, pad, bias, relu):
    g = torch.Generator().manual_seed(cin * 1000 + cout)
    x = torch.randn(n, cin, h, w, generator=g)
    wt = torch.randn(cout, cin, 3, 3, generator=g)
    b = torch.randn(cout, generator=g) if bias else None
    ref = F.conv2d(x, wt, b, 1, pad)
    extra, op = [], "aten::convolution.out"
    if relu == "add":
        other = torch.randn(ref.shape, generator=g)
        ref, extra, op = torch.relu(ref + other), [other], "pteron::convolution_add_relu.out"
    elif relu:
        ref, op = torch.relu(ref), "pteron::convolution_relu.out"
    out = torch.full(ref.shape, float("nan"))
    run_kernel(op, [x, wt, b, [1, 1], [pad, pad], [1, 1], False, [0, 0], 1] + extra + [out],
               library="optimized")
    err = (out - ref).abs().max().item()
    assert err <= 2e-5 * ref.abs().max().item(), f"{op} {tuple(x.shape)} pad {pad}: {err}"


def test_winograd_nan_reaches_every_output_it_touches():
    """A NaN input gives NaN wherever torch gives NaN, after the ReLU too. It also spreads to
    the rest of each 4x4 output tile whose 6x6 patch holds it (the transforms mix the whole
    patch): outputs torch computes finite may be NaN there, as in other Winograd libraries."""
    x = torch.randn(1, 4, 18, 18)
    x[0, 0, 5, 5] = float("nan")
    wt = torch.randn(8, 4, 3, 3)
    out = torch.zeros(1, 8, 16, 16)
    run_kernel("pteron::convolution_relu.out",
               [x, wt, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, out], library="optimized")
    ref = torch.relu(F.conv2d(x, wt))
    assert ref.isnan().any() and out.isnan()[ref.isnan()].all()
    assert not out[:, :, 8:, :].isnan().any() and not out[:, :, :, 8:].isnan().any()


def test_pretransformed_op_rejects_bad_inputs():
    x, u = torch.randn(1, 4, 10, 10), torch.randn(36, 4, 8)
    cases = [
        ([x, torch.randn(36, 5, 8), None, None, [1, 1], False], torch.empty(1, 8, 10, 10)),  # Cin
        ([x, u, torch.randn(7), None, [1, 1], False], torch.empty(1, 8, 10, 10)),  # bias size
        ([x, u, None, None, [1, 1], False], torch.empty(1, 8, 9, 10)),  # out shape
        ([x, u, None, None, [-1, 1], True], torch.empty(1, 8, 6, 10)),  # padding
        ([x, u, None, torch.randn(1, 8, 10, 9), [1, 1], True], torch.empty(1, 8, 10, 10)),
    ]
    for args, out in cases:
        with pytest.raises(RuntimeError, match="conv2d_winograd"):
            run_kernel("pteron::conv2d_winograd.out", args + [out], library="optimized")
