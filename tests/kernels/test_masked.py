"""masked_select.out, nonzero.out (data-dependent output sizes) and masked_scatter.out against
torch: every dtype, broadcasting masks, any dim order, empty results.

masked_select's and nonzero's out tensors are passed as bounded-dynamic tensors sized at their
upper bound (what the memory planner reserves for a data-dependent output); the kernel resizes
them, and the shape it leaves is compared with torch's. A static out must already have the
exact shape, and a bound too small fails with a one-line error.

Tolerance: none (the ops copy elements and write integer coordinates).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, with_dim_order

A = torch.ops.aten


def select(x, mask):
    numel = torch.broadcast_shapes(x.shape, mask.shape).numel()
    out = torch.empty(numel, dtype=x.dtype)
    (shape,) = run_kernel("aten::masked_select.out", [x, mask, out], dynamic=[2])
    return out[: shape[0]], shape


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_select(dtype):
    g = torch.Generator().manual_seed(1)
    for xs, ms in [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), (4, 1)), ((5,), (2, 5)), ((), (3,))]:
        x = rand(xs, dtype, g)
        mask = torch.rand(ms, generator=g) > 0.6
        got, shape = select(x, mask)
        ref = A.masked_select(x, mask)
        assert shape == tuple(ref.shape)
        assert torch.equal(got, ref), f"{dtype} {xs} {ms}"


def test_masked_select_none_all_and_dim_order():
    x = with_dim_order(torch.randn(2, 3, 4, 5), [0, 2, 3, 1])
    mask = with_dim_order(torch.randn(2, 3, 4, 5) > 0, [3, 1, 0, 2])
    got, _ = select(x, mask)
    assert torch.equal(got, A.masked_select(x, mask))
    got, shape = select(x, torch.zeros(5, dtype=torch.bool))
    assert shape == (0,)
    got, shape = select(x, torch.ones(1, dtype=torch.bool))
    assert torch.equal(got, x.flatten())


def test_masked_select_bound_and_static_out():
    x = torch.arange(6.0)
    mask = torch.tensor([True, False, True, True, False, False])
    with pytest.raises(RuntimeError, match="masked_select.out: out shape does not match"):
        run_kernel("aten::masked_select.out", [x, mask, torch.empty(2)], dynamic=[2])
    with pytest.raises(RuntimeError, match="out shape does not match the result .static tensor cannot change shape"):
        run_kernel("aten::masked_select.out", [x, mask, torch.empty(6)])
    out = torch.empty(3)
    run_kernel("aten::masked_select.out", [x, mask, out])  # static and exact
    assert out.tolist() == [0.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="mask must be bool"):
        run_kernel("aten::masked_select.out", [x, mask.int(), torch.empty(6)], dynamic=[2])


def nonzero(x):
    out = torch.empty(x.numel(), x.dim(), dtype=torch.int64)
    (shape,) = run_kernel("aten::nonzero.out", [x, out], dynamic=[1])
    return out.flatten()[: shape[0] * shape[1]].view(shape), shape


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_nonzero(dtype):
    g = torch.Generator().manual_seed(2)
    for shape in [(7,), (3, 4), (2, 3, 4, 5), (4, 0, 2)]:
        x = rand(shape, dtype, g)
        if dtype != torch.bool:
            x = x * (torch.rand(shape, generator=g) > 0.5).to(dtype)
        got, got_shape = nonzero(x)
        ref = A.nonzero(x)
        assert got_shape == tuple(ref.shape)
        assert torch.equal(got, ref), f"{dtype} {shape}"


def test_nonzero_special_values_and_dim_order():
    x = torch.tensor([0.0, -0.0, float("nan"), 1e-40, float("inf")])
    got, _ = nonzero(x)
    assert torch.equal(got, A.nonzero(x))
    y = with_dim_order(torch.randn(3, 4, 5).clamp(min=0), [2, 0, 1])
    got, _ = nonzero(y)
    assert torch.equal(got, A.nonzero(y))
    got, shape = nonzero(torch.zeros(3, 3))
    assert shape == (0, 2)
    out = torch.empty(1, 0, dtype=torch.int64)  # 0-d input: [count, 0]
    (shape,) = run_kernel("aten::nonzero.out", [torch.tensor(5), out], dynamic=[1])
    assert shape == (1, 0)


def test_nonzero_errors():
    with pytest.raises(RuntimeError, match="out must be int64"):
        run_kernel("aten::nonzero.out", [torch.ones(3), torch.empty(3, 1)], dynamic=[1])
    with pytest.raises(RuntimeError, match="nonzero.out: out shape does not match"):
        run_kernel("aten::nonzero.out", [torch.ones(3), torch.empty(2, 1, dtype=torch.int64)],
                   dynamic=[1])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_scatter(dtype):
    g = torch.Generator().manual_seed(3)
    for xs, ms, ss in [((3, 4), (3, 4), (20,)), ((3, 4), (4,), (3, 5)), ((2, 1, 3), (2, 4, 1), (30,))]:
        x = rand(xs, dtype, g)
        mask = torch.rand(ms, generator=g) > 0.5
        source = rand(ss, dtype, g)
        ref = A.masked_scatter(x, mask, source)
        out = torch.empty_like(ref)
        run_kernel("aten::masked_scatter.out", [x, mask, source, out])
        assert torch.equal(out, ref), f"{dtype} {xs} {ms}"


def test_masked_scatter_source_too_small_and_dim_order():
    x = with_dim_order(torch.randn(2, 3, 4), [2, 0, 1])
    mask = torch.randn(2, 3, 4) > 0
    source = with_dim_order(torch.randn(4, 6), [1, 0])
    ref = A.masked_scatter(x, mask, source)
    out = with_dim_order(torch.empty(2, 3, 4), [1, 2, 0])
    run_kernel("aten::masked_scatter.out", [x, mask, source, out])
    assert torch.equal(out, ref)
    with pytest.raises(RuntimeError, match="mask has 3 true values but source only 2 elements"):
        run_kernel("aten::masked_scatter.out", [torch.zeros(3), torch.ones(3, dtype=torch.bool),
                                                torch.ones(2), torch.empty(3)])
