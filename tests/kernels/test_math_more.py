"""Inverse-trig, hyperbolic, log/exp variants, trunc, signbit, erfinv and the binary math kernels
(atan2, hypot, copysign, floor_divide, rsub.Scalar) against torch: dtypes, broadcasting,
non-contiguous dim orders, 0-d and 0-size tensors, edge values (domain limits, infinities,
NaN, signed zeros).

Tolerances: float32 and float64 within 1e-6 relative / 1e-6 absolute (a libm result may differ
from torch's vectorised one by an ulp or two; relative 1e-6 is ~8 float32 ulp); float16 within
2e-3 / 1e-3 and bfloat16 within 1.6e-2 / 1e-2 (one ulp of the storage type: both compute in
float and round); integer and bool results exact. NaN must match NaN.
"""

import math

import pytest
import torch
from kernel_harness import assert_close, run_kernel
from layout_helpers import with_dim_order

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
SHAPES = [(), (0,), (1,), (7,), (3, 5), (2, 3, 4, 5), (0, 3), (2, 1, 33)]


def tolerance(dtype):
    if dtype == torch.float16:
        return 1e-3, 2e-3
    if dtype == torch.bfloat16:
        return 1e-2, 1.6e-2
    if dtype.is_floating_point:
        return 1e-6, 1e-6
    return 0, 0


def make(shape, dtype, g, low=-4.0, high=4.0):
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    low = max(int(low), 0) if dtype == torch.uint8 else int(low)
    return torch.randint(low, int(high) + 1, shape, generator=g).to(dtype)


def check(name, expected, args, what=""):
    out = torch.empty_like(expected, memory_format=torch.contiguous_format)
    run_kernel(name, list(args) + [out])
    atol, rtol = tolerance(expected.dtype)
    assert out.dtype == expected.dtype, f"{name} {what}: dtype {out.dtype} != {expected.dtype}"
    torch.testing.assert_close(out, expected, atol=atol, rtol=rtol, equal_nan=True,
                               msg=lambda m: f"{name} {what}: {m}")
    return out


# op -> (torch function, input range where the result is finite and well conditioned).
UNARY = {
    "acos": (torch.acos, (-1, 1)),
    "asin": (torch.asin, (-1, 1)),
    "atan": (torch.atan, (-20, 20)),
    "acosh": (torch.acosh, (1, 20)),
    "asinh": (torch.asinh, (-20, 20)),
    "atanh": (torch.atanh, (-0.99, 0.99)),
    "tan": (torch.tan, (-1.5, 1.5)),
    "cosh": (torch.cosh, (-8, 8)),
    "sinh": (torch.sinh, (-8, 8)),
    "log2": (torch.log2, (0.01, 100)),
    "log10": (torch.log10, (0.01, 100)),
    "log1p": (torch.log1p, (-0.9, 20)),
    "expm1": (torch.expm1, (-5, 5)),
}

# Values outside the domain or at its limits: torch's NaN / inf / signed zero must come back.
EDGES = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 1e-30, 100.0, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", FLOATS)
def test_unary_math_floats(name, dtype):
    fn, (low, high) = UNARY[name]
    g = torch.Generator().manual_seed(1)
    for shape in SHAPES:
        x = make(shape, dtype, g, low, high)
        check(f"aten::{name}.out", fn(x), [x], f"{dtype} {shape}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_edge_values(name):
    fn, _ = UNARY[name]
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor(EDGES, dtype=dtype)
        expected = fn(x)
        out = check(f"aten::{name}.out", expected, [x], f"edges {dtype}")
        # assert_close treats -0.0 == 0.0: compare the sign bits of zeros too.
        zeros = expected == 0
        assert torch.equal(torch.signbit(out[zeros]), torch.signbit(expected[zeros])), name


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.int8, torch.bool])
def test_unary_math_integer_inputs_give_float(name, dtype):
    fn, (low, high) = UNARY[name]
    g = torch.Generator().manual_seed(2)
    x = make((4, 6), dtype, g, max(math.ceil(low), 0 if dtype == torch.uint8 else -1), high)
    check(f"aten::{name}.out", fn(x), [x], f"{dtype}")


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_dim_orders(name):
    fn, (low, high) = UNARY[name]
    g = torch.Generator().manual_seed(3)
    x = make((2, 3, 4, 5), torch.float32, g, low, high)
    for order in ([0, 2, 3, 1], [3, 2, 1, 0]):
        xs = with_dim_order(x, order)
        out = with_dim_order(torch.empty_like(x), [1, 0, 3, 2])
        run_kernel(f"aten::{name}.out", [xs, out])
        assert_close(out, fn(x), atol=1e-6, rtol=1e-6, what=f"{name} {order}")
    # A float64 out for a float32 input (mixed dtypes): computed in double, then stored.
    out = torch.empty(x.shape, dtype=torch.float64)
    run_kernel(f"aten::{name}.out", [x, out])
    assert_close(out, fn(x.double()), atol=1e-12, rtol=1e-12, what=f"{name} mixed")


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_trunc(dtype):
    g = torch.Generator().manual_seed(4)
    for shape in SHAPES:
        x = make(shape, dtype, g, -50, 50)
        if dtype.is_floating_point:
            x = x * 0.1
        check("aten::trunc.out", torch.trunc(x), [x], f"{dtype} {shape}")
    x = torch.tensor([-2.5, -0.5, -0.0, 0.5, 2.7, math.inf, -math.inf, math.nan])
    check("aten::trunc.out", torch.trunc(x), [x], "edges")
    xs = with_dim_order(make((2, 3, 4, 5), torch.float32, g, -9, 9), [0, 2, 3, 1])
    check("aten::trunc.out", torch.trunc(xs), [xs], "channels-last")


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_signbit(dtype):
    g = torch.Generator().manual_seed(5)
    for shape in SHAPES:
        x = make(shape, dtype, g, -5, 5)
        check("aten::signbit.out", torch.signbit(x), [x], f"{dtype} {shape}")
    if dtype.is_floating_point:
        x = torch.tensor([0.0, -0.0, math.inf, -math.inf, -1e-30, math.nan, -math.nan]).to(dtype)
        check("aten::signbit.out", torch.signbit(x), [x], "edges")


