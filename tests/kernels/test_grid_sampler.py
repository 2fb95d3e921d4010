"""grid_sampler_2d.out (and grid_sampler_3d.out, trilinear and nearest) against torch:
bilinear, nearest and bicubic; zeros, border and reflection padding; align_corners both ways;
grids reaching well outside [-1, 1]; float32, float64, float16, bfloat16; channels-last input;
malformed modes and shapes.

Tolerance: float32 atol 1e-5 rtol 1e-5 (ATen's vectorised kernel may fuse multiply-adds),
float64 1e-12; float16/bfloat16 2e-2 relative (atol 8e-2) against float32 torch on the same
inputs. Nearest must pick torch's pixel (random grids: no point sits on an exact .5).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel
from layout_helpers import with_dim_order

A = torch.ops.aten
TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.float16: 2e-2, torch.bfloat16: 2e-2}


def inputs(dtype, seed, n=2, c=3, h=7, w=9, oh=5, ow=6, spread=1.6):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    grid = ((torch.rand(n, oh, ow, 2, generator=g) * 2 - 1) * spread).to(dtype)
    return x, grid


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_grid_sampler_matches_torch(mode, padding, align_corners, dtype):
    x, grid = inputs(dtype, 10 * mode + padding)
    ref = A.grid_sampler_2d(x, grid, mode, padding, align_corners)
    out = torch.empty_like(ref)
    run_kernel("aten::grid_sampler_2d.out", [x, grid, mode, padding, align_corners, out])
    tol = TOL[dtype]
    assert_close(out, ref, atol=tol, rtol=tol, what=f"mode {mode} padding {padding}")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_grid_sampler_half_types(dtype):
    # The kernel computes in float32 from the stored values; torch's half-type fallback computes
    # in the half type itself, so the reference is float32 torch on the same (exact) inputs.
    x, grid = inputs(dtype, 7)
    for mode in (0, 2):
        ref = A.grid_sampler_2d(x.float(), grid.float(), mode, 1, False).to(dtype)
        out = torch.empty_like(ref)
        run_kernel("aten::grid_sampler_2d.out", [x, grid, mode, 1, False, out])
        assert_close(out.float(), ref.float(), atol=TOL[dtype] * 4, rtol=TOL[dtype], what=f"{dtype}")


def test_grid_sampler_channels_last_and_identity_grid():
    x, _ = inputs(torch.float32, 3, n=1, c=4, h=6, w=8)
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    grid = torch.nn.functional.affine_grid(theta, (1, 4, 6, 8), align_corners=False)
    xl = with_dim_order(x, [0, 2, 3, 1])
    out = with_dim_order(torch.empty(1, 4, 6, 8), [0, 2, 3, 1])
    run_kernel("aten::grid_sampler_2d.out", [xl, grid, 0, 0, False, out])
    assert_close(out, x, atol=1e-5, rtol=1e-5, what="identity grid")


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler_far_and_non_finite_coordinates(mode, padding):
    x, _ = inputs(torch.float32, 9, n=1, c=2)
    grid = torch.tensor([[[[1e30, -1e30], [float("inf"), 0.0], [float("nan"), 0.5], [-3e9, 2e9]]]])
    ref = A.grid_sampler_2d(x, grid, mode, padding, False)
    out = torch.empty_like(ref)
    run_kernel("aten::grid_sampler_2d.out", [x, grid, mode, padding, False, out])
    finite = torch.isfinite(ref)
    torch.testing.assert_close(out[finite], ref[finite], atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "mode,padding,grid_shape,match",
    [
        (3, 0, (1, 2, 2, 2), "interpolation_mode 3"),
        (0, -1, (1, 2, 2, 2), "padding_mode -1"),
        (0, 0, (2, 2, 2, 2), "grid must be"),
        (0, 0, (1, 2, 2, 3), "grid must be"),
    ],
)
def test_grid_sampler_malformed(mode, padding, grid_shape, match):
    with pytest.raises(RuntimeError, match=match):
        run_kernel("aten::grid_sampler_2d.out", [torch.zeros(1, 1, 3, 3), torch.zeros(grid_shape),
                                                 mode, padding, False, torch.empty(1, 1, 2, 2)])


@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("padding", [0, 1, 2])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_grid_sampler_3d_matches_torch(mode, padding, align_corners, dtype):
    """grid_sampler_3d.out (F.grid_sample on 5-D input): trilinear and nearest, every padding,
    grids reaching outside [-1, 1]; same tolerances as 2-D."""
    g = torch.Generator().manual_seed(20 + 3 * mode + padding)
    x = torch.randn(2, 3, 4, 5, 6, generator=g).to(dtype)
    grid = ((torch.rand(2, 3, 4, 5, 3, generator=g) * 2 - 1) * 1.6).to(dtype)
    ref = A.grid_sampler_3d(x, grid, mode, padding, align_corners)
    out = torch.empty_like(ref)
    run_kernel("aten::grid_sampler_3d.out", [x, grid, mode, padding, align_corners, out])
    assert_close(out, ref, atol=TOL[dtype], rtol=TOL[dtype], what=f"3d mode {mode} padding {padding}")


def test_grid_sampler_3d_model_and_malformed():
    class Warp(torch.nn.Module):  # a volumetric registration warp: affine grid, then sampling
        def forward(self, vol, theta):
            grid = torch.nn.functional.affine_grid(theta, list(vol.shape), align_corners=False)
            return torch.nn.functional.grid_sample(vol, grid, align_corners=False, padding_mode="border")

    import pteron

    vol, theta = torch.randn(1, 2, 5, 6, 7), torch.eye(3, 4).unsqueeze(0) + 0.05 * torch.randn(1, 3, 4)
    want = Warp()(vol, theta)
    got = pteron.to_edge_transform_and_lower(pteron.export(Warp(), (vol, theta))).load().forward(vol, theta)[0]
    assert_close(torch.as_tensor(got), want, atol=1e-5, rtol=1e-5, what="warp")
    with pytest.raises(RuntimeError, match="interpolation_mode 2 not in 0 \\(trilinear\\), 1 \\(nearest\\)"):
        run_kernel("aten::grid_sampler_3d.out", [vol, torch.zeros(1, 2, 2, 2, 3), 2, 0, False,
                                                  torch.empty(1, 2, 2, 2, 2)])
    with pytest.raises(RuntimeError, match="grid must be \\[N=1, D, H, W, 3\\]"):
        run_kernel("aten::grid_sampler_3d.out", [vol, torch.zeros(1, 2, 2, 2, 2), 0, 0, False,
                                                  torch.empty(1, 2, 2, 2, 2)])
