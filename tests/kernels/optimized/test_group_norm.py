"""The optimized library's group norm and instance norm (batch norm with batch statistics:
_native_batch_norm_legit.no_stats) against torch, at 1 and 2 threads: outputs and the saved
mean / rstd, groups of one channel to all of them, planes of one element to past the 1024-float
summation blocks, inputs far from zero (the two-pass variance), with and without affine
parameters; and what goes to the portable kernels (other dtypes, bad arguments).

Tolerance: outputs within 1.5x torch's own float32 error against a float64 reference, plus
1e-6 (inputs far from zero make x - mean lose float32 digits on either side: ~1e-5 at 1000 +-
3); the statistics within 1e-6 (mean) and 1e-5 (rstd) relative of the float64 values.
"""

import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


def assert_as_accurate_as_torch(got, torch_float, reference64):
    ours = (got.double() - reference64).abs().max().item()
    theirs = (torch_float.double() - reference64).abs().max().item()
    assert ours <= 1.5 * theirs + 1e-6, f"max error {ours:.3g}, torch's {theirs:.3g}"

GROUP_CASES = [  # input shape, groups
    ((2, 128, 2000), 1),  # Conv-TasNet's global layer norm
    ((2, 64, 16, 16), 32),  # a diffusion UNet's GroupNorm(32, C)
    ((1, 6, 5, 7), 6),  # one channel per group, planes shorter than a vector
    ((3, 8, 1), 2),  # one element per plane
    ((1, 4, 48, 48), 4),  # one plane past the summation block, one set
]


@pytest.mark.parametrize("shape,groups", GROUP_CASES, ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_torch(threads, shape, groups, affine):
    x = torch.randn(shape, generator=GEN) * 3 + 1000  # far from zero
    N, C = shape[:2]
    HxW = x.numel() // (N * C)
    w = torch.randn(C, generator=GEN) if affine else None
    b = torch.randn(C, generator=GEN) if affine else None
    want = torch.ops.aten.native_group_norm(x, w, b, N, C, HxW, groups, 1e-5)[0]
    ref, ref_mean, ref_rstd = torch.ops.aten.native_group_norm(
        x.double(), w.double() if affine else None, b.double() if affine else None, N, C, HxW, groups, 1e-5)
    out, mean, rstd = torch.empty_like(x), torch.empty(N, groups), torch.empty(N, groups)
    run_kernel("aten::native_group_norm.out", [x, w, b, N, C, HxW, groups, 1e-5, out, mean, rstd],
               library="optimized")
    assert_as_accurate_as_torch(out, want, ref)
    torch.testing.assert_close(mean.double(), ref_mean, rtol=1e-6, atol=0)
    torch.testing.assert_close(rstd.double(), ref_rstd, rtol=1e-5, atol=0)


@pytest.mark.parametrize("shape", [(1, 96, 32, 32), (4, 16, 9, 9), (2, 8, 3), (1, 3, 40, 40)], ids=str)
@pytest.mark.parametrize("affine", [True, False])
def test_instance_norm_and_batch_statistics_match_torch(threads, shape, affine):
    x = torch.randn(shape, generator=GEN) * 2 - 50
    C = shape[1]
    w = torch.randn(C, generator=GEN) if affine else None
    b = torch.randn(C, generator=GEN) if affine else None
    want = torch.ops.aten._native_batch_norm_legit(x, w, b, True, 0.1, 1e-5)[0]
    ref, ref_mean, ref_invstd = torch.ops.aten._native_batch_norm_legit(
        x.double(), w.double() if affine else None, b.double() if affine else None, True, 0.1, 1e-5)
    out, mean, invstd = torch.empty_like(x), torch.empty(C), torch.empty(C)
    run_kernel("aten::_native_batch_norm_legit.no_stats_out", [x, w, b, True, 0.1, 1e-5, out, mean, invstd],
               library="optimized")
    assert_as_accurate_as_torch(out, want, ref)
    torch.testing.assert_close(mean.double(), ref_mean, rtol=1e-6, atol=0)
    torch.testing.assert_close(invstd.double(), ref_invstd, rtol=1e-5, atol=0)
    # What F.instance_norm exports to: batch statistics over [1, N * C, ...].
    inst = x.reshape(1, -1, *shape[2:])
    got = torch.empty_like(inst)
    stats = torch.empty(inst.shape[1]), torch.empty(inst.shape[1])
    run_kernel("aten::_native_batch_norm_legit.no_stats_out", [inst, None, None, True, 0.1, 1e-5, got, *stats],
               library="optimized")
    assert_as_accurate_as_torch(got.view(shape), torch.nn.functional.instance_norm(x),
                                torch.nn.functional.instance_norm(x.double()))


def test_other_dtypes_and_bad_arguments_go_to_portable():
    x = torch.randn(2, 4, 5, generator=GEN)
    for inp in (x.double(),):
        got, portable = torch.empty_like(inp), torch.empty_like(inp)
        stats = [torch.empty(2, 2, dtype=inp.dtype) for _ in range(4)]
        run_kernel("aten::native_group_norm.out", [inp, None, None, 2, 4, 5, 2, 1e-5, got, *stats[:2]],
                   library="optimized")
        run_kernel("aten::native_group_norm.out", [inp, None, None, 2, 4, 5, 2, 1e-5, portable, *stats[2:]])
        assert torch.equal(got, portable)
    out, mean, rstd = torch.empty_like(x), torch.empty(2, 3), torch.empty(2, 3)
    with pytest.raises(RuntimeError, match="native_group_norm"):  # 4 channels into 3 groups
        run_kernel("aten::native_group_norm.out", [x, None, None, 2, 4, 5, 3, 1e-5, out, mean, rstd],
                   library="optimized")
    with pytest.raises(RuntimeError, match="batch_norm"):  # batch statistics need training
        run_kernel("aten::_native_batch_norm_legit.no_stats_out",
                   [x, None, None, False, 0.1, 1e-5, out, torch.empty(4), torch.empty(4)], library="optimized")