def test_unary_math_rejects_bad_arguments():
    x = torch.rand(3, 4)
    with pytest.raises(RuntimeError, match=r"aten::acos.out: .*shape"):
        run_kernel("aten::acos.out", [x, torch.empty(4, 3)])
    with pytest.raises(RuntimeError, match="aten::log2.out: dtype"):
        run_kernel("aten::log2.out", [x, torch.empty(3, 4, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="aten::signbit.out: out dtype must be Bool"):
        run_kernel("aten::signbit.out", [x, torch.empty(3, 4)])
    with pytest.raises(RuntimeError, match="aten::trunc.out"):
        run_kernel("aten::trunc.out", [x, torch.empty(3, 4, dtype=torch.bool)])


BROADCASTS = [((3, 4), (3, 4)), ((2, 1, 5), (4, 1)), ((), (3,)), ((0, 2), (2,)), ((5,), ())]


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.bool])
@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_atan2(dtype, sa, sb):
    g = torch.Generator().manual_seed(6)
    a, b = make(sa, dtype, g, -5, 5), make(sb, dtype, g, -5, 5)
    check("aten::atan2.out", torch.atan2(a, b), [a, b], f"{dtype} {sa} {sb}")


def test_atan2_edges_and_mixed_dtypes():
    vals = torch.tensor([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan])
    a, b = vals[:, None], vals[None, :]  # every pair
    out = check("aten::atan2.out", torch.atan2(a, b), [a, b], "edges")
    assert torch.equal(torch.signbit(out), torch.signbit(torch.atan2(a, b)))
    x, y = torch.rand(3, 4) - 0.5, torch.rand(4, dtype=torch.float64) - 0.5
    check("aten::atan2.out", torch.atan2(x, y), [x, y], "float32 x float64")
    xs = with_dim_order(torch.rand(2, 3, 4, 5), [0, 2, 3, 1])
    check("aten::atan2.out", torch.atan2(xs, xs.transpose(2, 3).contiguous().transpose(2, 3)),
          [xs, xs.transpose(2, 3).contiguous().transpose(2, 3)], "dim orders")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_hypot(dtype, sa, sb):
    g = torch.Generator().manual_seed(7)
    a, b = make(sa, dtype, g, -5, 5), make(sb, dtype, g, -5, 5)
    check("aten::hypot.out", torch.hypot(a, b), [a, b], f"{dtype} {sa} {sb}")


def test_hypot_edges_and_rejects_integers():
    a = torch.tensor([1e300, 3.0, math.inf, math.nan, 0.0], dtype=torch.float64)
    b = torch.tensor([1e300, 4.0, math.nan, 1.0, -0.0], dtype=torch.float64)
    check("aten::hypot.out", torch.hypot(a, b), [a, b], "no overflow, inf beats nan")
    i = torch.arange(4, dtype=torch.int32)
    with pytest.raises(RuntimeError, match="aten::hypot.out: floating inputs only"):
        run_kernel("aten::hypot.out", [i, i, torch.empty(4)])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.uint8, torch.bool])
@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_copysign(dtype, sa, sb):
    g = torch.Generator().manual_seed(8)
    a, b = make(sa, dtype, g, -5, 5), make(sb, dtype, g, -5, 5)
    check("aten::copysign.out", torch.copysign(a, b), [a, b], f"{dtype} {sa} {sb}")
    for s in (-2.0, 0.0, -0.0, 3):
        check("aten::copysign.Scalar_out", torch.copysign(a, s), [a, s], f"scalar {s}")


