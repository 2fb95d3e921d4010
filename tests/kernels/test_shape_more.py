"""flip, roll, tril, triu, unfold_copy, diagonal_copy, as_strided_copy, narrow_copy,
repeat_interleave.Tensor, view_copy.dtype, masked_fill.Tensor, cumprod, cummax, cummin,
logcumsumexp, searchsorted and bucketize against torch: every
dtype, non-contiguous dim orders in and out, 0-d and empty tensors, and malformed arguments
(bad dims, sizes, offsets) failing with one-line errors.

Tolerance: none for the data-movement, search and cummax/cummin ops (exact); cumprod float32
1e-5 relative (exact for integers, which wrap like torch's); logcumsumexp float32 1e-6,
float64 1e-12, float16/bfloat16 one storage ulp.
"""

import math

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, with_dim_order


def gen(seed):
    return torch.Generator().manual_seed(seed)


def run_like(name, args, expected, out_order=None):
    out = torch.empty(expected.shape, dtype=expected.dtype)
    if out_order is not None:
        out = with_dim_order(out, out_order)
    run_kernel(name, list(args) + [out])
    assert torch.equal(out, expected), f"{name}: {out} != {expected}"
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_flip(dtype):
    g = gen(1)
    x = rand((2, 3, 4, 5), dtype, g)
    for dims in ([0], [1, 3], [-1], [0, 1, 2, 3], []):
        run_like("aten::flip.out", [x, dims], torch.flip(x, dims))
        run_like("aten::flip.out", [with_dim_order(x, [0, 2, 3, 1]), dims], torch.flip(x, dims),
                 out_order=[3, 2, 1, 0])
    s = rand((), dtype, g)
    run_like("aten::flip.out", [s, [-1]], torch.flip(s, [-1]))
    e = rand((0, 3), dtype, g)
    run_like("aten::flip.out", [e, [0, 1]], torch.flip(e, [0, 1]))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_roll(dtype):
    g = gen(2)
    x = rand((3, 4, 5), dtype, g)
    for shifts, dims in [([1], [0]), ([-2], [2]), ([7, 3], [1, 2]), ([2, 1, 1], [0, 1, 2]),
                         ([5], []), ([-11], []), ([0], [1]), ([1, 1], [0, 0])]:
        expected = torch.roll(x, shifts, dims)
        run_like("aten::roll.out", [x, shifts, dims], expected)
        run_like("aten::roll.out", [with_dim_order(x, [2, 0, 1]), shifts, dims], expected,
                 out_order=[1, 2, 0])
    e = rand((0, 4), dtype, g)
    run_like("aten::roll.out", [e, [1], [1]], torch.roll(e, [1], [1]))


@pytest.mark.parametrize("name,fn", [("tril", torch.tril), ("triu", torch.triu)])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tril_triu(name, fn, dtype):
    g = gen(3)
    for shape in [(4, 4), (3, 6), (6, 3), (2, 3, 4, 5), (0, 3), (2, 0, 4)]:
        x = rand(shape, dtype, g)
        for diagonal in (0, 1, -1, 3, -5, 10):
            run_like(f"aten::{name}.out", [x, diagonal], fn(x, diagonal))
    x = rand((2, 3, 4, 5), dtype, g)
    run_like(f"aten::{name}.out", [with_dim_order(x, [0, 3, 1, 2]), 1], fn(x, 1),
             out_order=[0, 2, 3, 1])


def test_unfold_diagonal_narrow_as_strided():
    g = gen(4)
    for dtype in ALL_DTYPES:
        x = rand((3, 7, 4), dtype, g)
        xs = with_dim_order(x, [2, 0, 1])
        for dim, size, step in [(1, 3, 2), (1, 7, 1), (-1, 2, 3), (0, 1, 1), (1, 0, 2)]:
            run_like("aten::unfold_copy.out", [xs, dim, size, step], x.unfold(dim, size, step))
        s = rand((), dtype, g)
        run_like("aten::unfold_copy.out", [s, 0, 1, 1], s.unfold(0, 1, 1))
        for offset, d1, d2 in [(0, 0, 1), (2, 0, 1), (-1, 0, 1), (1, 2, 1), (0, -1, 0), (9, 0, 1)]:
            run_like("aten::diagonal_copy.out", [xs, offset, d1, d2],
                     torch.diagonal(x, offset, d1, d2))
        for dim, start, length in [(1, 2, 3), (0, -2, 2), (2, 0, 0), (-1, 1, 3)]:
            run_like("aten::narrow_copy.out", [xs, dim, start, length],
                     x.narrow_copy(dim, start, length), out_order=[1, 2, 0])
        flat = rand((24,), dtype, g).view(4, 6)
        for size, stride, offset in [([3, 3], [6, 1], 0), ([2, 2, 2], [1, 12, 6], 3),
                                     ([4], [0], 5), ([0, 5], [1, 1], None)]:
            run_like("aten::as_strided_copy.out", [flat, size, stride, offset],
                     torch.as_strided(flat, size, stride, offset or 0))


