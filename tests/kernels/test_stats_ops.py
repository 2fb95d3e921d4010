"""mode.values, nanmedian (all and dim_values) and histc.out against torch: every dtype torch
accepts for each, dims and keepdim, ties, NaN, any dim orders, and the malformed arguments.
Values and indices exactly (they are selections or counts); histc counts exactly, its float16
and bfloat16 bins computed with torch's per-operation rounding."""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import empty_with_dim_order, random_order, with_dim_order

NAN = float("nan")
MODE_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.uint8,
               torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]
NANMEDIAN_DTYPES = [d for d in MODE_DTYPES if d != torch.bool]
HISTC_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def few_values(shape, dtype, g):
    """Small integers, so lines have ties (and the mode is not trivially the first element)."""
    t = torch.randint(0, 4, shape, generator=g)
    return (t > 1) if dtype == torch.bool else t.to(dtype)


def with_nans(t, g, p=0.3):
    if not t.dtype.is_floating_point:
        return t
    mask = torch.rand(t.shape, generator=g) < p
    return t.masked_fill(mask, NAN)


def run_line_op(name, self, dim, keepdim, g):
    values, indices = getattr(torch, name)(self, dim, keepdim)
    vo = empty_with_dim_order(values.shape, values.dtype, random_order(values.dim(), g))
    io = empty_with_dim_order(indices.shape, torch.int64, random_order(indices.dim(), g))
    run_kernel(f"aten::{name}.{'values' if name == 'mode' else 'dim_values'}",
               [self, dim, keepdim, vo, io])
    assert torch.equal(vo.nan_to_num(), values.nan_to_num()) if values.is_floating_point() else \
        torch.equal(vo, values), (name, self.dtype, dim)
    assert torch.equal(io, indices), (name, self.dtype, dim, io, indices)


@pytest.mark.parametrize("dtype", MODE_DTYPES)
def test_mode(dtype):
    g = torch.Generator().manual_seed(0)
    for shape, dim in [((7,), 0), ((4, 9), 1), ((4, 9), 0), ((3, 5, 6), -2), ((), 0), ((40,), 0)]:
        x = with_nans(few_values(shape, dtype, g), g)
        x = with_dim_order(x, random_order(x.dim(), g))
        for keepdim in (False, True):
            run_line_op("mode", x, dim, keepdim, g)


@pytest.mark.parametrize("dtype", NANMEDIAN_DTYPES)
def test_nanmedian_dim(dtype):
    g = torch.Generator().manual_seed(1)
    for shape, dim in [((7,), 0), ((5, 8), 1), ((5, 8), 0), ((3, 4, 6), -1), ((), 0), ((33,), 0)]:
        x = with_nans(few_values(shape, dtype, g), g, 0.4)
        x = with_dim_order(x, random_order(x.dim(), g))
        for keepdim in (False, True):
            run_line_op("nanmedian", x, dim, keepdim, g)
    if dtype.is_floating_point:  # all-NaN lines, short and long (torch's index is nth_element's)
        for n in (3, 20, 41):
            run_line_op("nanmedian", torch.full((2, n), NAN, dtype=dtype), 1, False, g)


@pytest.mark.parametrize("dtype", NANMEDIAN_DTYPES)
def test_nanmedian_all(dtype):
    g = torch.Generator().manual_seed(2)
    for shape in [(1,), (6,), (4, 5), ()]:
        x = with_nans(few_values(shape, dtype, g), g)
        out = torch.empty((), dtype=dtype)
        run_kernel("aten::nanmedian.out", [x, out])
        assert torch.equal(out.nan_to_num(), torch.nanmedian(x).nan_to_num()), (dtype, shape)
    if dtype.is_floating_point:
        out = torch.empty((), dtype=dtype)
        run_kernel("aten::nanmedian.out", [torch.full((4,), NAN, dtype=dtype), out])
        assert out.isnan()


@pytest.mark.parametrize("dtype", HISTC_DTYPES)
def test_histc(dtype):
    g = torch.Generator().manual_seed(3)
    # 300 elements: bins hold under 256, which float16 and bfloat16 count exactly (torch adds 1s
    # in the dtype per thread; the kernel counts exactly and rounds once).
    x = (torch.randn(300, generator=g) * 3).to(dtype)
    x[:5] = torch.tensor([NAN, float("inf"), -2.0, 2.0, 0.0]).to(dtype)
    for bins, lo, hi in [(10, -2.0, 2.0), (7, 0, 0), (100, -1.5, 4.25), (2, 0, 0), (13, -3, 3)]:
        src = x if lo != hi else x.nan_to_num(posinf=9.0)  # the data's range must be finite
        want = torch.histc(src, bins, lo, hi)
        out = torch.empty(bins, dtype=dtype)
        run_kernel("aten::histc.out", [with_dim_order(src.view(20, 15), [1, 0]), bins, lo, hi, out])
        assert torch.equal(out, want), (dtype, bins, lo, hi, out, want)
    same = torch.full((4,), 3.0, dtype=dtype)  # min == max == the data: widened by 1 each side
    out = torch.empty(5, dtype=dtype)
    run_kernel("aten::histc.out", [same, 5, 3, 3, out])
    assert torch.equal(out, torch.histc(same, 5, 3, 3))


def test_malformed_arguments_are_refused_in_one_line():
    x = torch.randn(4, 5)
    with pytest.raises(RuntimeError, match="histc.out: bins must be > 0"):
        run_kernel("aten::histc.out", [x, 0, 0, 1, torch.empty(0)])
    with pytest.raises(RuntimeError, match="histc.out: max must be larger than min"):
        run_kernel("aten::histc.out", [x, 3, 2, 1, torch.empty(3)])
    with pytest.raises(RuntimeError, match=r"histc.out: range of \[nan, nan\] is not finite"):
        run_kernel("aten::histc.out", [torch.tensor([1.0, NAN]), 3, 0, 0, torch.empty(3)])
    # A range finite in double but not in the dtype (-1e300 is -inf in float32; float16's
    # 1e5 is inf): refused, not a float-to-integer cast of inf / NaN (found by the fuzzer).
    with pytest.raises(RuntimeError, match="histc.out: range of .* is empty or not finite in float32"):
        run_kernel("aten::histc.out", [x, 3, -1e300, 1, torch.empty(3)])
    with pytest.raises(RuntimeError, match="histc.out: range of .* is empty or not finite in float16"):
        run_kernel("aten::histc.out", [x.half(), 3, -1e5, 1, torch.empty(3, dtype=torch.float16)])
    with pytest.raises(RuntimeError, match="histc.out: dtype int64 not supported"):
        run_kernel("aten::histc.out", [torch.ones(3, dtype=torch.int64), 3, 0, 1,
                                       torch.empty(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match="mode.values: dim 2 out of range"):
        run_kernel("aten::mode.values", [x, 2, False, torch.empty(4), torch.empty(4, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match="mode.values: indices out must be int64"):
        run_kernel("aten::mode.values", [x, 1, False, torch.empty(4), torch.empty(4, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match="nanmedian.dim_values: cannot reduce an empty dimension"):
        run_kernel("aten::nanmedian.dim_values",
                   [torch.empty(3, 0), 1, False, torch.empty(3), torch.empty(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match="nanmedian.out: nanmedian of an empty tensor"):
        run_kernel("aten::nanmedian.out", [torch.empty(0), torch.empty(())])
