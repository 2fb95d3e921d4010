"""Binary elementwise kernels against torch: broadcasting, dtypes, dim orders, edge sizes.

Tolerance: float32 results are exact up to 1 ulp of torch's (atol 1e-6, rtol 1e-6); integer
results are exact.
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
    ((0, 3), (1, 3)),
    ((2, 1, 4, 5), (3, 1, 1)),
]


@pytest.mark.parametrize("sa,sb", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.int64])
def test_add_broadcast(sa, sb, dtype):
    g = torch.Generator().manual_seed(0)
    a = (torch.randn(sa, generator=g) * 10).to(dtype)
    b = (torch.randn(sb, generator=g) * 10).to(dtype)
    alpha = 2 if dtype != torch.float32 else 0.5
    expected = torch.add(a, b, alpha=alpha)
    out = torch.empty_like(expected)
    run_kernel("aten::add.out", [a, b, alpha, out])
    assert_close(out, expected, atol=1e-6, rtol=1e-6, what=f"add {sa}+{sb}")


def test_add_channels_last_inputs():
    a = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    b = torch.randn(2, 3, 4, 5)
    out = torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last)
    run_kernel("aten::add.out", [a, b, 1, out])
    assert_close(out, a + b, atol=1e-6, rtol=1e-6, what="channels-last add")


def test_add_mixed_dtypes_promote():
    a = torch.arange(6, dtype=torch.int64).reshape(2, 3)
    b = torch.randn(3)
    out = torch.empty(2, 3)
    run_kernel("aten::add.out", [a, b, 1, out])
    assert_close(out, a + b, atol=1e-6, rtol=1e-6, what="int64+float32")


def test_add_rejects_wrong_out_shape():
    a, b = torch.randn(2, 3), torch.randn(2, 3)
    with pytest.raises(RuntimeError, match="aten::add.out"):
        run_kernel("aten::add.out", [a, b, 1, torch.empty(3, 2)])


def test_add_rejects_non_broadcastable():
    with pytest.raises(RuntimeError, match="do not broadcast"):
        run_kernel("aten::add.out", [torch.randn(2, 3), torch.randn(4), 1, torch.empty(2, 3)])
