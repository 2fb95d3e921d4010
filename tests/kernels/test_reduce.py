"""Reduction kernels against torch: sum, prod, amax/amin, argmax/argmin, max.dim/min.dim, any,
var, over dim lists with negative dims, keepdim, 0-d and 0-size tensors, and inputs and outs in
non-default dim orders.

Tolerances (per output element, against a float64 reference over the same elements):
- sum of float32: |err| <= 2e-6 * sum(|terms|); var: relative 8e-6; prod: relative 2e-6 * N.
- float16 / bfloat16 results: one rounding of the float32-accumulated value to the output
  type, i.e. relative 1e-3 (half) and 8e-3 (bfloat16), plus the float32 bound.
- integer sums and products, amax/amin, arg reductions, any: exact (NaN positions included).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import empty_with_dim_order, rand, random_order, with_dim_order

aten = torch.ops.aten
FLOAT_DTYPES = [torch.float32, torch.float16, torch.bfloat16]
INT_DTYPES = [torch.int32, torch.int64, torch.int8, torch.uint8]
ROUNDING = {torch.float32: 0.0, torch.float64: 0.0, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def gen(seed):
    return torch.Generator().manual_seed(seed)


def new_out(shape, dtype, g):
    return empty_with_dim_order(shape, dtype, random_order(len(shape), g))


def check_float(out, x, reduce64, scale64, what):
    """Compares a float result with the float64 reference; `scale64` bounds accumulated error."""
    ref = reduce64(x.double())
    scale = scale64(x.double())
    assert out.shape == ref.shape, f"{what}: shape {tuple(out.shape)} != {tuple(ref.shape)}"
    err = (out.double() - ref).abs()
    tol = ROUNDING[out.dtype] * ref.abs() + 2e-6 * scale + 1e-30
    same = (out.double().isnan() & ref.isnan()) | (out.double() == ref)  # NaN, inf (divisor 0)
    bad = ~((err <= tol) | same)
    assert not bad.any(), f"{what}: max err {err[bad].max().item()} tol {tol[bad].min().item()}"


def dim_cases(rank):
    """Dim lists to reduce for a tensor of `rank`: single dims (negative too), pairs, all."""
    if rank == 0:
        return [[0], [-1], []]
    cases = [[0], [-1], list(range(rank)), []]
    if rank >= 3:
        cases += [[0, 2], [-1, 1], [0, -2]]
    return cases


SHAPES = [(4, 5, 6), (3, 1, 7, 2), (9,), (), (2, 0, 3), (5, 150)]  # 150: several output chunks


def layouts(shape, dtype, g, prepare=None):
    """The same values stored contiguously, in a random dim order and (4-D) channels-last."""
    x = rand(shape, dtype, g) if dtype != torch.float32 else torch.randn(shape, generator=g) + 0.5
    if prepare is not None:
        x = prepare(x)
    yield x
    if len(shape) > 1:
        yield with_dim_order(x, random_order(len(shape), g))
    if len(shape) == 4:
        yield x.to(memory_format=torch.channels_last)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + [torch.bool])
def test_sum(shape, dtype):
    g = gen(1)
    for x in layouts(shape, dtype, g):
        for dims in dim_cases(len(shape)):
            for keepdim in (False, True):
                e = aten.sum.dim_IntList(x, dims, keepdim)
                out = new_out(e.shape, e.dtype, g)
                run_kernel("aten::sum.IntList_out", [x, dims, keepdim, None, out])
                what = f"sum {shape} {dtype} dims={dims} keepdim={keepdim}"
                if dtype.is_floating_point:
                    d = dims if dims else list(range(len(shape)))
                    check_float(
                        out,
                        x,
                        lambda t, d=d, k=keepdim: t.sum(d, k),
                        lambda t, d=d, k=keepdim: t.abs().sum(d, k),
                        what,
                    )
                else:
                    assert torch.equal(out, e), what


def test_sum_dtype_argument_and_none_dims():
    g = gen(2)
    x = rand((3, 4), torch.int32, g)
    out = torch.empty((), dtype=torch.float32)
    run_kernel("aten::sum.IntList_out", [x, None, False, 6, out])  # 6 = torch.float32
    assert out.item() == x.sum().item()
    with pytest.raises(RuntimeError, match="aten::sum.IntList_out: dtype argument"):
        run_kernel("aten::sum.IntList_out", [x, None, False, 4, out])


def test_sum_of_floats_into_int64_converts_each_element_without_undefined_behaviour():
    # Found by the fuzzer (tests/fuzz/regressions/reduce-float-to-int-accumulator.pte): each
    # float converts to int64 before it is added, as torch's dtype argument does; beyond int64
    # and NaN convert as every pteron float -> int store does (to 0) instead of being undefined.
    x = torch.tensor([[7.7e31, 2.9, float("nan")], [-3.5, 1e19, 4.0]])
    out = torch.empty(2, dtype=torch.int64)
    run_kernel("aten::sum.IntList_out", [x, [1], False, 4, out])  # 4 = torch.int64
    assert out.tolist() == [2, 1]  # 0 + 2 + 0, -3 + 0 + 4
    ok = torch.tensor([[1.9, -2.9, 3.0]])
    out1 = torch.empty(1, dtype=torch.int64)
    run_kernel("aten::sum.IntList_out", [ok, [1], False, 4, out1])
    assert out1.tolist() == ok.sum(1, dtype=torch.int64).tolist()


@pytest.mark.parametrize(
    "shape,dims", [((1 << 20,), [0]), ((40000, 3), [0]), ((3, 50000), [1]), ((300, 5, 300), [0, 2])]
)
def test_sum_float32_error_stays_small(shape, dims):
    # A plain float loop drifts by ~sqrt(N) half-ulps of the total (1e-5 relative and worse
    # here); the pairwise/blocked sums must stay within a few ulps.
    x = torch.rand(shape, generator=gen(3)) + 1.0
    out = torch.empty(aten.sum.dim_IntList(x, dims).shape)
    run_kernel("aten::sum.IntList_out", [x, dims, False, None, out])
    ref = x.double().sum(dims)
    assert ((out.double() - ref).abs() <= 1e-6 * ref).all(), (out.double() - ref).abs().max()


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape", SHAPES[:4] + [(5, 33)])
def test_amax_amin(op, shape):
    g = gen(4)

    def one_nan(x):
        if x.dtype.is_floating_point and x.numel() > 3:
            x.view(-1)[x.numel() // 2] = float("nan")
        return x

    for dtype in FLOAT_DTYPES + INT_DTYPES + [torch.bool]:
        for x in layouts(shape, dtype, g, one_nan if len(shape) % 2 else None):
            for dims in dim_cases(len(shape)):
                for keepdim in (False, True):
                    e = getattr(aten, op).default(x, dims, keepdim)
                    out = new_out(e.shape, e.dtype, g)
                    run_kernel(f"aten::{op}.out", [x, dims, keepdim, out])
                    assert torch.equal(out, e) or torch.allclose(
                        out, e, equal_nan=True, rtol=0, atol=0
                    ), f"{op} {shape} {dtype} dims={dims}"


def test_amax_rejects_empty_reduction():
    with pytest.raises(
        RuntimeError, match="aten::amax.out: cannot reduce over a dimension of size 0"
    ):
        run_kernel("aten::amax.out", [torch.zeros(0, 3), [0], False, torch.empty(3)])
    out = torch.empty(0)  # reducing the non-empty dim of an empty tensor is fine
    run_kernel("aten::amax.out", [torch.zeros(0, 3), [1], False, out])


def ties_and_nans(g):
    return lambda x: with_ties_and_nans(x, g)


def with_ties_and_nans(x, g):
    if x.dtype == torch.bool:
        return x
    if x.dtype.is_floating_point:
        x = torch.round(x)  # many ties: the first occurrence must win
        flat = x.view(-1)
        if flat.numel() > 5:
            flat[torch.randint(0, flat.numel(), (2,), generator=g)] = float("nan")
    else:
        x = x % 3
    return x


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 1, 7, 2), (9,), (), (5, 150)])
def test_argmax_argmin(op, shape):
    g = gen(5)
    for dtype in [torch.float32, torch.float16, torch.int64, torch.int8]:
        for x in layouts(shape, dtype, g, ties_and_nans(g)):
            for dim in [None] + list(range(-len(shape), len(shape))) + ([0] if not shape else []):
                for keepdim in (False, True):
                    e = getattr(aten, op).default(x, dim, keepdim)
                    out = new_out(e.shape, torch.int64, g)
                    run_kernel(f"aten::{op}.out", [x, dim, keepdim, out])
                    assert torch.equal(out, e), f"{op} {shape} {dtype} dim={dim} {out} {e}"


@pytest.mark.parametrize("op", ["max", "min"])
def test_max_min_dim(op):
    g = gen(6)
    for shape in [(4, 5, 6), (2, 3, 4, 5), (7,), ()]:
        for dtype in [torch.float32, torch.bfloat16, torch.int32, torch.bool]:
            for x in layouts(shape, dtype, g, ties_and_nans(g)):
                for dim in range(-max(len(shape), 1), max(len(shape), 1)):
                    for keepdim in (False, True):
                        ev, ei = getattr(aten, op).dim(x, dim, keepdim)
                        vals, idx = (
                            new_out(ev.shape, ev.dtype, g),
                            new_out(ei.shape, torch.int64, g),
                        )
                        run_kernel(f"aten::{op}.dim_{op}", [x, dim, keepdim, vals, idx])
                        assert torch.equal(idx, ei), f"{op}.dim indices {shape} {dtype} dim={dim}"
                        assert torch.allclose(
                            vals, ev, rtol=0, atol=0, equal_nan=True
                        ) or torch.equal(vals, ev)


def test_arg_reductions_reject_bad_inputs():
    with pytest.raises(
        RuntimeError, match="aten::argmax.out: cannot reduce over a dimension of size 0"
    ):
        run_kernel(
            "aten::argmax.out", [torch.zeros(0, 3), 0, False, torch.empty(3, dtype=torch.int64)]
        )
    with pytest.raises(RuntimeError, match="aten::argmin.out: out must be int64"):
        run_kernel("aten::argmin.out", [torch.zeros(2, 3), 0, False, torch.empty(3)])
    with pytest.raises(RuntimeError, match="aten::max.dim_max: dim 2 out of range"):
        run_kernel(
            "aten::max.dim_max",
            [torch.zeros(2, 3), 2, False, torch.empty(2), torch.empty(2, dtype=torch.int64)],
        )


@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 1, 7, 2), (9,), (), (2, 0, 3)])
def test_any(shape):
    g = gen(7)
    for dtype in [torch.bool, torch.float32, torch.int64, torch.uint8]:

        def sparse(x, dtype=dtype):
            x = (x * (torch.rand(shape, generator=g) > 0.85)).to(dtype)  # mostly zeros
            if dtype == torch.float32 and x.numel() > 2:
                x.view(-1)[1] = float("nan")  # NaN is "true"
            return x

        for x in layouts(shape, dtype, g, sparse):
            for dim in range(-max(len(shape), 1), max(len(shape), 1)):
                e = aten.any.dim(x, dim, True)
                out = new_out(e.shape, e.dtype, g)
                run_kernel("aten::any.out", [x, dim, True, out])
                assert torch.equal(out, e), f"any {shape} {dtype} dim={dim}"
            for dims in [None, []] + dim_cases(len(shape))[:-1]:
                for keepdim in (False, True):
                    e = aten.any.dims(x, dims, keepdim)
                    out = new_out(e.shape, e.dtype, g)
                    run_kernel("aten::any.dims_out", [x, dims, keepdim, out])
                    assert torch.equal(out, e), f"any.dims {shape} {dtype} dims={dims}"
            out = torch.empty((), dtype=aten.any.default(x).dtype)
            run_kernel("aten::any.all_out", [x, out])
            assert torch.equal(out, aten.any.default(x))


@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 1, 7, 2), (9,), (2, 0, 3), (200, 3)])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_var(shape, dtype):
    g = gen(8)
    for x in layouts(shape, dtype, g):
        x = x * 3 + 100  # a large mean: a one-pass formula would cancel badly
        for dims in [None] + dim_cases(len(shape))[:-1]:
            for correction in (None, 0, 1, 2.5):
                for keepdim in (False, True):
                    e = aten.var.correction(x, dims, correction=correction, keepdim=keepdim)
                    out = new_out(e.shape, dtype, g)
                    run_kernel("aten::var.correction_out", [x, dims, correction, keepdim, out])
                    c = 1 if correction is None else correction
                    d = dims if dims else list(range(len(shape)))

                    def ref(t, d=d, c=c, keepdim=keepdim):
                        return aten.var.correction(t, d, correction=c, keepdim=keepdim)

                    def scale(t, ref=ref):
                        return ref(t).abs() * 4  # relative 8e-6

                    check_float(out, x, ref, scale, f"var {shape} {dtype} {dims} {correction}")


def test_var_rejects_integers():
    with pytest.raises(RuntimeError, match="aten::var.correction_out: needs floating point"):
        run_kernel(
            "aten::var.correction_out",
            [
                torch.zeros(3, dtype=torch.int64),
                None,
                None,
                False,
                torch.empty((), dtype=torch.int64),
            ],
        )


@pytest.mark.parametrize("shape", [(4, 5, 6), (3, 1, 7, 2), (9,), (), (2, 0, 3)])
def test_prod(shape):
    g = gen(9)
    for dtype in [torch.float32, torch.int64, torch.int32, torch.bool]:
        near_one = (
            (lambda x: 1 + 0.1 * torch.randn(shape, generator=g))
            if dtype.is_floating_point
            else None
        )
        for x in layouts(shape, dtype, g, near_one):
            for dim in range(-max(len(shape), 1), max(len(shape), 1)):
                for keepdim in (False, True):
                    e = aten.prod.dim_int(x, dim, keepdim)
                    out = new_out(e.shape, e.dtype, g)
                    run_kernel("aten::prod.int_out", [x, dim, keepdim, None, out])
                    if dtype.is_floating_point:
                        torch.testing.assert_close(
                            out, e, rtol=2e-6 * max(x.shape[dim] if x.dim() else 1, 1), atol=0
                        )
                    else:
                        assert torch.equal(out, e), f"prod {shape} {dtype} dim={dim}"
            e = aten.prod.default(x)
            out = torch.empty((), dtype=e.dtype)
            run_kernel("aten::prod.out", [x, None, out])
            if dtype.is_floating_point:
                torch.testing.assert_close(out, e, rtol=2e-6 * max(x.numel(), 1), atol=0)
            else:
                assert torch.equal(out, e)


def test_reductions_reject_bad_dims_and_out_shape():
    x = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="aten::sum.IntList_out: dim 0 appears multiple times"):
        run_kernel("aten::sum.IntList_out", [x, [0, -2], False, None, torch.empty(3)])
    with pytest.raises(RuntimeError, match="aten::amin.out: dim 5 out of range"):
        run_kernel("aten::amin.out", [x, [5], False, torch.empty(2)])
    with pytest.raises(RuntimeError, match="aten::sum.IntList_out"):
        run_kernel("aten::sum.IntList_out", [x, [1], False, None, torch.empty(3)])
    with pytest.raises(RuntimeError, match="aten::amax.out: out has dtype"):
        run_kernel("aten::amax.out", [x, [1], False, torch.empty(2, dtype=torch.int64)])