def test_view_ops_reject_bad_arguments():
    x = torch.rand(3, 7, 4)
    cases = [
        ("aten::flip.out", [x, [0, -3]], torch.empty(3, 7, 4), "dim 0 appears multiple times|appears multiple"),
        ("aten::flip.out", [x, [3]], torch.empty(3, 7, 4), "aten::flip.out: .*dim"),
        ("aten::roll.out", [x, [1, 2], [0]], torch.empty(3, 7, 4), "2 shifts for 1 dims"),
        ("aten::roll.out", [x, [1, 2], []], torch.empty(3, 7, 4), "without dims, shifts must have one entry"),
        ("aten::tril.out", [torch.rand(5), 0], torch.empty(5), "needs at least 2 dims"),
        ("aten::unfold_copy.out", [x, 1, 8, 1], torch.empty(3, 0, 4, 8), r"size 8 must be in \[0, 7\]"),
        ("aten::unfold_copy.out", [x, 1, 2, 0], torch.empty(3, 6, 4, 2), "step must be positive"),
        ("aten::diagonal_copy.out", [x, 0, 1, -2], torch.empty(3, 4), "dim1 and dim2 are both 1"),
        ("aten::narrow_copy.out", [x, 1, 5, 3], torch.empty(3, 3, 4), "start 5 \\+ length 3 exceeds"),
        ("aten::narrow_copy.out", [x, 1, -8, 1], torch.empty(3, 1, 4), "start -8 out of range"),
        ("aten::as_strided_copy.out", [x, [3, 40], [28, 1], 0], torch.empty(3, 40), "reaches element 95 of a 84-element"),
        ("aten::as_strided_copy.out", [x, [2], [1, 1], 0], torch.empty(2), "1 sizes but 2 strides"),
        ("aten::as_strided_copy.out", [x, [2], [-1], 0], torch.empty(2), "stride -1 at dim 0 is invalid"),
        ("aten::as_strided_copy.out", [with_dim_order(x, [2, 1, 0]), [2], [1], 0], torch.empty(2), "self must be row-major"),
    ]
    for name, args, out, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel(name, args + [out])


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_repeat_interleave_tensor(dtype):
    for reps in ([1, 2, 0, 3], [0, 0], [5], []):
        r = torch.tensor(reps, dtype=dtype)
        expected = torch.repeat_interleave(r)
        run_like("aten::repeat_interleave.Tensor_out", [r, None], expected)
        run_like("aten::repeat_interleave.Tensor_out", [r, int(expected.numel())], expected)
    with pytest.raises(RuntimeError, match="repeats must be 1-D, got 0 dims"):
        run_kernel("aten::repeat_interleave.Tensor_out", [torch.tensor(3, dtype=dtype), None, torch.empty(3, dtype=dtype)])
    with pytest.raises(RuntimeError, match=r"repeats\[1\] is negative"):
        run_kernel("aten::repeat_interleave.Tensor_out", [torch.tensor([1, -1], dtype=dtype), None, torch.empty(0, dtype=dtype)])
    with pytest.raises(RuntimeError, match="output_size 4 but repeats sum to 3"):
        run_kernel("aten::repeat_interleave.Tensor_out", [torch.tensor([1, 2], dtype=dtype), 4, torch.empty(3, dtype=dtype)])
    with pytest.raises(RuntimeError, match="repeat_interleave.Tensor_out: repeats"):
        run_kernel("aten::repeat_interleave.Tensor_out", [torch.tensor([1.0]), None, torch.empty(1)])


C10_DTYPE = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4,
             torch.float16: 5, torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}


