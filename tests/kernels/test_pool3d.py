"""avg_pool3d, max_pool3d_with_indices, _adaptive_avg_pool3d, avg_pool1d and adaptive_avg_pool1d
against torch: 4-D and 5-D (3-D pools), 2-D and 3-D (1-D pools, also length-major)
inputs, kernel/stride/padding/dilation/ceil_mode combinations, count_include_pad and
divisor_override, and malformed arguments.

Tolerances: float32 1e-6 absolute / 1e-5 relative (window sums in float, as torch), float64
1e-12; float16 / bfloat16 one storage ulp (2e-3 / 1.6e-2 relative; torch has no half
avg_pool3d on CPU, so its float32 result rounded is the reference); max values and indices
exact.
"""

import math

import pytest
import torch
from kernel_harness import run_kernel

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def tol(dtype):
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2),
            torch.float64: (1e-12, 1e-12)}.get(dtype, (1e-6, 1e-5))


GEOMETRIES = [  # kernel, stride, padding, dilation, ceil_mode
    ([2], [], [0], [1], False),
    ([3, 2, 2], [1, 2, 1], [1, 0, 1], [1, 1, 1], False),
    ([3], [2], [1], [1], True),
    ([2, 3, 3], [2, 2, 3], [0, 1, 1], [2, 1, 1], True),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("geometry", GEOMETRIES)
def test_avg_and_max_pool3d(dtype, geometry):
    kernel, stride, padding, dilation, ceil_mode = geometry
    g = torch.Generator().manual_seed(1)
    for shape in [(2, 3, 5, 6, 7), (3, 4, 5, 5)]:
        x = torch.randn(shape, generator=g).to(dtype)
        atol, rtol = tol(dtype)
        for count_include_pad in (True, False):
            for divisor in (None, 5):
                # torch has no float16/bfloat16 avg_pool3d on CPU: its float32 result, rounded.
                expected = torch.ops.aten.avg_pool3d(x if dtype in (torch.float32, torch.float64) else x.float(),
                                                     kernel, stride, padding, ceil_mode,
                                                     count_include_pad, divisor).to(dtype)
                out = torch.empty_like(expected)
                run_kernel("aten::avg_pool3d.out",
                           [x, kernel, stride, padding, ceil_mode, count_include_pad, divisor, out])
                torch.testing.assert_close(out, expected, atol=atol, rtol=rtol)
        values, indices = torch.ops.aten.max_pool3d_with_indices(x, kernel, stride, padding,
                                                                 dilation, ceil_mode)
        out, idx = torch.empty_like(values), torch.empty_like(indices)
        run_kernel("aten::max_pool3d_with_indices.out",
                   [x, kernel, stride, padding, dilation, ceil_mode, out, idx])
        assert torch.equal(out, values) and torch.equal(idx, indices), (shape, geometry)


def test_max_pool3d_nan_and_errors():
    x = torch.randn(1, 1, 3, 3, 3)
    x[0, 0, 1, 1, 1] = math.nan
    values, indices = torch.ops.aten.max_pool3d_with_indices(x, [3], [1], [0], [1], False)
    out, idx = torch.empty_like(values), torch.empty_like(indices)
    run_kernel("aten::max_pool3d_with_indices.out", [x, [3], [1], [0], [1], False, out, idx])
    assert math.isnan(out.item()) and torch.equal(idx, indices)
    one = torch.empty(1, 1, 1, 1, 1)
    cases = [
        ("aten::avg_pool3d.out", [torch.randn(3, 4, 5), [2], [], [0], False, True, None, torch.empty(1)], "expected 4-D or 5-D"),
        ("aten::avg_pool3d.out", [x, [2, 2], [], [0], False, True, None, torch.empty(1)], "kernel_size must have 1 or 3 values"),
        ("aten::avg_pool3d.out", [x, [2], [], [2], False, True, None, torch.empty(1)], "pad should be at most half"),
        ("aten::avg_pool3d.out", [x, [2], [], [0], False, True, 0, torch.empty(1)], "divisor must be not zero"),
        ("aten::avg_pool3d.out", [x, [4], [], [0], False, True, None, torch.empty(1)], "gives an output of size 0"),
        ("aten::max_pool3d_with_indices.out", [x, [2], [], [0], [0], False, one, one.long()], r"dilation must be in \[1,"),
        ("aten::max_pool3d_with_indices.out", [x, [2], [], [0], [1], False, one, one], "indices must be int64"),
        ("aten::_adaptive_avg_pool3d.out", [x, [2, 2], torch.empty(1)], "output_size must have 3 values"),
        ("aten::_adaptive_avg_pool3d.out", [x, [2, 0, 2], torch.empty(1)], "output_size 0 is invalid"),
    ]
    for name, args, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel(name, args)


@pytest.mark.parametrize("dtype", FLOATS)
def test_adaptive_avg_pool3d(dtype):
    g = torch.Generator().manual_seed(2)
    for shape, size in [((2, 3, 5, 7, 6), [2, 3, 4]), ((3, 4, 4, 4), [1, 1, 1]), ((1, 2, 3, 5, 4), [3, 5, 4]),
                        ((1, 1, 2, 3, 3), [4, 5, 7])]:
        x = torch.randn(shape, generator=g).to(dtype)
        expected = torch.ops.aten._adaptive_avg_pool3d(x, size)
        out = torch.empty_like(expected)
        run_kernel("aten::_adaptive_avg_pool3d.out", [x, size, out])
        atol, rtol = tol(dtype)
        torch.testing.assert_close(out, expected, atol=atol, rtol=rtol)


@pytest.mark.parametrize("dtype", FLOATS)
def test_avg_pool1d_and_adaptive(dtype):
    g = torch.Generator().manual_seed(3)
    atol, rtol = tol(dtype)
    for shape in [(2, 3, 11), (4, 9)]:
        x = torch.randn(shape, generator=g).to(dtype)
        xs = x.transpose(-1, -2).contiguous().transpose(-1, -2)  # length-major layout
        for k, s, p, ceil_mode in [([3], [], [0], False), ([4], [3], [2], True), ([2], [1], [1], False),
                                   ([5], [2], [1], True), ([11], [], [0], False)]:
            if k[0] > shape[-1]:
                continue
            for count_include_pad in (True, False):
                expected = torch.ops.aten.avg_pool1d(x.double(), k, s, p, ceil_mode, count_include_pad).to(dtype)
                out = torch.empty_like(expected)
                run_kernel("aten::avg_pool1d.out", [xs, k, s, p, ceil_mode, count_include_pad, out])
                torch.testing.assert_close(out, expected, atol=atol, rtol=rtol)
        for m in (1, 4, 11, 15):
            expected = torch.ops.aten.adaptive_avg_pool1d(x.double(), [m]).to(dtype)
            out = torch.empty_like(expected)
            run_kernel("aten::adaptive_avg_pool1d.out", [xs, [m], out])
            torch.testing.assert_close(out, expected, atol=atol, rtol=rtol)
    x = torch.randn(2, 3, 8)
    cases = [
        ("aten::avg_pool1d.out", [x, [3, 3], [], [0], False, True, torch.empty(2, 3, 2)], "kernel_size must have 1 value"),
        ("aten::avg_pool1d.out", [x, [2], [], [2], False, True, torch.empty(2, 3, 6)], "pad should be at most half"),
        ("aten::avg_pool1d.out", [x, [9], [], [0], False, True, torch.empty(2, 3, 1)], "output length 0 is invalid"),
        ("aten::avg_pool1d.out", [torch.randn(8), [2], [], [0], False, True, torch.empty(4)], "expected a 2-D or 3-D input"),
        ("aten::adaptive_avg_pool1d.out", [x, [0], torch.empty(2, 3, 0)], "output length 0 is invalid"),
        ("aten::adaptive_avg_pool1d.out", [x, [4], torch.empty(2, 3, 5)], "shape"),
    ]
    for name, args, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel(name, args)
