"""Decompositions pteron.export uses in place of torch's where torch's decomposition computes
differently from torch's eager kernel (python/pteron/lowering.py, _EAGER_DECOMPOSITIONS).

soft_margin_loss: ATen's kernel runs neg, mul, exp and log1p each in the input's dtype (for
float16 each op computes in float and rounds to half), so exp(-x * y) overflows to inf past
about 11.1 and the loss is inf there; torch's decomposition upcasts the whole chain to float32
and gives a finite loss. The program must give eager's: infinities in the same places, finite
values within float16's 1e-3 (float32: 1e-5) relative.
"""

import pteron
import pytest
import torch
import torch.nn.functional as F


class SoftMargin(torch.nn.Module):
    def __init__(self, reduction):
        super().__init__()
        self.reduction = reduction

    def forward(self, x, y):
        return F.soft_margin_loss(x, y, reduction=self.reduction)


@pytest.mark.parametrize("dtype,rtol", [(torch.float16, 1e-3), (torch.float32, 1e-5)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("kernels", [("portable",), ("optimized", "portable")])
def test_soft_margin_loss_follows_eager(dtype, rtol, reduction, kernels):
    gen = torch.Generator().manual_seed(0)
    # Margins from -81 to 81 (op_db's range): exp overflows float16 on a quarter of them.
    x = (torch.rand(6, 7, generator=gen) * 18 - 9).to(dtype)
    y = (torch.rand(6, 7, generator=gen) * 18 - 9).to(dtype)
    model = SoftMargin(reduction)
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (x, y)), partitioner=[],
                                                 kernels=kernels)
    got = program.load().forward(x, y)[0]
    want = model(x, y)
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype == torch.float16:
        assert bool(torch.isinf(want).any())  # the case this test is about
    assert torch.equal(torch.isinf(got), torch.isinf(want)), (got, want)
    finite = torch.isfinite(want)
    torch.testing.assert_close(got[finite].float(), want[finite].float(), rtol=rtol, atol=rtol)
