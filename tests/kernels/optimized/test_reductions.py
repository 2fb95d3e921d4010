"""The optimized library's sum, mean, amax and amin over one block of dims of a row-major
float32 tensor (last dims, middle dims, all of it, with keepdim), against torch at 1 and 2
threads, and what it hands to the portable kernels (other dtypes, layouts, split dim sets, a
dtype argument: the same results as portable).

Tolerances: amax and amin exact (NaN wins, as torch's); sum and mean within 1e-5 relative of
float64 plus 1e-6 of the sum of magnitudes (float lanes summed in blocks of 1024 elements or
128 rows, block totals in double).
"""

import pteron_native
import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)

CASES = [  # shape, dims
    ((64, 128, 128), [-1]),
    ((64, 128, 128), [1, 2]),
    ((8, 300, 70), [1]),  # the sequence of [B, T, C]: columns
    ((2, 16, 9, 9), [2, 3]),  # H and W of NCHW
    ((300_001,), [0]),  # one long row: segments
    ((3, 5, 1, 7), [1, 2]),  # a size-1 dim inside the block
    ((5, 1029), []),  # everything
]


def out_like(want):
    return torch.full_like(want, 123.0)


@pytest.mark.parametrize("shape,dims", CASES)
@pytest.mark.parametrize("keepdim", [False, True])
def test_matches_torch(threads, shape, dims, keepdim):
    x = torch.randn(shape, generator=GEN) + 0.1
    everything = dims if dims else list(range(len(shape)))
    for op in ("amax", "amin"):
        want = getattr(torch, op)(x, everything, keepdim)
        got = out_like(want)
        run_kernel(f"aten::{op}.out", [x, dims, keepdim, got], library="optimized")
        assert torch.equal(got, want), op
    for op in ("sum", "mean"):
        want64 = getattr(torch, op)(x.double(), everything, keepdim)
        got = out_like(want64.float())
        name = "aten::sum.IntList_out" if op == "sum" else "aten::mean.out"
        run_kernel(name, [x, dims, keepdim, None, got], library="optimized")
        scale = getattr(torch, op)(x.double().abs(), everything, keepdim)
        assert ((got.double() - want64).abs() <= 1e-5 * want64.abs() + 1e-6 * scale).all(), op


def test_nan_wins_and_results_do_not_depend_on_threads():
    x = torch.randn(4, 3000, generator=GEN)
    x[1, 17] = float("nan")
    x[2, 2999] = float("nan")
    for op in ("amax", "amin"):
        got = torch.empty(4)
        run_kernel(f"aten::{op}.out", [x, [1], False, got], library="optimized")
        assert got[1:3].isnan().all() and not got[[0, 3]].isnan().any(), op
    big = torch.randn(1_000_003, generator=GEN)
    sums = []
    for t in (1, 2):
        pteron_native.set_num_threads(t)
        got = torch.empty(())
        run_kernel("aten::sum.IntList_out", [big, None, False, None, got], library="optimized")
        sums.append(got)
    pteron_native.set_num_threads(0)
    assert torch.equal(sums[0], sums[1])


def test_other_inputs_run_the_portable_kernel():
    x = torch.randn(6, 10, 4, generator=GEN)
    for inp, dims in [(x.double(), [1]), (x.transpose(0, 1), [1]), (x, [0, 2]), (x.half(), [2])]:
        for op in ("amax", "sum"):
            want = getattr(torch, op)(inp, dims)
            got, portable = out_like(want), out_like(want)
            args = [dims, False] if op == "amax" else [dims, False, None]
            name = "aten::amax.out" if op == "amax" else "aten::sum.IntList_out"
            run_kernel(name, [inp, *args, got], library="optimized")
            run_kernel(name, [inp, *args, portable])
            assert torch.equal(got, portable), (op, inp.dtype, dims)
    with pytest.raises(RuntimeError, match="aten::amax.out"):
        run_kernel("aten::amax.out", [x, [5], False, torch.empty(6, 10)], library="optimized")
