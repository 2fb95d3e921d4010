"""max/min (all-reduce, unary_out), sum.out, var.out, var_mean.correction_out and
linalg_vector_norm.out (every ord), kthvalue and median against torch (kthvalue/median on
tie-free values, where the positions are defined):
dtypes, dim lists, keepdim, non-contiguous dim orders, 0-d and empty tensors, NaN.

Tolerances: max/min and integer sums exact; float32 sums and variances within 1e-5 relative /
1e-6 absolute (pairwise float accumulation vs torch's cascade sum); float64 1e-12; float16 and
bfloat16 within one storage ulp (2e-3 / 1.6e-2 relative).
"""

import math

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, with_dim_order

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def tol(dtype):
    return {torch.float16: (1e-3, 2e-3), torch.bfloat16: (1e-2, 1.6e-2),
            torch.float64: (1e-12, 1e-12)}.get(dtype, (1e-6, 1e-5))


def close(out, expected, what):
    assert out.dtype == expected.dtype and out.shape == expected.shape, what
    atol, rtol = tol(expected.dtype) if expected.dtype.is_floating_point else (0, 0)
    torch.testing.assert_close(out, expected, atol=atol, rtol=rtol, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


@pytest.mark.parametrize("name,fn", [("max", torch.max), ("min", torch.min)])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_max_min_all(name, fn, dtype):
    g = torch.Generator().manual_seed(1)
    for shape in [(), (1,), (7,), (3, 5), (2, 3, 4, 5), (2, 1, 33)]:
        x = rand(shape, dtype, g)
        out = torch.empty((), dtype=dtype)
        run_kernel(f"aten::{name}.unary_out", [x, out])
        close(out, fn(x), f"{name} {dtype} {shape}")
    x = with_dim_order(rand((2, 3, 4, 5), dtype, g), [0, 2, 3, 1])
    out = torch.empty((), dtype=dtype)
    run_kernel(f"aten::{name}.unary_out", [x, out])
    close(out, fn(x), f"{name} channels-last")


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_nan_and_errors(name):
    x = torch.tensor([1.0, math.nan, -3.0, math.inf])
    out = torch.empty(())
    run_kernel(f"aten::{name}.unary_out", [x, out])
    assert math.isnan(out.item())
    with pytest.raises(RuntimeError, match=f"aten::{name}.unary_out: an empty tensor"):
        run_kernel(f"aten::{name}.unary_out", [torch.empty(0, 3), torch.empty(())])
    with pytest.raises(RuntimeError, match=f"aten::{name}.unary_out: out has dtype"):
        run_kernel(f"aten::{name}.unary_out", [x, torch.empty((), dtype=torch.float64)])
    with pytest.raises(RuntimeError, match=f"aten::{name}.unary_out"):
        run_kernel(f"aten::{name}.unary_out", [x, torch.empty(2)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_sum_out(dtype):
    g = torch.Generator().manual_seed(2)
    for shape in [(), (0,), (7,), (3, 5), (2, 3, 4, 5), (0, 4)]:
        x = rand(shape, dtype, g)
        expected = torch.sum(x)
        out = torch.empty((), dtype=expected.dtype)
        run_kernel("aten::sum.out", [x, None, out])
        close(out, expected, f"sum {dtype} {shape}")
    x = with_dim_order(rand((2, 3, 4, 5), dtype, g), [0, 2, 3, 1])
    expected = torch.sum(x, dtype=torch.float64)
    out = torch.empty((), dtype=torch.float64)
    run_kernel("aten::sum.out", [x, 7, out])  # dtype=float64 (c10 number 7)
    close(out, expected, "sum to float64")
    with pytest.raises(RuntimeError, match="aten::sum.out: dtype argument"):
        run_kernel("aten::sum.out", [x, 6, out])


DIMS = [None, [], [0], [1], [-1], [0, 2], [1, 2, 3]]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dims", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_var_out_and_var_mean(dtype, dims, keepdim):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(2, 3, 4, 5, generator=g) * 3 + 1).to(dtype)
    for unbiased in (True, False):
        expected = torch.var(x, dims, unbiased=unbiased, keepdim=keepdim)
        out = torch.empty_like(expected)
        run_kernel("aten::var.out", [x, dims, unbiased, keepdim, out])
        close(out, expected, f"var.out {dims} {unbiased}")
    for correction in (None, 0, 1, 2.5):
        var, mean = torch.var_mean(x, dims, correction=correction, keepdim=keepdim)
        out0, out1 = torch.empty_like(var), torch.empty_like(mean)
        run_kernel("aten::var_mean.correction_out", [x, dims, correction, keepdim, out0, out1])
        close(out0, var, f"var_mean var {dims} {correction}")
        close(out1, mean, f"var_mean mean {dims} {correction}")


def test_var_mean_layouts_edges_and_errors():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 3, 4, 5, generator=g)
    xs = with_dim_order(x, [0, 2, 3, 1])
    var, mean = torch.var_mean(x, [1])
    out0 = with_dim_order(torch.empty(2, 4, 5), [2, 1, 0])
    out1 = torch.empty(2, 4, 5)
    run_kernel("aten::var_mean.correction_out", [xs, [1], None, False, out0, out1])
    close(out0, var, "channels-last var")
    close(out1, mean, "channels-last mean")
    # One element: correction 1 divides by zero -> nan (as torch); a 0-size reduction -> nan.
    one = torch.tensor([[2.0]])
    for t in (one, torch.empty(0, 3)):
        var, mean = torch.var_mean(t, [0])
        out0, out1 = torch.empty_like(var), torch.empty_like(mean)
        run_kernel("aten::var_mean.correction_out", [t, [0], None, False, out0, out1])
        close(out0, var, f"var of {tuple(t.shape)}")
        close(out1, mean, f"mean of {tuple(t.shape)}")
    with pytest.raises(RuntimeError, match="aten::var_mean.correction_out: needs floating"):
        i = torch.arange(6).view(2, 3)
        run_kernel("aten::var_mean.correction_out", [i, [0], None, False, torch.empty(3), torch.empty(3)])
    with pytest.raises(RuntimeError, match="aten::var.out: .*dim"):
        run_kernel("aten::var.out", [x, [4], True, False, torch.empty(2, 3, 4)])
    with pytest.raises(RuntimeError, match="aten::var_mean.correction_out"):
        run_kernel("aten::var_mean.correction_out", [x, [1], None, False, torch.empty(2, 4, 5), torch.empty(2, 4)])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord_", [2, 1, 0, 3, 0.5, -1, math.inf, -math.inf])
def test_linalg_vector_norm(dtype, ord_):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(2, 3, 4, 5, generator=g).to(dtype)
    x[0, 0, 0, :2] = 0  # zeros: counted by ord 0, infinite terms for negative ord
    for dims, keepdim in [(None, False), ([1], False), ([-1], True), ([0, 2], False), ([], True)]:
        expected = torch.linalg.vector_norm(x, ord_, dims, keepdim)
        out = torch.empty_like(expected)
        run_kernel("aten::linalg_vector_norm.out", [x, ord_, dims, keepdim, None, out])
        close(out, expected, f"norm ord={ord_} dims={dims}")
    xs = with_dim_order(x, [0, 2, 3, 1])
    expected = torch.linalg.vector_norm(x, ord_, [1], False, dtype=torch.float64)
    out = torch.empty_like(expected)
    run_kernel("aten::linalg_vector_norm.out", [xs, ord_, [1], False, 7, out])
    close(out, expected, f"norm channels-last to float64 ord={ord_}")


def test_linalg_vector_norm_edges_and_errors():
    x = torch.tensor([[1.0, math.nan, 2.0], [3.0, 4.0, 0.0]])
    for ord_ in (2, 1, math.inf):
        expected = torch.linalg.vector_norm(x, ord_, [1])
        out = torch.empty(2)
        run_kernel("aten::linalg_vector_norm.out", [x, ord_, [1], False, None, out])
        close(out, expected, f"nan ord={ord_}")
    e = torch.empty(0, 3)
    out = torch.empty(3)
    run_kernel("aten::linalg_vector_norm.out", [e, 2, [0], False, None, out])
    close(out, torch.linalg.vector_norm(e, 2, [0]), "empty reduce")
    with pytest.raises(RuntimeError, match="ord -inf over an empty dimension"):
        run_kernel("aten::linalg_vector_norm.out", [e, -math.inf, [0], False, None, out])
    with pytest.raises(RuntimeError, match="linalg_vector_norm.out: needs floating"):
        run_kernel("aten::linalg_vector_norm.out", [torch.arange(3), 2, None, False, None, torch.empty(())])
    with pytest.raises(RuntimeError, match="dtype argument does not match"):
        run_kernel("aten::linalg_vector_norm.out", [x, 2, None, False, 7, torch.empty(())])


SELECT_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                 torch.int8, torch.uint8]


def distinct(shape, dtype, g):
    """Values without ties (a permutation), so torch's and pteron's positions must agree."""
    n = math.prod(shape)
    return torch.randperm(n, generator=g).view(shape).to(dtype) if n else torch.empty(shape, dtype=dtype)


@pytest.mark.parametrize("dtype", SELECT_DTYPES)
def test_kthvalue_and_median(dtype):
    g = torch.Generator().manual_seed(6)
    x = distinct((3, 5, 7), dtype, g) if dtype != torch.int8 else distinct((2, 3, 7), dtype, g)
    for dim in (0, 1, -1):
        n = x.shape[dim]
        for keepdim in (False, True):
            for k in (1, (n + 1) // 2, n):
                values, indices = torch.kthvalue(x, k, dim, keepdim)
                v, i = torch.empty_like(values), torch.empty_like(indices)
                run_kernel("aten::kthvalue.values", [with_dim_order(x, [2, 0, 1]), k, dim, keepdim, v, i])
                assert torch.equal(v, values) and torch.equal(i, indices), (dim, keepdim, k)
            values, indices = torch.median(x, dim, keepdim)
            v, i = torch.empty_like(values), torch.empty_like(indices)
            run_kernel("aten::median.dim_values", [x, dim, keepdim, v, i])
            assert torch.equal(v, values) and torch.equal(i, indices), (dim, keepdim)
    out = torch.empty((), dtype=dtype)
    run_kernel("aten::median.out", [with_dim_order(x, [1, 2, 0]), out])
    assert torch.equal(out, torch.median(x))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8, torch.float32])
