"""The optimized library's grid_sampler_2d (float32, bilinear and nearest, zeros / border /
reflection padding, both align_corners) against torch and against the portable kernel, at 1 and
2 threads, on sizes that split over threads; grids reaching outside [-1, 1], with NaN and
infinite coordinates and with points on exact pixel centres and edges. Bicubic, float64 and
channels-last inputs go to the portable kernel, and malformed arguments fail with its messages.

Tolerance: none against the portable kernel (the same arithmetic, unfused: bit for bit, NaN
included); against torch float32 bilinear atol 5e-5 rtol 1e-5 (ATen's vectorised kernel fuses
multiply-adds, which moves reflected coordinates on large grids by up to ~2e-5 pixels: the
portable kernel differs from torch by as much there), nearest exact.
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

A = torch.ops.aten
GEN = torch.Generator().manual_seed(0)


def grid_for(n, oh, ow, spread, in_h, in_w):
    grid = (torch.rand(n, oh, ow, 2, generator=GEN) * 2 - 1) * spread
    flat = grid.view(-1, 2)
    # Exact pixel centres and edges for both align_corners conventions, then a few non-finite points.
    flat[::37, 0] = torch.linspace(-1, 1, in_w).repeat(flat[::37].shape[0] // in_w + 1)[: flat[::37].shape[0]]
    flat[::41, 1] = 1.0
    flat[5, 0], flat[9, 1], flat[13, 0] = float("nan"), float("inf"), -float("inf")
    return grid


def run_both(x, grid, mode, padding, align_corners):
    ref = A.grid_sampler_2d(x, grid, mode, padding, align_corners)
    outs = []
    for library in ("optimized", "portable"):
        out = torch.empty_like(ref)
        run_kernel("aten::grid_sampler_2d.out", [x, grid, mode, padding, align_corners, out],
                   library=library)
        outs.append(out)
    return ref, outs[0], outs[1]


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape,out_hw,spread", [((2, 16, 40, 50), (96, 96), 1.3),
                                                 ((1, 3, 7, 9), (5, 300), 3.5),
                                                 ((1, 2, 1, 1), (4, 4), 1.0)])
def test_matches_portable_and_torch(threads, mode, padding, align_corners, shape, out_hw, spread):
    x = torch.randn(shape, generator=GEN)
    grid = grid_for(shape[0], *out_hw, spread, shape[2], shape[3])
    ref, opt, portable = run_both(x, grid, mode, padding, align_corners)
    torch.testing.assert_close(opt, portable, atol=0, rtol=0, equal_nan=True)
    finite = grid.isfinite().all(-1).unsqueeze(1).expand_as(ref)  # torch's NaN handling differs
    assert_close(opt[finite], ref[finite], atol=5e-5 if mode == 0 else 0,
                 rtol=1e-5 if mode == 0 else 0, what="vs torch")


def test_inside_tiles_and_non_finite_input(threads):
    # A grid entirely inside the input (the loop without outside checks), and inputs holding inf
    # and NaN: zero-padded taps must read as 0, not 0 * inf.
    x = torch.randn(1, 8, 64, 64, generator=GEN)
    x[0, :, 0, 0] = float("inf")
    x[0, :, 63, 63] = float("nan")
    grid = torch.rand(1, 128, 128, 2, generator=GEN) * 1.8 - 0.9
    for mode in (0, 1):
        for padding in (0, 1, 2):
            ref, opt, portable = run_both(x, grid, mode, padding, False)
            torch.testing.assert_close(opt, portable, atol=0, rtol=0, equal_nan=True)
            torch.testing.assert_close(opt, ref, atol=1e-5, rtol=1e-5, equal_nan=True)


def test_fallbacks_and_errors():
    x = torch.randn(1, 3, 10, 12, generator=GEN)
    grid = torch.rand(1, 6, 7, 2, generator=GEN) * 2.4 - 1.2
    for xin, g, mode in [(x, grid, 2), (x.double(), grid.double(), 0),
                         (x.to(memory_format=torch.channels_last), grid, 0)]:
        ref = A.grid_sampler_2d(xin, g, mode, 0, False)
        out = torch.empty(ref.shape, dtype=ref.dtype)
        run_kernel("aten::grid_sampler_2d.out", [xin, g, mode, 0, False, out], library="optimized")
        assert_close(out, ref, atol=1e-5, rtol=1e-5)
    out = torch.empty(1, 3, 6, 7)
    with pytest.raises(RuntimeError, match="aten::grid_sampler_2d.out: interpolation_mode 3"):
        run_kernel("aten::grid_sampler_2d.out", [x, grid, 3, 0, False, out], library="optimized")
    with pytest.raises(RuntimeError, match="aten::grid_sampler_2d.out: grid must be"):
        run_kernel("aten::grid_sampler_2d.out", [x, grid[..., :1].contiguous(), 0, 0, False, out],
                   library="optimized")
