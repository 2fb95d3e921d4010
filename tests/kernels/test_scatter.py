"""Scatter-style kernels against torch: index_put (accumulate too), index_copy, slice_scatter,
select_scatter, scatter (src and value), scatter_add, scatter_reduce (sum, prod, mean, amax,
amin, with and without self) and copy, over every dtype, int64/int32 and
bool indices, negative dims and indices, non-default dim orders, and with out sharing self's
memory (the in-place cache write the compiler plans for state).

Tolerance: none (elements move), except scatter_add/scatter_reduce on float16/bfloat16, whose
reductions of repeated indices round per step in another order than torch's (atol = rtol =
2e-2), and scatter_reduce on float32/64 (1e-6). Out-of-range indices raise RuntimeError
naming the op and the index, and leave out untouched.
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import (
    ALL_DTYPES,
    assert_equal,
    empty_with_dim_order,
    rand,
    random_order,
    with_dim_order,
)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def run_into(name, args, expected, out_order=None):
    order = out_order if out_order is not None else list(range(expected.dim()))
    out = empty_with_dim_order(expected.shape, expected.dtype, order)
    run_kernel(name, [*args, out])
    assert_equal(out, expected, f"{name} out_order={order}")


def run_in_place(name, self, args, expected):
    """out is self's own memory, as for a cache write planned in place."""
    self = self.clone()
    run_kernel(name, [self, *args, self])
    assert_equal(self, expected, f"{name} in place")


def test_index_put_kv_cache_write():
    # The decoder cache update: cache[:, :, pos] = new, with None for the leading dims.
    g = gen(1)
    for dtype in ALL_DTYPES:
        cache = rand((1, 2, 16, 8), dtype, g)
        new = rand((1, 2, 1, 8), dtype, g)
        pos = torch.tensor([5])
        e = torch.ops.aten.index_put(cache, [None, None, pos], new)
        run_into("aten::index_put.out", [cache, [None, None, pos], new, False], e)
        run_in_place("aten::index_put.out", cache, [[None, None, pos], new, False], e)


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_shapes(accumulate):
    g = gen(2)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((5, 4, 3), dtype, g), random_order(3, g))
        # Distinct indices unless accumulating (torch leaves duplicate writes unordered).
        rows = torch.tensor([4, -5, 2]) if not accumulate else torch.tensor([1, 1, -1, 0])
        cases = [
            ([rows], rand((len(rows), 4, 3), dtype, g)),
            ([rows], rand((3,), dtype, g)),  # broadcast values
            ([None, torch.tensor([0, 3], dtype=torch.int32)], rand((5, 2, 3), dtype, g)),
            ([rows, None, torch.zeros(len(rows), dtype=torch.int64)], rand((len(rows), 4), dtype, g)),
            ([torch.tensor([[0], [2]]), None, torch.tensor([1, 2])], rand((2, 2, 4), dtype, g)),
        ]
        for indices, values in cases:
            e = torch.ops.aten.index_put(x, indices, values, accumulate)
            run_into("aten::index_put.out", [x, indices, values, accumulate], e, random_order(3, g))
            run_in_place("aten::index_put.out", x, [indices, values, accumulate], e)


def test_index_put_bool_mask():
    g = gen(3)
    x = rand((4, 5), torch.float32, g)
    mask = rand((4, 5), torch.bool, g)
    v = torch.tensor(7.0)
    run_into("aten::index_put.out", [x, [mask], v, False], torch.ops.aten.index_put(x, [mask], v))
    row_mask = torch.tensor([True, False, True, False])
    vals = rand((2, 5), torch.float32, g)
    e = torch.ops.aten.index_put(x, [row_mask], vals, True)
    run_into("aten::index_put.out", [x, [row_mask], vals, True], e)


def test_index_put_rejects_out_of_range_without_writing():
    x = torch.zeros(4, 2)
    out = torch.full((4, 2), 3.0)
    with pytest.raises(RuntimeError, match="aten::index_put.out: index 4 is out of bounds"):
        run_kernel("aten::index_put.out", [x, [torch.tensor([0, 4])], torch.ones(2, 2), False, out])
    assert torch.equal(out, torch.full((4, 2), 3.0))
    with pytest.raises(RuntimeError, match="aten::index_put.out: values size 3"):
        run_kernel("aten::index_put.out", [x, [torch.tensor([0])], torch.ones(3), False, torch.empty(4, 2)])
    with pytest.raises(RuntimeError, match="aten::index_put.out: values has dtype float64"):
        run_kernel(
            "aten::index_put.out",
            [x, [torch.tensor([0])], torch.ones(2, dtype=torch.float64), False, torch.empty(4, 2)],
        )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_copy(dim):
    g = gen(4)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        n = x.shape[dim]
        idx = torch.randperm(n, generator=g)[:3]
        shape = list(x.shape)
        shape[dim] = 3
        src = with_dim_order(rand(shape, dtype, g), random_order(3, g))
        e = torch.index_copy(x, dim, idx, src)
        run_into("aten::index_copy.out", [x, dim, idx, src], e, random_order(3, g))
        run_in_place("aten::index_copy.out", x, [dim, idx, src], e)


