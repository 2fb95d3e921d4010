"""bfloat16 outputs through pteron.load(...).forward: numpy has no bfloat16 dtype (the native
module could not even make such an array, and torch.from_numpy then failed on the object array
it got), so numpy callers get the values widened to float32, exactly, and torch callers a
bfloat16 tensor. Compared exactly: the model's only rounding is torch's own cast to bfloat16,
which the program does the same way (round to nearest even)."""

import numpy as np
import pteron
import torch


class ToBFloat16(torch.nn.Module):
    def forward(self, x):
        y = (x * 3).bfloat16()
        return y, y.t() + 1, x  # a bfloat16 output in another dim order, and a float32 one


def program():
    x = torch.randn(5, 7)
    return pteron.to_edge_transform_and_lower(pteron.export(ToBFloat16(), (x,))).load()


def test_torch_callers_get_bfloat16_tensors():
    x = torch.randn(5, 7)
    got = program().forward(x)
    want = ToBFloat16()(x)
    for g, w in zip(got, want):
        assert isinstance(g, torch.Tensor) and g.dtype == w.dtype
        assert torch.equal(g, w)


def test_numpy_callers_get_float32_arrays_of_the_same_values():
    x = torch.randn(5, 7)
    got = program().forward(x.numpy())
    want = ToBFloat16()(x)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray) and g.dtype == np.float32
        assert torch.equal(torch.from_numpy(g), w.float())
