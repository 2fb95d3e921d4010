"""Comparison, logical and selection kernels (eq/ne/lt/gt/le/ge, logical_and/or/xor, where,
masked_fill) against torch: broadcasting, dtypes, dim orders, 0-d and 0-size tensors.

Tolerance: all results are exact (comparisons and selections do no arithmetic).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 4), (4,)),
    ((5, 1, 7), (1, 6, 1)),
    ((), (2, 2)),
    ((), ()),
    ((0, 3), (1, 3)),
    ((2, 1, 4, 5), (3, 1, 1)),
]
DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int8,
    torch.uint8,
    torch.int32,
    torch.int64,
    torch.bool,
]
COMPARISONS = {
    "eq": torch.eq,
    "ne": torch.ne,
    "lt": torch.lt,
    "gt": torch.gt,
    "le": torch.le,
    "ge": torch.ge,
}


def make(shape, dtype, g, low=-3, high=3):
    """Small integer values so that equal elements are common."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    low = max(low, 0) if dtype == torch.uint8 else low
    x = torch.randint(low, high + 1, shape, generator=g).to(dtype)
    if dtype.is_floating_point:
        x = x * 0.5
    return x


def check_exact(name, args, expected, out=None, what=""):
    if out is None:
        out = torch.empty_like(expected, memory_format=torch.contiguous_format)
    run_kernel(name, [*args, out])
    assert_close(out, expected, atol=0, rtol=0, what=f"{name} {what}")


@pytest.mark.parametrize("op", sorted(COMPARISONS))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_compare_tensor(op, sa, sb):
    g = torch.Generator().manual_seed(0)
    for dtype in DTYPES:
        a, b = make(sa, dtype, g), make(sb, dtype, g)
        check_exact(
            f"aten::{op}.Tensor_out", [a, b], COMPARISONS[op](a, b), what=f"{dtype} {sa} {sb}"
        )


@pytest.mark.parametrize("op", sorted(COMPARISONS))
@pytest.mark.parametrize("scalar", [0, 1, -1, 0.5, 1.25, True, 257])
def test_compare_scalar(op, scalar):
    g = torch.Generator().manual_seed(1)
    for dtype in DTYPES:
        for shape in [(), (0,), (4, 5)]:
            x = make(shape, dtype, g)
            check_exact(
                f"aten::{op}.Scalar_out",
                [x, scalar],
                COMPARISONS[op](x, scalar),
                what=f"{dtype} {shape} {scalar!r}",
            )


def test_compare_scalar_rounds_to_tensor_dtype():
    x = torch.tensor([0.1, 0.2, 1 / 3], dtype=torch.float16)
    check_exact("aten::eq.Scalar_out", [x, 0.1], x == 0.1)
    y = torch.tensor([0.1, 0.3], dtype=torch.float32)
    check_exact("aten::eq.Scalar_out", [y, 0.1], y == 0.1)
    z = torch.tensor([16777217, 3], dtype=torch.int64)  # compared in float32, as torch does
    check_exact("aten::eq.Scalar_out", [z, 16777216.0], z == 16777216.0)


def test_compare_nan():
    a = torch.tensor([float("nan"), 1.0, float("nan")])
    b = torch.tensor([float("nan"), float("nan"), 1.0])
    for op, fn in COMPARISONS.items():
        check_exact(f"aten::{op}.Tensor_out", [a, b], fn(a, b), what="nan")
        check_exact(
            f"aten::{op}.Scalar_out", [a, float("nan")], fn(a, float("nan")), what="nan scalar"
        )


def test_compare_mixed_dtypes_and_non_bool_out():
    g = torch.Generator().manual_seed(2)
    a = make((3, 4), torch.int64, g)
    b = make((4,), torch.float32, g)
    check_exact("aten::lt.Tensor_out", [a, b], a < b, what="int64 < float32")
    out = torch.empty(3, 4, dtype=torch.float32)  # torch writes 0/1 into a non-bool out
    check_exact("aten::ge.Tensor_out", [a, b], (a >= b).float(), out=out, what="float out")
    out = torch.empty(3, 4, dtype=torch.int32)
    check_exact("aten::ne.Scalar_out", [a, 1], (a != 1).int(), out=out, what="int out")


@pytest.mark.parametrize(
    "layouts", [("cl", "contig", "contig"), ("contig", "cl", "cl"), ("cl", "cl", "cl")]
)
def test_compare_channels_last(layouts):
    fmt = {"cl": torch.channels_last, "contig": torch.contiguous_format}
    g = torch.Generator().manual_seed(3)
    a = make((2, 3, 4, 5), torch.float32, g).to(memory_format=fmt[layouts[0]])
    b = make((2, 3, 4, 5), torch.float32, g).to(memory_format=fmt[layouts[1]])
    out = torch.empty(2, 3, 4, 5, dtype=torch.bool).to(memory_format=fmt[layouts[2]])
    check_exact("aten::le.Tensor_out", [a, b], a <= b, out=out, what=str(layouts))
    out = torch.empty(2, 3, 4, 5, dtype=torch.bool).to(memory_format=fmt[layouts[2]])
    check_exact("aten::gt.Scalar_out", [a, 0.5], a > 0.5, out=out, what=str(layouts))


LOGICAL = {
    "logical_and": torch.logical_and,
    "logical_or": torch.logical_or,
    "logical_xor": torch.logical_xor,
}


