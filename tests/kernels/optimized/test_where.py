"""The optimized library's float32 where and masked_fill against torch, bit for bit (a select
moves values), at 1 and 2 threads: operands broadcast every way a model makes them (an
attention mask over heads, a scalar other, a row broadcast along the last dim), NaN and
infinities carried, sizes past the threading threshold; and what goes to the portable kernels
(other dtypes, a non-contiguous condition, a value beyond float) gives the portable results and
errors."""

import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


def same(got, want):
    return torch.equal(got.nan_to_num(7.0), want.nan_to_num(7.0))


def special(shape):
    x = torch.randn(shape, generator=GEN)
    flat = x.view(-1)
    flat[::97] = float("nan")
    flat[1::89] = float("inf")
    flat[2::83] = -0.0
    return x


def mask(shape):
    return torch.rand(shape, generator=GEN) > 0.5


WHERE_SHAPES = [  # cond, self, other
    ((2, 1, 64, 64), (2, 8, 64, 64), ()),  # attention mask over heads, a scalar other
    ((3, 5, 7), (3, 5, 7), (3, 5, 7)),  # tails shorter than a vector
    ((1100, 1000), (1100, 1000), (1100, 1000)),  # past the threading threshold
    ((1100, 1000), (), (1100, 1000)),  # where(c, 0, x)
    ((1100, 1000), (1100, 1), (1000,)),  # self broadcast along the row, other across rows
    ((33,), (4, 33), (4, 1)),
]


@pytest.mark.parametrize("shapes", WHERE_SHAPES, ids=str)
def test_where_matches_torch(threads, shapes):
    c, x, y = mask(shapes[0]), special(shapes[1]), special(shapes[2])
    want = torch.where(c, x, y)
    out = torch.empty_like(want)
    run_kernel("aten::where.self_out", [c, x, y, out], library="optimized")
    assert same(out, want)


@pytest.mark.parametrize("shapes", [((2, 8, 64, 64), (2, 1, 64, 64)), ((1100, 1000), (1100, 1000)),
                                    ((5, 13), (13,))], ids=str)
@pytest.mark.parametrize("value", [float("-inf"), -1e9, 0.0, float("nan")])
def test_masked_fill_matches_torch(threads, shapes, value):
    x, m = special(shapes[0]), mask(shapes[1])
    want = x.masked_fill(m, value)
    out = torch.empty_like(want)
    run_kernel("aten::masked_fill.Scalar_out", [x, m, value, out], library="optimized")
    assert same(out, want)
    run_kernel("aten::masked_fill.Tensor_out", [x, m, torch.tensor(value), out], library="optimized")
    assert same(out, want)


def test_other_dtypes_and_layouts_give_the_portable_results():
    c = mask((40, 30))
    x, y = special((40, 30)), special((40, 30))
    cases = [
        [c.t(), x.t(), y.t()],  # transposed everything: the row steps are not 1
        [c.t().contiguous().t(), x, y],  # a non-contiguous condition
        [c, x.double(), y],  # mixed dtypes
        [c, x.int(), y.int()],
    ]
    for args in cases:
        want = torch.where(*args)
        got, portable = torch.empty_like(want), torch.empty_like(want)
        run_kernel("aten::where.self_out", [*args, got], library="optimized")
        run_kernel("aten::where.self_out", [*args, portable])
        assert same(got, portable) and same(got, want), [a.dtype for a in args]


def test_bad_arguments_get_the_portable_errors():
    x, m, out = special((4, 5)), mask((4, 5)), torch.empty(4, 5)
    with pytest.raises(RuntimeError, match="masked_fill"):
        run_kernel("aten::masked_fill.Scalar_out", [x, m, 1e39, out], library="optimized")
    with pytest.raises(RuntimeError, match="masked_fill"):  # the value must be 0-d
        run_kernel("aten::masked_fill.Tensor_out", [x, m, torch.zeros(2), out], library="optimized")
    with pytest.raises(RuntimeError, match="where"):  # shapes that do not broadcast
        run_kernel("aten::where.self_out", [m, x, torch.zeros(3), out], library="optimized")
    with pytest.raises(RuntimeError, match="where"):  # a float condition
        run_kernel("aten::where.self_out", [x, x, x, out], library="optimized")
