"""The optimized library's aten::hardtanh.out (mobilenet's ReLU6) against torch: exact (a clamp),
NaN stays NaN, contiguous float32 on the fast path over sizes that split over threads, and other
dtypes and layouts through the portable kernel. Bad inputs raise RuntimeError naming the op.
"""

import pteron_native
import pytest
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

OP = "aten::hardtanh.out"


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape,lo,hi", [((1, 32, 112, 112), 0.0, 6.0), ((7, 13), -1.0, 1.0),
                                         ((0,), 0.0, 6.0), ((5,), -0.5, 0.25)])
def test_matches_torch(threads, shape, lo, hi):
    pteron_native.set_num_threads(threads)
    try:
        x = torch.randn(shape, generator=torch.Generator().manual_seed(1)) * 8
        if x.numel():
            x.view(-1)[0] = float("nan")
        out = torch.empty_like(x)
        run_kernel(OP, [x, lo, hi, out], library="optimized")
        assert torch.equal(out.nan_to_num(123.0), F.hardtanh(x, lo, hi).nan_to_num(123.0))
    finally:
        pteron_native.set_num_threads(0)


def test_other_dtypes_and_layouts_fall_back():
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    out = torch.empty(2, 3, 4, 5)
    run_kernel(OP, [x, 0.0, 6.0, out], library="optimized")
    assert torch.equal(out, F.hardtanh(x, 0.0, 6.0))
    xd = torch.randn(9, dtype=torch.float64) * 8
    outd = torch.empty(9, dtype=torch.float64)
    run_kernel(OP, [xd, 0.0, 6.0, outd], library="optimized")
    assert torch.equal(outd, F.hardtanh(xd, 0.0, 6.0))


def test_bad_inputs_name_the_op():
    with pytest.raises(RuntimeError, match="hardtanh"):
        run_kernel(OP, [torch.randn(3, 4), 0.0, 6.0, torch.empty(3, 5)], library="optimized")
