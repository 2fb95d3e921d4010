"""The optimized library's aten::max_pool2d_with_indices.out against
torch.nn.functional.max_pool2d(return_indices=True).

Values and indices must be exact (a max is a pick, not a sum): over kernel/stride/padding/
dilation/ceil_mode combinations, odd sizes, 3-D and 4-D inputs, 1 and 2 threads, ties (the first
maximum wins) and NaN (NaN wins). float64 and channels-last inputs go to the portable kernel.
Bad inputs raise RuntimeError naming the op.
"""

import pytest
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

OP = "aten::max_pool2d_with_indices.out"


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def check(x, k, s, p, d=1, ceil=False):
    ref, ref_idx = F.max_pool2d(x, k, s, p, d, ceil_mode=ceil, return_indices=True)
    out = torch.full(ref.shape, float("nan"), dtype=x.dtype)
    idx = torch.full(ref.shape, -7, dtype=torch.int64)
    run_kernel(OP, [x, [k, k], [s, s], [p, p], [d, d], ceil, out, idx], library="optimized")
    assert torch.equal(out.isnan(), ref.isnan())
    assert torch.equal(out.nan_to_num(), ref.nan_to_num())
    assert torch.equal(idx, ref_idx)


@pytest.mark.parametrize("shape,k,s,p,d,ceil", [
    ((1, 64, 112, 112), 3, 2, 1, 1, False),  # resnet's stem pool (threaded)
    ((2, 3, 15, 17), 3, 2, 1, 1, False),
    ((2, 3, 15, 17), 3, 2, 1, 1, True),
    ((1, 4, 9, 10), 2, 2, 0, 1, False),
    ((1, 2, 13, 11), 3, 1, 1, 2, False),  # dilation
    ((3, 8, 8), 5, 3, 2, 1, True),  # 3-D input
    ((1, 1, 1, 1), 1, 1, 0, 1, False),
])
def test_matches_torch(threads, shape, k, s, p, d, ceil):
    check(rand(*shape, seed=1), k, s, p, d, ceil)


def test_ties_keep_first_and_nan_wins():
    x = torch.randint(-2, 3, (1, 3, 12, 12), generator=torch.Generator().manual_seed(2)).float()
    check(x, 3, 2, 1)
    x[0, 1, 4, 4] = float("nan")
    x[0, 2, 0, 0] = float("nan")
    check(x, 3, 2, 1)
    check(torch.full((1, 1, 5, 5), float("-inf")), 3, 1, 1)


def test_other_inputs_fall_back():
    check(rand(1, 3, 9, 9, seed=3).double(), 3, 2, 1)
    x = rand(1, 3, 9, 9, seed=4).to(memory_format=torch.channels_last)
    out, idx = torch.empty(1, 3, 5, 5), torch.empty(1, 3, 5, 5, dtype=torch.int64)
    with pytest.raises(RuntimeError, match="max_pool2d_with_indices"):  # portable: NCHW only
        run_kernel(OP, [x, [3, 3], [2, 2], [1, 1], [1, 1], False, out, idx], library="optimized")


def test_bad_inputs_name_the_op():
    x = rand(1, 3, 9, 9)
    with pytest.raises(RuntimeError, match="max_pool2d_with_indices"):  # out shape
        run_kernel(OP, [x, [3, 3], [2, 2], [1, 1], [1, 1], False, torch.empty(1, 3, 4, 5),
                        torch.empty(1, 3, 5, 5, dtype=torch.int64)], library="optimized")
    with pytest.raises(RuntimeError, match="max_pool2d_with_indices"):  # padding > kernel / 2
        run_kernel(OP, [x, [3, 3], [2, 2], [2, 2], [1, 1], False, torch.empty(1, 3, 6, 6),
                        torch.empty(1, 3, 6, 6, dtype=torch.int64)], library="optimized")