@pytest.mark.parametrize("op", sorted(LOGICAL))
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_logical(op, sa, sb):
    g = torch.Generator().manual_seed(4)
    for dtype in [torch.bool, torch.float32, torch.int64, torch.float16]:
        a, b = make(sa, dtype, g), make(sb, dtype, g)
        check_exact(f"aten::{op}.out", [a, b], LOGICAL[op](a, b), what=f"{dtype}")
    a, b = make(sa, torch.int32, g), make(sb, torch.float32, g)
    check_exact(f"aten::{op}.out", [a, b], LOGICAL[op](a, b), what="int32, float32")


WHERE_SHAPES = [
    ((3, 4), (3, 4), (3, 4)),
    ((3, 1), (1, 4), (4,)),
    ((2, 3, 4), (), (3, 1)),
    ((), (5,), ()),
    ((), (), ()),
    ((0, 2), (1, 2), (2,)),
    ((2, 1, 4, 1), (3, 1, 5), (1,)),
]


@pytest.mark.parametrize("sc,sx,sy", WHERE_SHAPES)
def test_where(sc, sx, sy):
    g = torch.Generator().manual_seed(5)
    for dtype in [torch.float32, torch.float16, torch.int64, torch.int8, torch.bool, torch.float64]:
        c = make(sc, torch.bool, g)
        x, y = make(sx, dtype, g), make(sy, dtype, g)
        check_exact("aten::where.self_out", [c, x, y], torch.where(c, x, y), what=f"{dtype}")


def test_where_mixed_dtypes():
    g = torch.Generator().manual_seed(6)
    c = make((3, 4), torch.bool, g)
    x = make((3, 4), torch.int64, g)
    y = make((4,), torch.float32, g)
    check_exact("aten::where.self_out", [c, x, y], torch.where(c, x, y))


def test_where_channels_last():
    g = torch.Generator().manual_seed(7)
    c = make((2, 3, 4, 5), torch.bool, g).to(memory_format=torch.channels_last)
    x = torch.randn(2, 3, 4, 5, generator=g)
    y = torch.randn(1, 3, 1, 1, generator=g)
    out = torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)
    check_exact("aten::where.self_out", [c, x, y], torch.where(c, x, y), out=out)


@pytest.mark.parametrize(
    "ss,sm",
    [
        ((3, 4), (3, 4)),
        ((3, 4), (4,)),
        ((2, 1, 5), (3, 1)),
        ((), ()),
        ((0, 4), (4,)),
        ((4,), (2, 4)),
    ],
)
@pytest.mark.parametrize("value", [-1, 0.5, True, float("-inf")])
def test_masked_fill(ss, sm, value):
    g = torch.Generator().manual_seed(8)
    for dtype in [
        torch.float32,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int8,
        torch.bool,
    ]:
        if dtype in (torch.int64, torch.int8) and isinstance(value, float):
            continue  # torch refuses to fill an integer tensor with a float
        x, m = make(ss, dtype, g), make(sm, torch.bool, g)
        check_exact(
            "aten::masked_fill.Scalar_out",
            [x, m, value],
            torch.masked_fill(x, m, value),
            what=f"{dtype} {value!r}",
        )


def test_masked_fill_attention_mask_channels_last():
    scores = torch.randn(2, 4, 6, 6).to(memory_format=torch.channels_last)
    mask = torch.ones(6, 6, dtype=torch.bool).triu(1)
    out = torch.empty(2, 4, 6, 6).to(memory_format=torch.channels_last)
    check_exact(
        "aten::masked_fill.Scalar_out",
        [scores, mask, float("-inf")],
        scores.masked_fill(mask, float("-inf")),
        out=out,
    )


# Bad inputs: each raises RuntimeError naming the op.
def test_rejects_bad_inputs():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"aten::eq\.Tensor_out"):
        run_kernel("aten::eq.Tensor_out", [a, b, torch.empty(3, 2, dtype=torch.bool)])
    with pytest.raises(RuntimeError, match=r"aten::lt\.Scalar_out argument 1"):
        run_kernel("aten::lt.Scalar_out", [a, b, torch.empty(2, 3, dtype=torch.bool)])
    with pytest.raises(RuntimeError, match=r"aten::logical_and\.out"):
        run_kernel(
            "aten::logical_and.out", [a, torch.randn(4), torch.empty(2, 3, dtype=torch.bool)]
        )
    with pytest.raises(RuntimeError, match=r"aten::where\.self_out.*condition must be bool"):
        run_kernel("aten::where.self_out", [torch.ones(2, 3), a, b, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::where\.self_out"):
        run_kernel(
            "aten::where.self_out", [torch.ones(2, 3, dtype=torch.bool), a, b, torch.empty(2, 4)]
        )
    with pytest.raises(RuntimeError, match=r"aten::masked_fill\.Scalar_out.*mask must be bool"):
        run_kernel("aten::masked_fill.Scalar_out", [a, torch.ones(2, 3), 0.0, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::masked_fill\.Scalar_out.*overflow"):
        x = torch.zeros(3, dtype=torch.int8)
        run_kernel(
            "aten::masked_fill.Scalar_out",
            [x, torch.ones(3, dtype=torch.bool), 300, torch.empty_like(x)],
        )