def test_index_copy_edges_and_errors():
    x = torch.arange(5.0)
    e = torch.index_copy(x, 0, torch.tensor(2), torch.tensor([9.0]))
    run_into("aten::index_copy.out", [x, 0, torch.tensor(2), torch.tensor([9.0])], e)
    with pytest.raises(RuntimeError, match="aten::index_copy.out: index 5 is out of bounds"):
        run_kernel("aten::index_copy.out", [x, 0, torch.tensor([5]), torch.ones(1), torch.empty(5)])
    with pytest.raises(RuntimeError, match="aten::index_copy.out: index must be int64"):
        run_kernel(
            "aten::index_copy.out",
            [x, 0, torch.tensor([1], dtype=torch.int32), torch.ones(1), torch.empty(5)],
        )


@pytest.mark.parametrize("dim,start,end,step", [(0, 1, 4, 1), (1, None, None, 2), (-1, -3, None, 1), (2, 5, 2, 1), (1, 0, 99, 3)])
def test_slice_scatter(dim, start, end, step):
    g = gen(5)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        shape = list(torch.ops.aten.slice(x, dim, start, end, step).shape)
        src = with_dim_order(rand(shape, dtype, g), random_order(3, g))
        e = torch.slice_scatter(x, src, dim, start, end, step)
        run_into("aten::slice_scatter.out", [x, src, dim, start, end, step], e, random_order(3, g))
        run_in_place("aten::slice_scatter.out", x, [src, dim, start, end, step], e)


def test_slice_scatter_rejects_bad_src():
    with pytest.raises(RuntimeError, match="aten::slice_scatter.out: src size 3 at dim 0"):
        run_kernel(
            "aten::slice_scatter.out",
            [torch.zeros(4, 2), torch.ones(3, 2), 0, 0, 2, 1, torch.empty(4, 2)],
        )


@pytest.mark.parametrize("dim,index", [(0, 3), (1, -1), (-1, 0)])
def test_select_scatter(dim, index):
    g = gen(6)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        shape = list(x.select(dim, index).shape)
        src = with_dim_order(rand(shape, dtype, g), random_order(2, g))
        e = torch.select_scatter(x, src, dim, index)
        run_into("aten::select_scatter.out", [x, src, dim, index], e, random_order(3, g))
        run_in_place("aten::select_scatter.out", x, [src, dim, index], e)
    with pytest.raises(RuntimeError, match="aten::select_scatter.out: index 4 is out of bounds"):
        run_kernel("aten::select_scatter.out", [torch.zeros(4, 2), torch.ones(2), 0, 4, torch.empty(4, 2)])


def scatter_index(g, self_shape, index_shape, dim, unique):
    """An index for scatter along dim; unique positions per slice where duplicates would make
    the result depend on write order (scatter.src)."""
    n = self_shape[dim]
    if not unique:
        return torch.randint(0, n, index_shape, generator=g)
    moved = list(index_shape)
    k = moved.pop(dim)
    rows = [torch.randperm(n, generator=g)[:k] for _ in range(int(torch.tensor(moved).prod()))]
    idx = torch.stack(rows).reshape(*moved, k)
    return idx.movedim(-1, dim).contiguous()


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter_src_value_add(dim):
    g = gen(7)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        ishape = [3, 4, 5]
        ishape[dim] = 3
        src = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        uniq = scatter_index(g, x.shape, ishape, dim, unique=True)
        e = torch.scatter(x, dim, uniq, src)
        run_into("aten::scatter.src_out", [x, dim, uniq, src], e, random_order(3, g))
        run_in_place("aten::scatter.src_out", x, [dim, uniq, src], e)
        value = True if dtype == torch.bool else 3
        e = torch.scatter(x, dim, uniq, value)
        run_into("aten::scatter.value_out", [x, dim, uniq, value], e, random_order(3, g))
        dup = scatter_index(g, x.shape, ishape, dim, unique=False)
        e = torch.scatter_add(x, dim, dup, src)
        out = empty_with_dim_order(e.shape, dtype, random_order(3, g))
        run_kernel("aten::scatter_add.out", [x, dim, dup, src, out])
        if dtype in (torch.float16, torch.bfloat16):
            torch.testing.assert_close(out, e, atol=2e-2, rtol=2e-2)
        else:
            assert_equal(out, e, "scatter_add")
            run_in_place("aten::scatter_add.out", x, [dim, dup, src], e)


def test_scatter_rejects_bad_index():
    x = torch.zeros(3, 4)
    with pytest.raises(RuntimeError, match="aten::scatter.src_out: index 3 is out of bounds"):
        run_kernel("aten::scatter.src_out", [x, 0, torch.tensor([[3]]), torch.ones(1, 1), torch.empty(3, 4)])
    with pytest.raises(RuntimeError, match="aten::scatter_add.out: index -1 is out of bounds"):
        run_kernel("aten::scatter_add.out", [x, 1, torch.tensor([[-1]]), torch.ones(1, 1), torch.empty(3, 4)])
    with pytest.raises(RuntimeError, match="aten::scatter.value_out: index size 5 exceeds"):
        run_kernel(
            "aten::scatter.value_out",
            [x, 0, torch.zeros(1, 5, dtype=torch.int64), 1.0, torch.empty(3, 4)],
        )


