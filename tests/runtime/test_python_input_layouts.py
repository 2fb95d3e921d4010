"""Inputs whose strides differ from the program's layout only in dims of size 1 (torch gives such
a dim any stride: `x.T` of a [1, n] row is [n, 1] in dim order (1, 0)) are the same bytes and
run; an input really laid out otherwise (a transposed matrix) is refused in one line, not read
in the wrong order. Results exact (x * 2 + y in float32)."""

import pytest
import torch

import pteron


class Scale(torch.nn.Module):
    def forward(self, x, y):
        return x * 2 + y


@pytest.fixture(scope="module")
def program():
    ep = pteron.export(Scale(), (torch.randn(50, 1), torch.randn(50, 3)))
    return pteron.to_edge_transform_and_lower(ep, progress=False).load()


def test_a_size_one_dim_may_have_any_stride(program):
    x, y = torch.randn(1, 50).T, torch.randn(50, 3)
    assert x.stride() == (1, 50)
    assert torch.equal(torch.as_tensor(program.forward(x, y)[0]), Scale()(x, y))
    x = torch.randn(50, 1, 1)[:, :, 0]  # strides (1, 1)
    assert torch.equal(torch.as_tensor(program.forward(x, y)[0]), Scale()(x, y))


def test_a_transposed_input_is_refused_in_one_line(program):
    with pytest.raises(RuntimeError, match="input 1: dim order differs from the program's") as error:
        program.forward(torch.randn(50, 1), torch.randn(3, 50).T)
    assert "\n" not in str(error.value)
