"""bitwise_and/or/xor.Tensor_out against torch: bool and integer tensors with broadcasting.
Results are exact."""

import pytest
import torch
from kernel_harness import run_kernel

OPS = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [torch.bool, torch.int8, torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("sa,sb", [((3, 4), (3, 4)), ((2, 1, 5), (4, 1)), ((), (3,)), ((0, 2), (2,))])
def test_bitwise_matches_torch(op, dtype, sa, sb):
    g = torch.Generator().manual_seed(1)
    a = torch.randint(0, 100, sa, generator=g).to(dtype)
    b = torch.randint(0, 100, sb, generator=g).to(dtype)
    expected = OPS[op](a, b)
    out = torch.empty_like(expected)
    run_kernel(f"aten::bitwise_{op}.Tensor_out", [a, b, out])
    assert torch.equal(out, expected)


def test_bitwise_rejects_float():
    a = torch.randn(3)
    with pytest.raises(RuntimeError, match="bitwise_and"):
        run_kernel("aten::bitwise_and.Tensor_out", [a, a, torch.empty(3)])