def test_kthvalue_positions_among_ties_are_torchs(dtype):
    # Lines of few distinct values (and NaN): the kernel runs ATen's quickselect, so the
    # position it reports among equal values is torch's for every k and line length.
    g = torch.Generator().manual_seed(7)
    for n in (1, 2, 3, 5, 8, 13, 40):
        x = torch.randint(0, 3, (6, n), generator=g).to(dtype)
        if dtype.is_floating_point:
            x[torch.rand(x.shape, generator=g) < 0.2] = math.nan
        for k in range(1, n + 1):
            values, indices = torch.kthvalue(x, k, 1)
            v, i = torch.empty_like(values), torch.empty_like(indices)
            run_kernel("aten::kthvalue.values", [x, k, 1, False, v, i])
            assert torch.equal(v.nan_to_num(), values.nan_to_num()) and torch.equal(i, indices), (n, k)


def test_kthvalue_median_nan_ties_and_errors():
    x = torch.tensor([[3.0, math.nan, 1.0, 2.0], [4.0, 4.0, 4.0, 1.0]])
    v, i = torch.empty(2), torch.empty(2, dtype=torch.int64)
    run_kernel("aten::median.dim_values", [x, 1, False, v, i])
    values, indices = torch.median(x, 1)
    assert math.isnan(v[0]) and i[0] == 1 and v[1] == values[1]  # NaN wins, at its position
    run_kernel("aten::kthvalue.values", [x, 4, 1, False, v, i])
    assert math.isnan(v[0]) and v[1] == 4.0  # NaN sorts last
    run_kernel("aten::kthvalue.values", [x, 1, 1, False, v, i])
    assert torch.equal(v, torch.tensor([1.0, 1.0])) and torch.equal(i, torch.tensor([2, 3]))
    s = torch.tensor(5.0)
    out = torch.empty(())
    run_kernel("aten::median.out", [s, out])
    assert out.item() == 5.0
    with pytest.raises(RuntimeError, match="k 5 out of range for 4 elements"):
        run_kernel("aten::kthvalue.values", [x, 5, 1, False, v, i])
    with pytest.raises(RuntimeError, match="k must be >= 1"):
        run_kernel("aten::kthvalue.values", [x, 0, 1, False, v, i])
    with pytest.raises(RuntimeError, match="median of an empty tensor"):
        run_kernel("aten::median.out", [torch.empty(0), out])
    with pytest.raises(RuntimeError, match="cannot select from an empty dimension"):
        run_kernel("aten::median.dim_values", [torch.empty(3, 0), 1, False, torch.empty(3), torch.empty(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match="indices out must be int64"):
        run_kernel("aten::median.dim_values", [x, 1, False, v, torch.empty(2)])