def test_view_copy_dtype():
    g = gen(5)
    pairs = [(torch.float32, torch.int32), (torch.int32, torch.float32), (torch.float16, torch.int16),
             (torch.bfloat16, torch.float16), (torch.int64, torch.float64), (torch.uint8, torch.int8),
             (torch.bool, torch.uint8)]
    for src, dst in pairs:
        x = rand((2, 3, 4), src, g)
        out = torch.empty(x.shape, dtype=dst)
        run_kernel("aten::view_copy.dtype_out", [with_dim_order(x, [2, 0, 1]), C10_DTYPE[dst], out])
        # Bits, not values: reinterpreted ints may be NaNs.
        assert torch.equal(out.view(torch.uint8), x.view(dst).view(torch.uint8)), (src, dst)
    x = torch.rand(2, 4)
    with pytest.raises(RuntimeError, match="changes the element size"):
        run_kernel("aten::view_copy.dtype_out", [x, C10_DTYPE[torch.float16], torch.empty(2, 8, dtype=torch.float16)])
    with pytest.raises(RuntimeError, match="does not match out's dtype"):
        run_kernel("aten::view_copy.dtype_out", [x, C10_DTYPE[torch.int32], torch.empty(2, 4)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_masked_fill_tensor(dtype):
    g = gen(6)
    x = rand((2, 3, 4), dtype, g)
    mask = torch.rand(3, 1, generator=g) > 0.5
    for value in (torch.tensor(3), torch.tensor(True), torch.tensor(-2.5), torch.tensor(7, dtype=torch.int64)):
        if (value.dtype.is_floating_point and not dtype.is_floating_point) or (
                dtype == torch.uint8 and value.item() < 0):
            continue
        run_like("aten::masked_fill.Tensor_out", [with_dim_order(x, [1, 2, 0]), mask, value],
                 x.masked_fill(mask, value))
    with pytest.raises(RuntimeError, match="value must be a 0-d tensor"):
        run_kernel("aten::masked_fill.Tensor_out", [x, mask, torch.tensor([1]), torch.empty_like(x)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64, torch.int8, torch.uint8])
def test_cumprod(dtype):
    g = gen(7)
    x = rand((3, 4, 5), dtype, g)
    if dtype.is_floating_point:
        x = x / 8 + 1  # products stay finite
    for dim in (0, 1, -1):
        expected = torch.cumprod(x, dim)
        out = with_dim_order(torch.empty_like(expected), [2, 0, 1])
        run_kernel("aten::cumprod.out", [with_dim_order(x, [1, 2, 0]), dim, None, out])
        torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-6)
    expected = torch.cumprod(x, 1, dtype=torch.float64)
    out = torch.empty_like(expected)
    run_kernel("aten::cumprod.out", [x, 1, 7, out])
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64, torch.int8, torch.float16])
def test_searchsorted_and_bucketize(dtype):
    g = gen(8)
    seq = torch.sort(rand((9,), dtype, g)).values
    seq[3] = seq[4]  # a run of equal elements: left and right differ there
    values = rand((3, 5), dtype, g)
    values[0, :3] = seq[:3]
    for right in (False, True):
        for out_int32 in (False, True):
            expected = torch.searchsorted(seq, values, right=right, out_int32=out_int32)
            run_like("aten::searchsorted.Tensor_out", [seq, values, out_int32, right, None, None], expected)
            run_like("aten::bucketize.Tensor_out", [values, seq, out_int32, right],
                     torch.bucketize(values, seq, out_int32=out_int32, right=right))
        side = "right" if right else "left"
        run_like("aten::searchsorted.Tensor_out", [seq, values, False, False, side, None],
                 torch.searchsorted(seq, values, side=side))
        run_like("aten::searchsorted.Scalar_out", [seq, 3, False, right, None, None],
                 torch.searchsorted(seq, 3, right=right))
    # N-D sequence: row i of values searches row i of seq; and a sorter for unsorted rows.
    rows = torch.sort(rand((3, 7), dtype, g), dim=1).values
    v = rand((3, 4), dtype, g)
    run_like("aten::searchsorted.Tensor_out", [rows, v, False, False, None, None], torch.searchsorted(rows, v))
    unsorted = rand((3, 7), dtype, g)
    sorter = torch.argsort(unsorted, dim=1, stable=True)
    run_like("aten::searchsorted.Tensor_out", [unsorted, v, False, True, None, sorter],
             torch.searchsorted(unsorted, v, right=True, sorter=sorter))
    # Non-contiguous values and out.
    vs = with_dim_order(rand((2, 3, 4), dtype, g), [2, 0, 1])
    run_like("aten::bucketize.Tensor_out", [vs, seq, False, False], torch.bucketize(vs, seq),
             out_order=[1, 2, 0])


def test_searchsorted_nan_mixed_and_errors():
    seq = torch.tensor([0.0, 1.0, 2.0, math.inf])
    vals = torch.tensor([math.nan, -math.inf, math.inf, 1.0])
    for right in (False, True):
        run_like("aten::searchsorted.Tensor_out", [seq, vals, False, right, None, None],
                 torch.searchsorted(seq, vals, right=right))
    iv = torch.tensor([0, 1, 5], dtype=torch.int64)
    run_like("aten::bucketize.Tensor_out", [iv, seq, False, False], torch.bucketize(iv, seq))
    out = torch.empty(4, dtype=torch.int64)
    cases = [
        ([seq, vals, False, True, "left", None, out], "side='left' contradicts right=True"),
        ([seq, vals, False, False, "middle", None, out], "side must be 'left' or 'right'"),
        ([seq, vals, True, False, None, None, out], "out must be int32"),
        ([seq.view(2, 2), vals.view(4, 1), False, False, None, None, out.view(4, 1)], "leading dim 0 differs"),
        ([seq, vals, False, False, None, torch.tensor([0, 1, 2, 4]), out], "index 4 is out of bounds"),
    ]
    for args, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel("aten::searchsorted.Tensor_out", args)
    with pytest.raises(RuntimeError, match="boundaries must be 1-D"):
        run_kernel("aten::bucketize.Tensor_out", [vals, seq.view(2, 2), False, False, out])


