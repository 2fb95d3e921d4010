"""sort.values, sort.values_stable and topk.values against torch: every dtype torch accepts, any
dim, ascending and descending, stable and not, NaN (above every number, as torch), ties, any
dim order, k = 0 and k = n, 0-d inputs; malformed k and dims.

Tolerance: none. Values must equal torch's bit for bit; indices too (the kernels take ATen's
algorithm and comparator step for step, so ties and topk's unsorted order match).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import rand, with_dim_order

A = torch.ops.aten
REAL = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8, torch.int8,
        torch.int16, torch.int32, torch.int64]


def values_with_ties(shape, dtype, g):
    x = rand(shape, dtype, g)
    if dtype.is_floating_point:
        x = (x / 4).round()  # many equal values
    else:
        x = x % 5
    return x


def run_sort(x, dim, descending, stable):
    ref_v, ref_i = A.sort.stable(x, stable=stable, dim=dim, descending=descending)
    v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
    if stable is None:
        run_kernel("aten::sort.values", [x, dim, descending, v, i])
    else:
        run_kernel("aten::sort.values_stable", [x, stable, dim, descending, v, i])
    return (v, i), (ref_v, ref_i)


@pytest.mark.parametrize("dtype", REAL + [torch.bool])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("stable", [None, True])
def test_sort_matches_torch(dtype, descending, stable):
    g = torch.Generator().manual_seed(1)
    for shape, dim in [((37,), 0), ((4, 50), -1), ((3, 20, 5), 1), ((6, 3, 4), 0)]:
        x = rand(shape, dtype, g) if dtype == torch.bool else values_with_ties(shape, dtype, g)
        (v, i), (rv, ri) = run_sort(x, dim, descending, stable)
        assert torch.equal(v, rv), f"{dtype} {shape} values"
        assert torch.equal(i, ri), f"{dtype} {shape} indices"


def test_sort_stable_long_rows_with_ties_matches_exactly():
    g = torch.Generator().manual_seed(2)
    x = torch.randint(0, 10, (3, 5000), generator=g).float()
    for descending in (False, True):
        (v, i), (rv, ri) = run_sort(x, 1, descending, True)
        assert torch.equal(v, rv) and torch.equal(i, ri)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
def test_sort_unstable_long_rows_tie_order_as_torch(dtype):
    # torch radix-sorts 1-D int32/int64 ascending from 32768 elements (ties in index order).
    g = torch.Generator().manual_seed(6)
    for n in (1000, 40000):
        x = torch.randint(0, 50, (n,), generator=g).to(dtype)
        for descending in (False, True):
            (v, i), (rv, ri) = run_sort(x, 0, descending, None)
            assert torch.equal(v, rv) and torch.equal(i, ri), f"{dtype} {n} {descending}"


def test_sort_nan_and_channels_last():
    x = torch.tensor([3.0, float("nan"), -1.0, float("inf"), float("nan"), -float("inf"), 0.0])
    for descending in (False, True):
        (v, i), (rv, ri) = run_sort(x, 0, descending, True)
        torch.testing.assert_close(v, rv, equal_nan=True, atol=0, rtol=0)
        assert torch.equal(i, ri)
    g = torch.Generator().manual_seed(3)
    x = with_dim_order(torch.randn(2, 5, 3, 4, generator=g), [0, 2, 3, 1])
    ref_v, ref_i = A.sort(x, 1)
    v = with_dim_order(torch.empty(ref_v.shape), [0, 2, 3, 1])
    i = torch.empty(ref_i.shape, dtype=torch.int64)
    run_kernel("aten::sort.values", [x, 1, False, v, i])
    assert torch.equal(v, ref_v) and torch.equal(i, ref_i)


def test_sort_0d():
    x = torch.tensor(2.5)
    v, i = torch.empty(()), torch.empty((), dtype=torch.int64)
    run_kernel("aten::sort.values", [x, 0, False, v, i])
    assert v.item() == 2.5 and i.item() == 0


def run_topk(x, k, dim, largest, sorted_):
    ref_v, ref_i = A.topk(x, k, dim, largest, sorted_)
    v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
    run_kernel("aten::topk.values", [x, k, dim, largest, sorted_, v, i])
    return (v, i), (ref_v, ref_i)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("sorted_", [True, False])
def test_topk_matches_torch(dtype, largest, sorted_):
    g = torch.Generator().manual_seed(4)
    # k * 64 <= n takes partial_sort, the others nth_element.
    for shape, k, dim in [((1000,), 5, 0), ((1000,), 300, 0), ((4, 64), 1, -1), ((4, 64), 64, 1),
                          ((5, 30, 3), 7, 1), ((10, 2), 0, 0)]:
        x = values_with_ties(shape, dtype, g)
        (v, i), (rv, ri) = run_topk(x, k, dim, largest, sorted_)
        assert torch.equal(v, rv), f"{dtype} {shape} k={k} values"
        assert torch.equal(i, ri), f"{dtype} {shape} k={k} indices"


def test_topk_nan_and_dim_order():
    x = torch.tensor([1.0, float("nan"), 5.0, -2.0, float("nan"), 7.0])
    for largest in (True, False):
        (v, i), (rv, ri) = run_topk(x, 3, 0, largest, True)
        torch.testing.assert_close(v, rv, equal_nan=True, atol=0, rtol=0)
        assert torch.equal(i, ri)
    g = torch.Generator().manual_seed(5)
    x = with_dim_order(torch.randn(2, 8, 3, 4, generator=g), [0, 2, 3, 1])
    ref_v, ref_i = A.topk(x, 3, 1)
    v = with_dim_order(torch.empty(ref_v.shape), [0, 2, 3, 1])
    i = with_dim_order(torch.empty(ref_i.shape, dtype=torch.int64), [0, 2, 3, 1])
    run_kernel("aten::topk.values", [x, 3, 1, True, True, v, i])
    assert torch.equal(v, ref_v) and torch.equal(i, ref_i)


@pytest.mark.parametrize(
    "k,dim,vshape,match",
    [
        (-1, 0, (0,), "k -1 out of range"),
        (11, 0, (11,), "k 11 out of range"),
        (2, 3, (2,), "dim 3 out of range"),
        (2, 0, (3,), "out shape does not match"),
    ],
)
def test_topk_malformed(k, dim, vshape, match):
    x = torch.randn(10)
    with pytest.raises(RuntimeError, match=match):
        run_kernel("aten::topk.values", [x, k, dim, True, True, torch.empty(vshape),
                                         torch.empty(vshape, dtype=torch.int64)])


def test_sort_and_topk_indices_must_be_int64():
    x = torch.randn(4)
    with pytest.raises(RuntimeError, match="indices must be int64"):
        run_kernel("aten::sort.values", [x, 0, False, torch.empty(4), torch.empty(4, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="indices must be int64"):
        run_kernel("aten::topk.values", [x, 2, 0, True, True, torch.empty(2), torch.empty(2, dtype=torch.int32)])
