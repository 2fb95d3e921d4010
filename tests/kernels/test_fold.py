"""col2im (F.fold) against torch: batched and unbatched inputs, kernel/dilation/padding/stride
combinations, non-contiguous layouts, fold(unfold(x)) round trips, malformed sizes.

Tolerance: float32 1e-5 (overlapping blocks are summed in a different order than torch's),
float64 1e-12; float16 / bfloat16 (summed in the storage type, like torch) 1e-2 / 5e-2.
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import with_dim_order

CASES = [  # output_size, kernel, dilation, padding, stride
    ([5, 6], [2, 3], [1, 1], [0, 0], [1, 1]),
    ([7, 7], [3, 3], [2, 1], [1, 2], [2, 1]),
    ([4, 9], [1, 2], [1, 3], [0, 1], [3, 2]),
    ([6, 6], [3, 3], [1, 1], [1, 1], [3, 3]),
]


def blocks(size, k, d, p, s):
    return [(size[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", CASES)
def test_col2im(dtype, case):
    size, k, d, p, s = case
    g = torch.Generator().manual_seed(1)
    bh, bw = blocks(size, k, d, p, s)
    atol = {torch.float16: 1e-2, torch.bfloat16: 5e-2, torch.float64: 1e-12}.get(dtype, 1e-5)
    for shape in [(2, 3 * k[0] * k[1], bh * bw), (3 * k[0] * k[1], bh * bw)]:
        x = torch.randn(shape, generator=g).to(dtype)
        expected = torch.ops.aten.col2im(x.float() if dtype in (torch.float16, torch.bfloat16) else x,
                                         size, k, d, p, s).to(dtype)
        out = torch.empty_like(expected)
        run_kernel("aten::col2im.out", [x, size, k, d, p, s, out])
        torch.testing.assert_close(out, expected, atol=atol, rtol=atol)
    x = torch.randn(2, 3 * k[0] * k[1], bh * bw, generator=g).to(dtype)
    expected = torch.ops.aten.col2im(x.float(), size, k, d, p, s).to(dtype)
    out = with_dim_order(torch.empty_like(expected), [0, 2, 3, 1])
    run_kernel("aten::col2im.out", [with_dim_order(x, [2, 0, 1]), size, k, d, p, s, out])
    torch.testing.assert_close(out, expected, atol=max(atol, 1e-5), rtol=max(atol, 1e-5))


def test_fold_of_unfold_counts_overlaps():
    x = torch.randn(1, 2, 6, 6)
    cols = torch.nn.functional.unfold(x, 3, padding=1)
    out = torch.empty(1, 2, 6, 6)
    run_kernel("aten::col2im.out", [cols, [6, 6], [3, 3], [1, 1], [1, 1], [1, 1], out])
    ones = torch.nn.functional.fold(torch.nn.functional.unfold(torch.ones_like(x), 3, padding=1), (6, 6), 3, padding=1)
    torch.testing.assert_close(out, x * ones)


def test_col2im_rejects_bad_sizes():
    x = torch.randn(1, 12, 20)
    out = torch.empty(1, 3, 5, 6)
    cases = [
        ([x, [5, 6], [5, 1], [1, 1], [0, 0], [1, 1], out], "must be divisible by the kernel"),
        ([x, [5, 6], [2, 2], [0, 1], [0, 0], [1, 1], out], r"dilation must be in \[1, 2\^31\)"),
        ([x, [5], [2, 2], [1, 1], [0, 0], [1, 1], out], "output_size must have 2 values"),
        ([x, [1, 6], [3, 2], [1, 1], [0, 0], [1, 1], out], "too small for the kernel|divisible"),
        ([torch.randn(12), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1], out], "expected a 2-D or 3-D input"),
    ]
    for args, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel("aten::col2im.out", args)
    with pytest.raises(RuntimeError, match="blocks expected"):
        run_kernel("aten::col2im.out", [torch.randn(1, 12, 21), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1], out])
    with pytest.raises(RuntimeError, match="aten::col2im.out: .*shape"):
        run_kernel("aten::col2im.out", [x, [5, 6], [2, 2], [1, 1], [0, 0], [1, 1], torch.empty(1, 3, 6, 5)])
