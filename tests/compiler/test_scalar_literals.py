"""Python numbers in tensor positions of element-wise ops (x + 1, 1 - x, x / 3, where(c, x, 0)):
export leaves them as literals, which the frontend wraps in 0-d constant tensors. An int literal
beside a floating tensor is wrapped as the float torch promotes it to, so the kernels see two
floating operands and take their fast paths (an int64 0-d tensor sent add, sub and div through
the mixed-dtype path: 11x slower on 1M floats); beside integer tensors it stays an int64.

Checked against torch: dtypes equal, values exact (one IEEE operation each, as torch's), on
float32, float16 and int64 inputs, on the default host program. (The constant's dtype:
Pt2Frontend.PythonScalarsInTensorPositionsBecomeConstants.)
"""

import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "python"), str(REPO / "build" / "python")]
import pteron  # noqa: E402


class Literals(torch.nn.Module):
    def forward(self, x):
        return x + 1, 1 - x, x * 3, x / 3, torch.where(x > 0, x, 0), torch.maximum(x, torch.tensor(2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_int_literals_give_torchs_dtypes_and_values(dtype):
    x = (torch.randn(4, 33, generator=torch.Generator().manual_seed(0)) * 5).to(dtype)
    model = Literals().eval()
    got = pteron.to_edge_transform_and_lower(pteron.export(model, (x,))).load().forward(x)
    for i, (g, want) in enumerate(zip(got, model(x))):
        g = torch.as_tensor(g)
        assert g.dtype == want.dtype, (i, g.dtype, want.dtype)
        assert torch.equal(g, want), (i, dtype)
