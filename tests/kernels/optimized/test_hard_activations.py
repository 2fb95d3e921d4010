"""The optimized library's aten::hardswish.out and aten::hardsigmoid.out (MobileNetV3's activation
and squeeze-excite gate) against torch: within 1 ulp-scale tolerance (a product by 1/6 where torch
divides by 6: atol 1e-6 + rtol 1e-6), NaN stays NaN, infinities as torch, contiguous float32 on
the fast path over sizes that split over threads and leave vector tails, and other dtypes and
layouts through the portable kernel. Bad inputs raise RuntimeError naming the op.
"""

import pteron_native
import pytest
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

OPS = {"aten::hardswish.out": F.hardswish, "aten::hardsigmoid.out": F.hardsigmoid}


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 32, 112, 112), (7, 13), (0,), (5,), (3, 17)])
def test_matches_torch(op, threads, shape):
    pteron_native.set_num_threads(threads)
    try:
        x = torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 5
        special = [float("nan"), float("inf"), -float("inf"), -3.0, 3.0, 0.0]
        flat = x.view(-1)
        flat[: min(len(special), flat.numel())] = torch.tensor(special[: flat.numel()])
        out = torch.full_like(x, 7.0)
        run_kernel(op, [x, out], library="optimized")
        torch.testing.assert_close(out, OPS[op](x), atol=1e-6, rtol=1e-6, equal_nan=True)
    finally:
        pteron_native.set_num_threads(0)


@pytest.mark.parametrize("op", OPS)
def test_other_dtypes_and_layouts_fall_back(op):
    x = (torch.randn(2, 3, 4, 5) * 5).to(memory_format=torch.channels_last)
    out = torch.empty(2, 3, 4, 5)
    run_kernel(op, [x, out], library="optimized")
    torch.testing.assert_close(out, OPS[op](x), atol=1e-6, rtol=1e-6)
    xd = torch.randn(9, dtype=torch.float64) * 5
    outd = torch.empty(9, dtype=torch.float64)
    run_kernel(op, [xd, outd], library="optimized")
    torch.testing.assert_close(outd, OPS[op](xd))


@pytest.mark.parametrize("op", OPS)
def test_bad_inputs_name_the_op(op):
    with pytest.raises(RuntimeError, match=op.split("::")[1].split(".")[0]):
        run_kernel(op, [torch.randn(3, 4), torch.empty(3, 5)], library="optimized")