def test_copysign_signed_zero():
    a = torch.tensor([1.0, 2.0, 0.0, math.inf, math.nan])
    b = torch.tensor([-0.0, 0.0, -1.0, -0.0, -1.0])
    out = check("aten::copysign.out", torch.copysign(a, b), [a, b])
    assert torch.equal(torch.signbit(out), torch.signbit(torch.copysign(a, b)))


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("sa,sb", BROADCASTS)
def test_floor_divide(dtype, sa, sb):
    g = torch.Generator().manual_seed(9)
    a = make(sa, dtype, g, -20, 20)
    b = make(sb, dtype, g, 1, 7)
    if not dtype.is_floating_point and dtype != torch.uint8:
        b = b * torch.where(make(sb, torch.bool, g), 1, -1).to(dtype)  # negative divisors too
    check("aten::floor_divide.out", torch.floor_divide(a, b), [a, b], f"{dtype} {sa} {sb}")
    check("aten::floor_divide.Scalar_out", torch.floor_divide(a, 3), [a, 3], f"{dtype} scalar")
    if dtype.is_floating_point:
        check("aten::floor_divide.Scalar_out", torch.floor_divide(a, -2.5), [a, -2.5], "float")


def test_floor_divide_edges_and_errors():
    a = torch.tensor([5.0, -5.0, 0.0, -0.0, 1.0, -1.0, math.inf, math.nan])
    b = torch.tensor([0.0, 0.0, 0.0, 3.0, -math.inf, math.inf, 2.0, 1.0])
    check("aten::floor_divide.out", torch.floor_divide(a, b), [a, b], "float edges")
    i = torch.tensor([-128, 127, -7], dtype=torch.int8)
    m = torch.tensor([-1, -1, 2], dtype=torch.int8)
    check("aten::floor_divide.out", torch.floor_divide(i, m), [i, m], "int8 wrap")
    check("aten::floor_divide.out", torch.floor_divide(i, m.long()), [i, m.long()], "mixed")
    with pytest.raises(RuntimeError, match="aten::floor_divide.out: integer division by zero"):
        run_kernel("aten::floor_divide.out", [i, torch.zeros(3, dtype=torch.int8), torch.empty_like(i)])
    with pytest.raises(RuntimeError, match="aten::floor_divide.Scalar_out: integer division by zero"):
        run_kernel("aten::floor_divide.Scalar_out", [i, 0, torch.empty_like(i)])
    t = torch.tensor([True, False])
    with pytest.raises(RuntimeError, match="aten::floor_divide.out: not supported for bool"):
        run_kernel("aten::floor_divide.out", [t, t, torch.empty_like(t)])


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_rsub_scalar(dtype):
    g = torch.Generator().manual_seed(10)
    for shape in SHAPES:
        x = make(shape, dtype, g, 0, 20)
        check("aten::rsub.Scalar_out", torch.rsub(x, 7, alpha=2), [x, 7, 2], f"{dtype} {shape}")
        if dtype.is_floating_point:
            check("aten::rsub.Scalar_out", torch.rsub(x, 1.5), [x, 1.5, 1], f"{dtype} float")
    xs = with_dim_order(make((2, 3, 4, 5), dtype, g, 0, 20), [0, 2, 3, 1])
    check("aten::rsub.Scalar_out", torch.rsub(xs, 3), [xs, 3, 1], "channels-last")


def test_rsub_scalar_wraps_and_refuses():
    x = torch.tensor([0, 1, 200], dtype=torch.uint8)
    check("aten::rsub.Scalar_out", torch.rsub(x, 5), [x, 5, 1], "uint8 wraps")
    with pytest.raises(RuntimeError, match="aten::rsub.Scalar_out: subtraction is not supported for bool"):
        t = torch.tensor([True])
        run_kernel("aten::rsub.Scalar_out", [t, 1, 1, torch.empty_like(t)])
    with pytest.raises(RuntimeError, match="aten::rsub.Scalar_out: a floating scalar needs a floating out"):
        run_kernel("aten::rsub.Scalar_out", [x, 1.5, 1, torch.empty_like(x)])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
def test_erfinv(dtype):
    g = torch.Generator().manual_seed(11)
    for shape in SHAPES:
        x = make(shape, dtype, g, -0.999, 0.999) if dtype.is_floating_point else make(shape, dtype, g, 0, 1)
        check("aten::erfinv.out", torch.erfinv(x), [x], f"{dtype} {shape}")
    if dtype == torch.float64:
        # Tails (where the approximation switches branch) and the exact ends.
        x = torch.tensor([-1.0, 1.0, 1.5, -2.0, 0.0, -0.0, 1 - 1e-12, -(1 - 1e-15), 1e-300,
                          0.9999, math.nan], dtype=dtype)
        out = check("aten::erfinv.out", torch.erfinv(x), [x], "edges")
        assert torch.equal(torch.signbit(out[4:6]), torch.tensor([False, True]))
