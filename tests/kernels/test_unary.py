"""Unary and activation kernels against torch: dtypes, dim orders, 0-d and 0-size tensors.

Tolerances: float32 and float64 within 1e-6 relative / 1e-6 absolute (results may differ from
torch's vectorised math by an ulp or two; float32 exp/tanh/erf/sigmoid are also checked within
2-4 ulp of float64 over their whole range); float16 within 2e-3 / 1e-3 and bfloat16 within
1.6e-2 / 1e-2 (one ulp of the storage type, as both compute in float and round); integer and
bool results exact.
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

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


def check_unary(name, fn, x, out=None, what=""):
    expected = fn(x)
    if out is None:
        out = torch.empty_like(expected, memory_format=torch.contiguous_format)
    run_kernel(name, [x, out])
    atol, rtol = tolerance(expected.dtype)
    assert_close(
        out, expected, atol=atol, rtol=rtol, what=f"{name} {what} {x.dtype} {tuple(x.shape)}"
    )


# op -> (torch function, input dtypes, input range). Ranges keep results finite.
MATH = {
    "exp": (torch.exp, (-4, 4)),
    "log": (torch.log, (0.1, 9)),
    "sqrt": (torch.sqrt, (0, 9)),
    "rsqrt": (torch.rsqrt, (0.1, 9)),
    "sin": (torch.sin, (-7, 7)),
    "cos": (torch.cos, (-7, 7)),
    "erf": (torch.erf, (-3, 3)),
    "tanh": (torch.tanh, (-5, 5)),
    "reciprocal": (torch.reciprocal, (0.5, 9)),
    "sigmoid": (torch.sigmoid, (-9, 9)),
}

ACTIVATIONS = {
    "silu": torch.nn.functional.silu,
    "hardswish": torch.nn.functional.hardswish,
    "hardsigmoid": torch.nn.functional.hardsigmoid,
}

REAL_OPS = {
    "neg": torch.neg,
    "abs": torch.abs,
    "relu": torch.relu,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "round": torch.round,
}


@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("dtype", FLOATS)
def test_math_float(name, dtype):
    fn, (low, high) = MATH[name]
    g = torch.Generator().manual_seed(1)
    for shape in SHAPES:
        check_unary(f"aten::{name}.out", fn, make(shape, dtype, g, low, high))


@pytest.mark.parametrize("name", sorted(MATH))
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8, torch.bool])
def test_math_integer_inputs_give_float(name, dtype):
    fn, (low, high) = MATH[name]
    g = torch.Generator().manual_seed(2)
    x = make((4, 6), dtype, g, max(low, 1), high)  # torch's result dtype is float32
    check_unary(f"aten::{name}.out", fn, x)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", FLOATS)
def test_activations(name, dtype):
    g = torch.Generator().manual_seed(3)
    for shape in SHAPES:
        check_unary(f"aten::{name}.out", ACTIVATIONS[name], make(shape, dtype, g, -6, 6))


@pytest.mark.parametrize("name", sorted(REAL_OPS))
@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_real_ops(name, dtype):
    g = torch.Generator().manual_seed(4)
    for shape in SHAPES:
        x = make(shape, dtype, g, -50, 50)
        if dtype.is_floating_point:
            x = x * 0.1  # fractional values, including exact halves for round's ties
        check_unary(f"aten::{name}.out", REAL_OPS[name], x)


def test_round_half_to_even():
    x = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5])
    check_unary("aten::round.out", torch.round, x)


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_sign(dtype):
    g = torch.Generator().manual_seed(5)
    x = make((5, 7), dtype, g, -3, 3)
    if dtype.is_floating_point:
        x[0, :3] = torch.tensor([0.0, -0.0, float("nan")]).to(dtype)
    check_unary("aten::sign.out", torch.sign, x)


@pytest.mark.parametrize("dtype", INTS + [torch.bool])
def test_bitwise_not(dtype):
    g = torch.Generator().manual_seed(6)
    for shape in SHAPES:
        check_unary("aten::bitwise_not.out", torch.bitwise_not, make(shape, dtype, g, -100, 100))


@pytest.mark.parametrize("name,fn", [("isnan", torch.isnan), ("isinf", torch.isinf)])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.bool])
def test_isnan_isinf(name, fn, dtype):
    g = torch.Generator().manual_seed(7)
    x = make((3, 11), dtype, g)
    if dtype.is_floating_point:
        x[0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0]).to(dtype)
    check_unary(f"aten::{name}.out", fn, x)
    check_unary(f"aten::{name}.out", fn, x.t().contiguous().t(), what="transposed")


@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_logical_not(dtype):
    g = torch.Generator().manual_seed(8)
    x = make((4, 9), dtype, g, -2, 2)
    check_unary("aten::logical_not.out", torch.logical_not, x)
    out = torch.empty(4, 9, dtype=torch.float32)  # torch allows any out dtype
    run_kernel("aten::logical_not.out", [x, out])
    assert_close(out, torch.logical_not(x).float(), atol=0, rtol=0, what="logical_not -> float")


@pytest.mark.parametrize("name", ["exp", "sigmoid", "neg", "relu", "abs"])
@pytest.mark.parametrize("layouts", [("cl", "cl"), ("cl", "contig"), ("contig", "cl")])
def test_channels_last(name, layouts):
    fn = {**{k: v[0] for k, v in MATH.items()}, **REAL_OPS}[name]
    x = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(9))
    if layouts[0] == "cl":
        x = x.to(memory_format=torch.channels_last)
    fmt = torch.channels_last if layouts[1] == "cl" else torch.contiguous_format
    out = torch.empty(2, 3, 4, 5).to(memory_format=fmt)
    check_unary(f"aten::{name}.out", fn, x, out=out, what=str(layouts))
    assert out.is_contiguous(memory_format=fmt)


def test_relu_propagates_nan():
    x = torch.tensor([float("nan"), -1.0, 2.0])
    out = torch.empty(3)
    run_kernel("aten::relu.out", [x, out])
    torch.testing.assert_close(out, torch.relu(x), equal_nan=True)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu(approximate, dtype):
    g = torch.Generator().manual_seed(10)
    for shape in SHAPES:
        x = make(shape, dtype, g, -6, 6)
        expected = torch.nn.functional.gelu(x, approximate=approximate)
        out = torch.empty_like(expected)
        run_kernel("aten::gelu.out", [x, approximate, out])
        atol, rtol = tolerance(dtype)
        assert_close(out, expected, atol=atol, rtol=rtol, what=f"gelu {approximate} {shape}")


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.0, 6.0), (0, 6), (-0.5, 0.25)])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64])
def test_hardtanh(bounds, dtype):
    g = torch.Generator().manual_seed(11)
    x = make((3, 4, 5), dtype, g, -9, 9)
    expected = torch.nn.functional.hardtanh(x, *bounds)
    out = torch.empty_like(expected)
    run_kernel("aten::hardtanh.out", [x, bounds[0], bounds[1], out])
    atol, rtol = tolerance(dtype)
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"hardtanh {bounds}")


@pytest.mark.parametrize("slope", [0.01, 0.2, 1.5])
@pytest.mark.parametrize("dtype", FLOATS)
def test_leaky_relu(slope, dtype):
    x = make((6, 7), dtype, torch.Generator().manual_seed(12))
    expected = torch.nn.functional.leaky_relu(x, slope)
    out = torch.empty_like(expected)
    run_kernel("aten::leaky_relu.out", [x, slope, out])
    atol, rtol = tolerance(dtype)
    assert_close(out, expected, atol=atol, rtol=rtol, what="leaky_relu")


@pytest.mark.parametrize(
    "params", [(1.0, 1.0, 1.0), (0.5, 2.0, 1.5), (1.6732632423543772, 1.0507009873554805, 1.0)]
)
@pytest.mark.parametrize("dtype", FLOATS)
def test_elu(params, dtype):
    x = make((5, 8), dtype, torch.Generator().manual_seed(13))
    expected = torch.ops.aten.elu(x, *params)
    out = torch.empty_like(expected)
    run_kernel("aten::elu.out", [x, *params, out])
    atol, rtol = tolerance(dtype)
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"elu {params}")


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (None, 0.5), (-0.5, None), (2.0, -2.0), (-2, 3)])
@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64, torch.uint8])
def test_clamp_scalar(bounds, dtype):
    g = torch.Generator().manual_seed(14)
    x = make((4, 5, 3), dtype, g, -5, 5)
    expected = torch.clamp(x, *bounds)  # float bounds on an int tensor give a float result
    out = torch.empty_like(expected)
    run_kernel("aten::clamp.out", [x, bounds[0], bounds[1], out])
    atol, rtol = tolerance(expected.dtype)
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"clamp {bounds}")


def test_clamp_nan():
    x = torch.tensor([float("nan"), -3.0, 3.0])
    out = torch.empty(3)
    run_kernel("aten::clamp.out", [x, -1.0, 1.0, out])
    torch.testing.assert_close(out, torch.clamp(x, -1.0, 1.0), equal_nan=True)


@pytest.mark.parametrize("which", ["both", "min", "max"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
def test_clamp_tensor_broadcast(which, dtype):
    g = torch.Generator().manual_seed(15)
    x = make((2, 3, 4), dtype, g, -5, 5)
    lo = make((3, 1), dtype, g, -3, 0)
    hi = make((4,), dtype, g, 0, 3)
    lo_arg = lo if which in ("both", "min") else None
    hi_arg = hi if which in ("both", "max") else None
    expected = torch.clamp(x, lo_arg, hi_arg)
    out = torch.empty_like(expected)
    run_kernel("aten::clamp.Tensor_out", [x, lo_arg, hi_arg, out])
    atol, rtol = tolerance(dtype)
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"clamp.Tensor {which}")


def test_clamp_tensor_mixed_dtypes():
    x = torch.arange(-6, 6, dtype=torch.int32).reshape(3, 4)
    lo = torch.tensor([-2.5])
    hi = torch.tensor([[1.5], [2.5], [3.5]], dtype=torch.float64)
    expected = torch.clamp(x, lo, hi)
    out = torch.empty_like(expected)
    run_kernel("aten::clamp.Tensor_out", [x, lo, hi, out])
    assert_close(out, expected, atol=1e-12, rtol=0, what="clamp.Tensor mixed")


def test_clamp_tensor_one_bound_on_bool():
    # torch's clamp_min/clamp_max take bool (or and and); clamp with both bounds refuses it.
    x = torch.tensor([[True, False], [True, False]])
    bound = torch.tensor([True, False])
    for lo, hi in [(bound, None), (None, bound)]:
        expected = torch.clamp(x, lo, hi)
        out = torch.empty_like(expected)
        run_kernel("aten::clamp.Tensor_out", [x, lo, hi, out])
        assert torch.equal(out, expected), (lo, hi)
    with pytest.raises(RuntimeError, match="aten::clamp.Tensor_out: dtypes bool"):
        run_kernel("aten::clamp.Tensor_out", [x, bound, bound, torch.empty_like(x)])


def test_in_place_aliasing():
    x = torch.randn(3, 7)
    expected = torch.exp(x)
    run_kernel("aten::exp.out", [x, x])
    assert_close(x, expected, atol=1e-6, rtol=1e-6, what="exp in place")


# Bad inputs: each must raise RuntimeError naming the op.
def test_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match=r"aten::exp\.out"):
        run_kernel("aten::exp.out", [torch.randn(2, 3), torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match=r"aten::relu\.out"):
        run_kernel("aten::relu.out", [torch.randn(2, 3), torch.empty(2, 3, 1)])


def test_rejects_wrong_arg_types():
    with pytest.raises(RuntimeError, match=r"aten::hardtanh\.out argument 1"):
        run_kernel("aten::hardtanh.out", [torch.randn(3), torch.randn(1), 1.0, torch.empty(3)])
    with pytest.raises(RuntimeError, match=r"aten::gelu\.out argument 1"):
        run_kernel("aten::gelu.out", [torch.randn(3), 1, torch.empty(3)])
    with pytest.raises(RuntimeError, match=r"aten::gelu\.out.*approximate"):
        run_kernel("aten::gelu.out", [torch.randn(3), "sigmoid", torch.empty(3)])
    with pytest.raises(RuntimeError, match=r"aten::neg\.out takes 2 arguments"):
        run_kernel("aten::neg.out", [torch.randn(3)])


def test_rejects_unsupported_dtypes():
    with pytest.raises(RuntimeError, match=r"aten::silu\.out.*int32"):
        run_kernel(
            "aten::silu.out", [torch.ones(3, dtype=torch.int32), torch.empty(3, dtype=torch.int32)]
        )
    with pytest.raises(
        RuntimeError, match=r"aten::exp\.out.*int64"
    ):  # a float result needs a float out
        run_kernel("aten::exp.out", [torch.ones(3), torch.empty(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match=r"aten::neg\.out.*bool"):
        run_kernel(
            "aten::neg.out", [torch.ones(3, dtype=torch.bool), torch.empty(3, dtype=torch.bool)]
        )
    with pytest.raises(RuntimeError, match=r"aten::bitwise_not\.out.*float32"):
        run_kernel("aten::bitwise_not.out", [torch.ones(3), torch.empty(3)])


def test_clamp_rejects_missing_bounds_and_float_bounds_on_int_out():
    with pytest.raises(RuntimeError, match=r"aten::clamp\.out.*min and max"):
        run_kernel("aten::clamp.out", [torch.randn(3), None, None, torch.empty(3)])
    with pytest.raises(RuntimeError, match=r"aten::clamp\.Tensor_out.*min and max"):
        run_kernel("aten::clamp.Tensor_out", [torch.randn(3), None, None, torch.empty(3)])
    x = torch.ones(3, dtype=torch.int32)
    with pytest.raises(RuntimeError, match=r"aten::clamp\.out.*floating"):
        run_kernel("aten::clamp.out", [x, 0.5, None, torch.empty(3, dtype=torch.int32)])


def ulp_error(out, reference):
    """Error of float32 `out` in units of the last place of the float64 `reference`."""
    ref32 = reference.float()
    ulp = (torch.nextafter(ref32.abs(), torch.tensor(float("inf"))) - ref32.abs()).double()
    ulp = ulp.clamp(min=2.0**-149)
    return ((out.double() - reference).abs() / ulp).nan_to_num(0.0)


@pytest.mark.parametrize(
    "name,fn,low,high,max_ulp",
    [
        ("exp", torch.exp, -105.0, 90.0, 2),
        ("tanh", torch.tanh, -12.0, 12.0, 2),
        ("erf", torch.erf, -5.0, 5.0, 3),
        ("sigmoid", torch.sigmoid, -87.0, 100.0, 4),  # below -87 the result is subnormal
    ],
)
def test_float32_math_accuracy(name, fn, low, high, max_ulp):
    """The vectorisable float32 exp/tanh/erf stay within a few ulp of the float64 result over
    their whole range, and keep NaN, infinities and signed zeros."""
    x = torch.cat(
        [
            torch.linspace(low, high, 400001),
            torch.linspace(-1, 1, 100001),
            torch.tensor([0.0, -0.0, 1e-30, -1e-30, float("inf"), -float("inf"), float("nan")]),
        ]
    )
    out = torch.empty_like(x)
    run_kernel(f"aten::{name}.out", [x, out])
    reference = fn(x.double())
    finite = reference.isfinite()
    assert ulp_error(out[finite], reference[finite]).max() <= max_ulp
    torch.testing.assert_close(out[~finite], reference[~finite].float(), equal_nan=True)
    assert torch.equal(out[x == 0].signbit(), reference[x == 0].signbit()) or name in (
        "exp",
        "sigmoid",
    )