def test_copy_broadcasts_and_converts():
    g = gen(8)
    for dtype in ALL_DTYPES:
        x = rand((3, 4), dtype, g)
        for src in (rand((3, 4), torch.float32, g), rand((4,), torch.int64, g), torch.tensor(1)):
            e = torch.ops.aten.copy(x, src)
            run_into("aten::copy.out", [x, src, False], e, random_order(2, g))
    with pytest.raises(RuntimeError, match="aten::copy.out: src size 3 at dim 0"):
        run_kernel("aten::copy.out", [torch.zeros(4), torch.ones(3), False, torch.empty(4)])


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(reduce, include_self):
    g = gen(9)
    # bool as torch: sum/amax a logical or, prod/amin a logical and; torch has no mean of bool.
    for dtype in [d for d in ALL_DTYPES if d != torch.bool or reduce != "mean"]:
        for dim in (0, -1):
            x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
            src = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
            ishape = [3, 4, 5]
            ishape[dim] = 4
            idx = scatter_index(g, x.shape, ishape, dim, unique=False)  # repeats reduce
            e = torch.scatter_reduce(x, dim, idx, src, reduce, include_self=include_self)
            out = empty_with_dim_order(e.shape, dtype, random_order(3, g))
            run_kernel("aten::scatter_reduce.two_out", [x, dim, idx, src, reduce, include_self, out])
            if dtype in (torch.float16, torch.bfloat16):
                torch.testing.assert_close(out, e, atol=2e-2, rtol=2e-2, equal_nan=True)
            elif dtype.is_floating_point:
                torch.testing.assert_close(out, e, atol=1e-6, rtol=1e-6, equal_nan=True)
            else:
                assert_equal(out, e, f"scatter_reduce {reduce} {dtype}")


def test_scatter_reduce_nan_and_errors():
    x = torch.tensor([1.0, float("nan"), 3.0])
    src = torch.tensor([float("nan"), 5.0, 0.5])
    idx = torch.tensor([0, 1, 2])
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            e = torch.scatter_reduce(x, 0, idx, src, reduce, include_self=include_self)
            out = torch.empty(3)
            run_kernel("aten::scatter_reduce.two_out", [x, 0, idx, src, reduce, include_self, out])
            torch.testing.assert_close(out, e, atol=0, rtol=0, equal_nan=True)
    with pytest.raises(RuntimeError, match="reduce must be sum, prod, mean, amax or amin"):
        run_kernel("aten::scatter_reduce.two_out", [x, 0, idx, src, "max", True, torch.empty(3)])
    b = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="mean of bool is not supported"):
        run_kernel("aten::scatter_reduce.two_out", [b, 0, torch.tensor([0]), b, "mean", True, torch.empty(2, dtype=torch.bool)])


def test_copy_in_place():
    # ExecuTorch writes a mutated buffer back with aten::copy_(self, src): self is also the
    # returned tensor.
    g = gen(10)
    for dtype in ALL_DTYPES:
        self = rand((3, 4), dtype, g)
        src = rand((4,), torch.float32, g)
        expected = self.clone().copy_(src)
        run_kernel("aten::copy_", [self, src, False, self])
        assert_equal(self, expected, f"copy_ {dtype}")
    with pytest.raises(RuntimeError, match="aten::copy_: the returned tensor is not self"):
        run_kernel("aten::copy_", [torch.zeros(2), torch.ones(2), False, torch.zeros(2)])


def test_index_put_in_place_as_executorch_calls_it():
    """aten::index_put_ (ExecuTorch's portable list): self written in place, the returned self
    the last argument; with accumulate, duplicate indices add up; bad indices refused."""
    g = torch.Generator().manual_seed(7)
    for dtype in (torch.float32, torch.int64, torch.float16, torch.bool):
        self_ = rand((5, 3), dtype, g)
        want = self_.clone()
        idx = [torch.tensor([4, 0, 4])]
        values = rand((3, 3), dtype, g)
        for accumulate in ((False, True) if dtype != torch.bool else (False,)):
            expected = want.clone().index_put_(idx, values, accumulate=accumulate)
            got = want.clone()
            run_kernel("aten::index_put_", [got, idx, values, accumulate, got])
            assert torch.equal(got, expected), (dtype, accumulate)
    x = torch.zeros(4, 2)
    with pytest.raises(RuntimeError, match="aten::index_put_: index 4 is out of bounds"):
        run_kernel("aten::index_put_", [x, [torch.tensor([4])], torch.ones(2), False, x])
    with pytest.raises(RuntimeError, match="aten::index_put_: the returned tensor is not self"):
        run_kernel("aten::index_put_", [x, [torch.tensor([1])], torch.ones(2), False, torch.zeros(4, 2)])
