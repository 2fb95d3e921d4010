"""Upsample kernels against torch: upsample_nearest{1,2,3}d, upsample_linear1d,
upsample_bilinear2d (align_corners both ways; output sizes or scale factors; `.out` and
`.vec_out`), upsample_bicubic2d and _upsample_bilinear2d_aa / _upsample_bicubic2d_aa
(antialias), every dtype torch
accepts, NCHW and channels-last, and malformed sizes.

Tolerance: nearest is exact (a copy). Interpolations compute in float as ATen does but may
round or fuse in another order: float32 atol 1e-5 rtol 1e-5, float64 1e-12, float16/bfloat16
1e-2, uint8 atol 1 (ATen's uint8 path uses fixed-point weights).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel
from layout_helpers import with_dim_order

A = torch.ops.aten
GEN = torch.Generator().manual_seed(0)
TOL = {torch.float32: (1e-5, 1e-5), torch.float64: (1e-12, 1e-12), torch.float16: (1e-2, 1e-2),
       torch.bfloat16: (2e-2, 2e-2), torch.uint8: (1, 0)}


def rand(shape, dtype=torch.float32):
    if dtype == torch.uint8:
        return torch.randint(0, 256, shape, generator=GEN).to(dtype)
    return torch.randn(shape, generator=GEN).to(dtype)


def check(actual, expected, dtype, what):
    atol, rtol = TOL[dtype]
    if dtype == torch.uint8:
        assert actual.shape == expected.shape, what
        assert (actual.int() - expected.int()).abs().max().item() <= atol, what
    else:
        assert_close(actual, expected, atol=atol, rtol=rtol, what=what)


NEAREST_CASES = [  # (shape, output_size, scale_factors)
    ((1, 2, 8, 8), None, [2.0, 2.0]),
    ((2, 3, 5, 7), [11, 3], None),
    ((1, 1, 4, 6), None, [1.5, 0.5]),
    ((1, 2, 3, 3), [3, 3], None),
    ((1, 3, 7, 5), None, [3.3, 2.7]),
]


@pytest.mark.parametrize("shape,size,scales", NEAREST_CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.uint8])
def test_nearest2d_vec(shape, size, scales, dtype):
    x = rand(shape, dtype)
    ref = A.upsample_nearest2d.vec(x, size, scales)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_nearest2d.vec_out", [x, size, scales, out])
    assert torch.equal(out, ref), f"{shape} {size} {scales}"


def test_nearest2d_out_and_channels_last():
    x = with_dim_order(rand((2, 4, 5, 6)), [0, 2, 3, 1])
    ref = A.upsample_nearest2d(x, [9, 13], 1.7, 2.1)
    out = with_dim_order(torch.empty(ref.shape), [0, 2, 3, 1])
    run_kernel("aten::upsample_nearest2d.out", [x, [9, 13], 1.7, 2.1, out])
    assert torch.equal(out, ref)
    out2 = torch.empty(ref.shape)
    run_kernel("aten::upsample_nearest2d.out", [x, [9, 13], None, None, out2])
    assert torch.equal(out2, A.upsample_nearest2d(x, [9, 13]))


def test_nearest1d_and_3d():
    x = rand((2, 3, 7))
    ref = A.upsample_nearest1d(x, [16], None)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_nearest1d.out", [x, [16], None, out])
    assert torch.equal(out, ref)
    x = rand((1, 2, 3, 4, 5))
    ref = A.upsample_nearest3d(x, [6, 5, 11], 2.0, None, 2.2)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_nearest3d.out", [x, [6, 5, 11], 2.0, None, 2.2, out])
    assert torch.equal(out, ref)


BILINEAR_CASES = [  # (shape, output_size, scale_factors)
    ((1, 2, 8, 8), None, [2.0, 2.0]),
    ((2, 3, 5, 7), [11, 3], None),
    ((1, 1, 9, 6), None, [0.5, 1.5]),
    ((1, 2, 4, 4), [4, 4], None),
    ((1, 3, 1, 5), [3, 1], None),
    ((1, 2, 6, 5), None, [2.5, 3.1]),
]


@pytest.mark.parametrize("shape,size,scales", BILINEAR_CASES)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8])
def test_bilinear2d_vec(shape, size, scales, align_corners, dtype):
    x = rand(shape, dtype)
    ref = A.upsample_bilinear2d.vec(x, size, align_corners, scales)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_bilinear2d.vec_out", [x, size, align_corners, scales, out])
    check(out, ref, dtype, f"{shape} {size} {scales} {align_corners}")


@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear2d_out_channels_last(align_corners):
    x = with_dim_order(rand((2, 5, 6, 7)), [0, 2, 3, 1])
    ref = A.upsample_bilinear2d(x, [12, 9], align_corners, 2.0, None)
    out = with_dim_order(torch.empty(ref.shape), [0, 2, 3, 1])
    run_kernel("aten::upsample_bilinear2d.out", [x, [12, 9], align_corners, 2.0, None, out])
    check(out, ref, torch.float32, "channels-last")


@pytest.mark.parametrize("align_corners", [False, True])
def test_linear1d(align_corners):
    x = rand((2, 3, 9))
    for size, scale in [([20], None), ([4], 0.5), ([9], None)]:
        ref = A.upsample_linear1d(x, size, align_corners, scale)
        out = torch.empty_like(ref)
        run_kernel("aten::upsample_linear1d.out", [x, size, align_corners, scale, out])
        check(out, ref, torch.float32, f"linear1d {size}")


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.uint8])
def test_bicubic2d(align_corners, dtype):
    x = rand((1, 3, 6, 7), dtype)
    for size, sh, sw in [([12, 14], None, None), ([5, 20], 0.9, 3.0), ([3, 3], None, None)]:
        ref = A.upsample_bicubic2d(x, size, align_corners, sh, sw)
        out = torch.empty_like(ref)
        run_kernel("aten::upsample_bicubic2d.out", [x, size, align_corners, sh, sw, out])
        check(out, ref, dtype, f"bicubic {size}")


AA_OPS = ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"]


@pytest.mark.parametrize("op", AA_OPS)
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.uint8])
def test_upsample2d_aa(op, align_corners, dtype):
    x = rand((2, 3, 17, 13), dtype)
    for size in ([8, 6], [5, 13], [17, 30], [3, 2], [34, 4]):
        ref = getattr(A, op)(x, size, align_corners, None, None)
        out = torch.empty_like(ref)
        run_kernel(f"aten::{op}.out", [x, size, align_corners, None, None, out])
        check(out, ref, dtype, f"{op} {size} {align_corners}")


@pytest.mark.parametrize("op", AA_OPS)
def test_upsample2d_aa_channels_last(op):
    x = with_dim_order(rand((1, 4, 16, 16)), [0, 2, 3, 1])
    ref = getattr(A, op)(x, [7, 5], False, None, None)
    out = torch.empty(ref.shape)
    run_kernel(f"aten::{op}.out", [x, [7, 5], False, None, None, out])
    check(out, ref, torch.float32, f"{op} channels-last")


@pytest.mark.parametrize(
    "args,match",
    [
        (lambda x: [x, None, None], "exactly one of output_size and scale_factors"),
        (lambda x: [x, [4, 4], [2.0, 2.0]], "exactly one of output_size and scale_factors"),
        (lambda x: [x, [4], None], "output_size must be a list of 2 ints"),
        (lambda x: [x, [0, 4], None], "sizes should be greater than 0"),
        (lambda x: [x, [-3, 4], None], "sizes should be greater than 0"),
        (lambda x: [x, None, [-1.0, 2.0]], "invalid scale factor"),
        (lambda x: [x, None, [2.0]], "scale_factors must be a list of 2 floats"),
    ],
)
def test_bad_sizes_fail_cleanly(args, match):
    x = rand((1, 1, 4, 4))
    with pytest.raises(RuntimeError, match=match):
        run_kernel("aten::upsample_nearest2d.vec_out", args(x) + [torch.empty(1, 1, 8, 8)])


def test_scales_from_the_program_cannot_index_outside():
    x = rand((1, 1, 4, 4))
    with pytest.raises(RuntimeError, match="scale 1e-300 for spatial dim 0 is out of range"):
        run_kernel("aten::upsample_nearest2d.out", [x, [8, 8], 1e-300, None, torch.empty(1, 1, 8, 8)])
    # Scales far from output / input (as a program may carry): indices clamp like torch's.
    for name, extra in [("aten::upsample_bilinear2d.out", [False]), ("aten::upsample_bicubic2d.out", [True]),
                        ("aten::_upsample_bilinear2d_aa.out", [False]),
                        ("aten::_upsample_bicubic2d_aa.out", [False])]:
        out = torch.empty(1, 1, 8, 8)
        run_kernel(name, [x, [8, 8], *extra, 1e-3, 50.0, out])
        assert torch.isfinite(out).all()
        # ATen's antialiased kernel is no reference at such scales: called with them inside this
        # file it segfaulted now and then (in torch's own call; never alone), so only pteron's
        # result is checked there (finite).
        if "aa" not in name:
            ref = getattr(A, name.split("::")[1].split(".")[0])(x, [8, 8], *extra, 1e-3, 50.0)
            check(out, ref, torch.float32, name)


def test_wrong_out_shape_and_rank():
    x = rand((1, 1, 4, 4))
    with pytest.raises(RuntimeError, match="out shape does not match"):
        run_kernel("aten::upsample_bilinear2d.vec_out", [x, [8, 8], False, None, torch.empty(1, 1, 8, 7)])
    with pytest.raises(RuntimeError, match="expected a 4D input"):
        run_kernel("aten::upsample_bilinear2d.vec_out", [rand((4, 4)), [8, 8], False, None, torch.empty(8, 8)])
    with pytest.raises(RuntimeError, match="not supported"):
        xi = torch.zeros(1, 1, 2, 2, dtype=torch.int32)
        run_kernel("aten::upsample_bilinear2d.vec_out", [xi, [4, 4], False, None, torch.empty(1, 1, 4, 4, dtype=torch.int32)])