@pytest.mark.parametrize("name,fn", [("cummax", torch.cummax), ("cummin", torch.cummin)])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cummax_cummin(name, fn, dtype):
    g = gen(9)
    x = rand((3, 6, 4), dtype, g)
    if dtype.is_floating_point:
        x[0, 2, 1] = math.nan  # NaN sticks once seen
    else:
        x[1] = x[1] // 30  # ties: the index moves to the last occurrence
    for dim in (0, 1, -1):
        values, indices = fn(x, dim)
        v = with_dim_order(torch.empty_like(values), [2, 0, 1])
        i = torch.empty_like(indices)
        run_kernel(f"aten::{name}.out", [with_dim_order(x, [1, 2, 0]), dim, v, i])
        torch.testing.assert_close(v, values, atol=0, rtol=0, equal_nan=True)
        assert torch.equal(i, indices), (name, dim)
    s = rand((), dtype, g)
    v, i = torch.empty((), dtype=dtype), torch.empty((), dtype=torch.int64)
    run_kernel(f"aten::{name}.out", [s, 0, v, i])
    assert torch.equal(v, fn(s, 0).values) and i.item() == 0
    with pytest.raises(RuntimeError, match="indices out must be int64"):
        run_kernel(f"aten::{name}.out", [x, 0, torch.empty_like(x), torch.empty(x.shape, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match=f"aten::{name}.out: .*dim"):
        run_kernel(f"aten::{name}.out", [x, 3, torch.empty_like(x), torch.empty(x.shape, dtype=torch.int64)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_logcumsumexp(dtype):
    g = gen(10)
    x = (torch.randn(3, 7, 4, generator=g) * 10).to(dtype)
    x[0, 1, 0] = -math.inf
    x[1, 3, 2] = math.inf
    x[2, 0, :] = -math.inf  # a line starting with -inf
    for dim in (0, 1, -1):
        expected = torch.logcumsumexp(x, dim)
        out = with_dim_order(torch.empty_like(expected), [2, 1, 0])
        run_kernel("aten::logcumsumexp.out", [with_dim_order(x, [1, 0, 2]), dim, out])
        rtol = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float64: 1e-12}.get(dtype, 1e-6)
        torch.testing.assert_close(out, expected, atol=rtol, rtol=rtol, equal_nan=True)
    with pytest.raises(RuntimeError, match="needs a floating self"):
        i = torch.arange(4)
        run_kernel("aten::logcumsumexp.out", [i, 0, torch.empty_like(i)])


def test_extreme_integer_arguments_are_safe():
    """Any int64 a program holds: results as torch's where torch has one, else one-line errors
    (no overflow on the way)."""
    big, small = 2**63 - 1, -(2**63)
    x = torch.rand(3, 7, 4)
    run_like("aten::unfold_copy.out", [x, 1, 7, big], x.unfold(1, 7, 7))  # one window
    for offset in (big, small):
        run_like("aten::diagonal_copy.out", [x, offset, 0, 1], torch.empty(4, 0))
    for diagonal in (big, small):
        run_like("aten::tril.out", [x, diagonal], torch.tril(x, 100 if diagonal > 0 else -100))
        run_like("aten::triu.out", [x, diagonal], torch.triu(x, 100 if diagonal > 0 else -100))
    run_like("aten::roll.out", [x, [big, small], [0, 2]], torch.roll(x, [big % 3, small % 4], [0, 2]))
    with pytest.raises(RuntimeError, match="exceeds the dim's size"):
        run_kernel("aten::narrow_copy.out", [x, 1, 2, big, torch.empty(3, 5, 4)])
    with pytest.raises(RuntimeError, match="the view's extent overflows"):
        run_kernel("aten::as_strided_copy.out", [x, [2**31 - 1] * 3, [2**31 - 1] * 3, 0, torch.empty(0)])
    with pytest.raises(RuntimeError, match="padding must be in"):
        run_kernel("aten::col2im.out", [torch.rand(1, 4, 4), [3, 3], [2, 2], [1, 1], [big, 0], [1, 1], torch.empty(1, 1, 3, 3)])
    with pytest.raises(RuntimeError, match="stride must be in"):
        run_kernel("aten::avg_pool3d.out", [torch.rand(1, 1, 2, 2, 2), [1], [big], [0], False, True, None, torch.empty(1)])
