"""Small models for the ExecuTorch interop fixtures (tests/fixtures/executorch/), each exercising
one part of the .pte format: two graph inputs (add), a constant weight and addmm (linear),
conv + batch norm with non-trivial statistics + ReLU (conv_bn_relu), attention with a mask and
GELU (transformer_block), a whole CNN (mobilenet_v2) and Scalar/ScalarType/None/dim-order
arguments with non-float outputs (scalar_args). Seeded, torch only, so that the fixture
script (ExecuTorch venv) and the tests (project venv) build the same models and inputs."""

import torch
from torch import nn

from .common import seeded
from .mobilenet_v2 import mobilenet_v2
from .transformer_block import transformer_block


class Add(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


def add():
    return Add().eval(), (torch.randn(2, 3, 4), torch.randn(2, 3, 4))


def linear():
    return nn.Linear(16, 8).eval(), (torch.randn(2, 16),)


class ConvBnRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv(x)))


def conv_bn_relu():
    return ConvBnRelu().eval(), (torch.randn(1, 3, 16, 16),)


class ScalarArgs(nn.Module):
    """Ops whose out-variants take Scalar, ScalarType, optional (None) and dim-order arguments,
    with int64, int32, float16 and channels-last outputs: the argument encodings to be
    compatible with, in one small program."""

    def forward(self, x: torch.Tensor, i: torch.Tensor):
        return (
            x.sum(dim=1, dtype=torch.float32),  # ScalarType arg
            torch.cumsum(x, 2),  # ScalarType? = None
            x * 2.5 + 1,  # Python scalars become constant 0-d tensors
            x.to(torch.int32),
            torch.clamp(x, min=-0.5),  # Scalar? min, None max
            x.unsqueeze(0).contiguous(memory_format=torch.channels_last),
            torch.full((2, 3), 7, dtype=torch.int64) + i,
            x.to(torch.float16),
            torch.arange(4, dtype=torch.float32) + x,
        )


def scalar_args():
    return ScalarArgs().eval(), (torch.randn(2, 3, 4), torch.arange(6).reshape(2, 3))


FIXTURES = {
    "add": add,
    "linear": linear,
    "conv_bn_relu": conv_bn_relu,
    "transformer_block": transformer_block,
    "mobilenet_v2": mobilenet_v2,
    "scalar_args": scalar_args,
}


def build(name: str):
    """(model in eval mode, example inputs) for an interop fixture name; seeded like the zoo."""
    with seeded(0):
        model, inputs = FIXTURES[name]()
    return model.eval(), inputs
