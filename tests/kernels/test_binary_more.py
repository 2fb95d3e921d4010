"""Binary arithmetic kernels (sub, mul, div, pow, maximum, minimum, remainder, fmod and the
Scalar forms) against torch: broadcasting, dtypes, dim orders, 0-d and 0-size tensors.

Tolerances: float32/float64 within 1e-6 relative and absolute (pow 1e-5 relative: powf may
differ from torch's vectorised pow by a few ulp), float16 within 2e-3 / 1e-3, bfloat16 within
1.6e-2 / 1e-2 (one ulp of the storage type); integer results exact.
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((5, 1, 7), (1, 6, 1)),
    ((1,), (3, 2)),
    ((), (2, 2)),
    ((), ()),
    ((0, 3), (1, 3)),
    ((2, 1, 4, 5), (3, 1, 1)),
]
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.int8, torch.int32, torch.int64, torch.uint8]


def tolerance(dtype, rtol32=1e-6):
    if dtype == torch.float16:
        return 1e-3, 2e-3
    if dtype == torch.bfloat16:
        return 1e-2, 1.6e-2
    if dtype.is_floating_point:
        return 1e-6, rtol32
    return 0, 0


def make(shape, dtype, g, low=-9, high=9, nonzero=False):
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        x = torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low
        if nonzero:
            x = torch.where(x.abs() < 0.25, torch.full_like(x, 0.5), x)
        return x.to(dtype)
    low = max(low, 0) if dtype == torch.uint8 else low
    x = torch.randint(low, high + 1, shape, generator=g)
    if nonzero:
        x = torch.where(x == 0, torch.ones_like(x), x)
    return x.to(dtype)


def check(name, args, expected, rtol32=1e-6, what=""):
    out = torch.empty_like(expected)
    run_kernel(name, [*args, out])
    atol, rtol = tolerance(expected.dtype, rtol32)
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"{name} {what}")
    return out


# name -> (torch function, dtypes, needs a nonzero right operand)
TENSOR_OPS = {
    "aten::mul.out": (torch.mul, FLOATS + INTS + [torch.bool], False),
    "aten::div.out": (torch.div, FLOATS, True),
    "aten::maximum.out": (torch.maximum, FLOATS + INTS + [torch.bool], False),
    "aten::minimum.out": (torch.minimum, FLOATS + INTS + [torch.bool], False),
    "aten::remainder.Tensor_out": (torch.remainder, FLOATS + INTS, True),
    "aten::fmod.Tensor_out": (torch.fmod, FLOATS + INTS, True),
}


@pytest.mark.parametrize("name", sorted(TENSOR_OPS))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_tensor_ops_broadcast(name, sa, sb):
    fn, dtypes, nonzero = TENSOR_OPS[name]
    g = torch.Generator().manual_seed(0)
    for dtype in dtypes:
        a, b = make(sa, dtype, g), make(sb, dtype, g, nonzero=nonzero)
        check(name, [a, b], fn(a, b), what=f"{dtype} {sa} {sb}")


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_sub_alpha(sa, sb, dtype):
    g = torch.Generator().manual_seed(1)
    a, b = make(sa, dtype, g), make(sb, dtype, g)
    alpha = 0.5 if dtype.is_floating_point else 3
    check("aten::sub.out", [a, b, alpha], torch.sub(a, b, alpha=alpha), what=f"{dtype}")


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.int8])
def test_div_rounding_modes(mode, dtype):
    g = torch.Generator().manual_seed(2)
    for sa, sb in SHAPES:
        if mode is None and not dtype.is_floating_point:
            continue  # true division of integers is covered by test_div_promotes_integers
        a, b = make(sa, dtype, g, -20, 20), make(sb, dtype, g, -6, 6, nonzero=True)
        check(
            "aten::div.out_mode",
            [a, b, mode],
            torch.div(a, b, rounding_mode=mode),
            what=f"{mode} {dtype}",
        )


def test_div_floor_signed_zero_and_inf():
    a = torch.tensor([1.0, -1.0, 0.0, -0.0, 5.0, -5.0, 7.5])
    b = torch.tensor([0.0, 0.0, 3.0, 3.0, -2.0, 2.0, 2.5])
    out = torch.empty(7)
    run_kernel("aten::div.out_mode", [a, b, "floor", out])
    expected = torch.div(a, b, rounding_mode="floor")
    torch.testing.assert_close(out, expected, equal_nan=True)
    assert torch.equal(torch.signbit(out), torch.signbit(expected))


def test_div_integer_min_by_minus_one_does_not_trap():
    a = torch.tensor([-(2**31), 7], dtype=torch.int32)
    b = torch.tensor([-1, -1], dtype=torch.int32)
    check("aten::div.out_mode", [a, b, "floor"], torch.div(a, b, rounding_mode="floor"))
    # torch itself traps here (SIGFPE); the result wraps like its floor mode does.
    check("aten::div.out_mode", [a, b, "trunc"], torch.tensor([-(2**31), -7], dtype=torch.int32))
    check("aten::remainder.Tensor_out", [a, b], torch.remainder(a, b))


def test_div_promotes_integers():
    a = torch.tensor([[7, -7, 3]], dtype=torch.int64)
    b = torch.tensor([[2], [-4]], dtype=torch.int32)
    check("aten::div.out", [a, b], torch.div(a, b), what="int/int -> float")


def test_mixed_dtypes_promote():
    g = torch.Generator().manual_seed(3)
    a = make((3, 4), torch.int64, g)
    b = make((4,), torch.float32, g, nonzero=True)
    check("aten::mul.out", [a, b], a * b)
    check("aten::sub.out", [a, b, 2], torch.sub(a, b, alpha=2))
    check("aten::div.out", [b, a.clamp(1, 5)], b / a.clamp(1, 5))
    check("aten::maximum.out", [a, b], torch.maximum(a, b))
    h = make((3, 4), torch.float16, g)
    check("aten::mul.out", [h, b], h * b)
    m = make((3, 1), torch.bool, g)
    check("aten::mul.out", [b, m], b * m)


@pytest.mark.parametrize("name", ["aten::mul.out", "aten::maximum.out", "aten::sub.out"])
@pytest.mark.parametrize(
    "layouts", [("cl", "cl", "cl"), ("cl", "contig", "contig"), ("contig", "contig", "cl")]
)
def test_channels_last(name, layouts):
    g = torch.Generator().manual_seed(4)
    fmt = {"cl": torch.channels_last, "contig": torch.contiguous_format}
    a = torch.randn(2, 3, 4, 5, generator=g).to(memory_format=fmt[layouts[0]])
    b = torch.randn(2, 3, 4, 5, generator=g).to(memory_format=fmt[layouts[1]])
    out = torch.empty(2, 3, 4, 5).to(memory_format=fmt[layouts[2]])
    extra = [1] if name == "aten::sub.out" else []
    fn = {
        "aten::mul.out": torch.mul,
        "aten::maximum.out": torch.maximum,
        "aten::sub.out": torch.sub,
    }[name]
    run_kernel(name, [a, b, *extra, out])
    assert_close(out, fn(a, b), atol=1e-6, rtol=1e-6, what=f"{name} {layouts}")


def test_channels_last_broadcast_bias():
    x = torch.randn(2, 8, 3, 3).to(memory_format=torch.channels_last)
    bias = torch.randn(8, 1, 1)
    out = torch.empty(2, 8, 3, 3).to(memory_format=torch.channels_last)
    run_kernel("aten::mul.out", [x, bias, out])
    assert_close(out, x * bias, atol=1e-6, rtol=1e-6, what="channels-last * per-channel")


def test_maximum_minimum_propagate_nan():
    a = torch.tensor([float("nan"), 1.0, 2.0, float("nan")])
    b = torch.tensor([0.0, float("nan"), 1.0, float("nan")])
    for name, fn in [("aten::maximum.out", torch.maximum), ("aten::minimum.out", torch.minimum)]:
        out = torch.empty(4)
        run_kernel(name, [a, b, out])
        torch.testing.assert_close(out, fn(a, b), equal_nan=True)


SCALARS = [2, -3, 0.5, -2.25, True]


@pytest.mark.parametrize("scalar", SCALARS)
@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_scalar_ops(scalar, dtype):
    g = torch.Generator().manual_seed(5)
    x = make((3, 5), dtype, g)
    cases = [
        ("aten::mul.Scalar_out", [x, scalar], lambda: torch.mul(x, scalar)),
        ("aten::add.Scalar_out", [x, scalar, 2], lambda: torch.ops.aten.add.Scalar(x, scalar, 2)),
        ("aten::sub.Scalar_out", [x, scalar, 1], lambda: torch.ops.aten.sub.Scalar(x, scalar, 1)),
        ("aten::div.Scalar_out", [x, scalar], lambda: torch.div(x, scalar)),
        (
            "aten::div.Scalar_mode_out",
            [x, scalar, "floor"],
            lambda: torch.div(x, scalar, rounding_mode="floor"),
        ),
        (
            "aten::div.Scalar_mode_out",
            [x, scalar, "trunc"],
            lambda: torch.div(x, scalar, rounding_mode="trunc"),
        ),
        ("aten::remainder.Scalar_out", [x, scalar], lambda: torch.remainder(x, scalar)),
        ("aten::fmod.Scalar_out", [x, scalar], lambda: torch.fmod(x, scalar)),
    ]
    for name, args, ref in cases:
        try:
            expected = ref()
        except RuntimeError:
            continue  # torch rejects this dtype/scalar pair (bool sub, bool remainder, ...)
        check(name, args, expected, what=f"{dtype} {scalar!r}")


def test_scalar_ops_zero_dim_and_empty():
    for x in [torch.tensor(3.5), torch.empty(0, 4), torch.tensor(7, dtype=torch.int64)]:
        check("aten::mul.Scalar_out", [x, 3], x * 3, what=f"{tuple(x.shape)}")
        check("aten::add.Scalar_out", [x, 2, 1], x + 2, what=f"{tuple(x.shape)}")


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float64, torch.float16, torch.int32, torch.int64]
)
def test_pow_tensor_tensor(dtype):
    g = torch.Generator().manual_seed(6)
    for sa, sb in SHAPES:
        if dtype.is_floating_point:
            a, b = make(sa, dtype, g, 0, 3), make(sb, dtype, g, -3, 3)
        else:
            a, b = make(sa, dtype, g, -4, 4), make(sb, dtype, g, -2, 6)  # negative powers too
        check("aten::pow.Tensor_Tensor_out", [a, b], torch.pow(a, b), rtol32=1e-5, what=f"{dtype}")


@pytest.mark.parametrize("exponent", [2, 3, 0, 1, 0.5, -1.5, 2.0, -2, 1.7])
@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
)
def test_pow_tensor_scalar(exponent, dtype):
    x = make((4, 6), dtype, torch.Generator().manual_seed(7), 1, 5)
    try:
        expected = torch.pow(x, exponent)
    except RuntimeError:
        with pytest.raises(RuntimeError, match=r"aten::pow\.Tensor_Scalar_out"):
            run_kernel("aten::pow.Tensor_Scalar_out", [x, exponent, torch.empty_like(x)])
        return
    check("aten::pow.Tensor_Scalar_out", [x, exponent], expected, rtol32=1e-5, what=f"{exponent}")


def test_pow_integer_overflow_wraps_like_torch():
    x = torch.tensor([3, -3, 7], dtype=torch.int32)
    check("aten::pow.Tensor_Scalar_out", [x, 25], torch.pow(x, 25))


@pytest.mark.parametrize("base", [2, 0.5, -1.5, 3])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_pow_scalar_base(base, dtype):
    e = make((3, 4), dtype, torch.Generator().manual_seed(8), 0, 4)
    if base < 0:
        e = e.round()  # a negative base to a fractional power is NaN
    check("aten::pow.Scalar_out", [base, e], torch.pow(base, e), rtol32=1e-5, what=f"{base}")


# Bad inputs: each raises RuntimeError naming the op.
def test_rejects_wrong_out_shape():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    for name in ["aten::mul.out", "aten::div.out", "aten::maximum.out"]:
        with pytest.raises(RuntimeError, match=name.replace(".", r"\.")):
            run_kernel(name, [a, b, torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match=r"aten::mul\.Scalar_out"):
        run_kernel("aten::mul.Scalar_out", [a, 2.0, torch.empty(2, 2)])


def test_rejects_wrong_arg_types():
    a = torch.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"aten::mul\.Scalar_out argument 1"):
        run_kernel("aten::mul.Scalar_out", [a, a, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::div\.out_mode argument 2"):
        run_kernel("aten::div.out_mode", [a, a, 3, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::div\.out_mode.*rounding_mode"):
        run_kernel("aten::div.out_mode", [a, a, "round", torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::sub\.out argument 2"):
        run_kernel("aten::sub.out", [a, a, None, torch.empty(2, 3)])


def test_rejects_invalid_values():
    i = torch.tensor([1, 2], dtype=torch.int32)
    z = torch.tensor([1, 0], dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"aten::div\.out_mode.*division by zero"):
        run_kernel("aten::div.out_mode", [i, z, "floor", torch.empty_like(i)])
    with pytest.raises(RuntimeError, match=r"aten::remainder\.Tensor_out.*by zero"):
        run_kernel("aten::remainder.Tensor_out", [i, z, torch.empty_like(i)])
    with pytest.raises(RuntimeError, match=r"aten::remainder\.Scalar_out.*by zero"):
        run_kernel("aten::remainder.Scalar_out", [i, 0, torch.empty_like(i)])
    with pytest.raises(
        RuntimeError, match=r"aten::div\.out.*int32"
    ):  # true division needs a float out
        run_kernel("aten::div.out", [i, i, torch.empty_like(i)])
    with pytest.raises(RuntimeError, match=r"aten::sub\.out.*bool"):
        b = torch.tensor([True, False])
        run_kernel("aten::sub.out", [b, b, 1, torch.empty_like(b)])
    with pytest.raises(RuntimeError, match=r"aten::mul\.Scalar_out.*floating"):
        run_kernel("aten::mul.Scalar_out", [i, 0.5, torch.empty_like(i)])
    with pytest.raises(RuntimeError, match=r"aten::pow\.Tensor_Scalar_out.*negative"):
        run_kernel("aten::pow.Tensor_Scalar_out", [i, -1, torch.empty_like(i)])
    with pytest.raises(RuntimeError, match="do not broadcast"):
        run_kernel("aten::maximum.out", [torch.randn(2, 3), torch.randn(4), torch.empty(2, 3)])
