"""Helpers shared by the zoo models: seeded construction and TensorFlow-style SAME padding."""

import contextlib

import torch
from torch import nn


@contextlib.contextmanager
def seeded(seed: int):
    """Runs the block with torch's CPU generator seeded, leaving the caller's RNG state as it was.

    Every zoo model is built inside one of these so that the same name always gives the same
    weights and example inputs, whatever ran before.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield


def tf_same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """(before, after) padding that TensorFlow's SAME gives along one spatial dimension.

    TF pads so that out = ceil(size / stride) and puts the odd pixel after; torch's Conv2d only
    pads symmetrically, so an asymmetric case needs an explicit ZeroPad2d in front.
    """
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def same_conv(in_ch: int, out_ch: int, kernel: tuple[int, int] | int, stride: int,
              in_hw: tuple[int, int], groups: int = 1) -> nn.Module:
    """Conv2d with bias and TF SAME padding for an input of spatial size in_hw.

    Returns the bare Conv2d when the padding is symmetric (the common stride-1 case), otherwise
    Sequential(ZeroPad2d, Conv2d) so that the output matches the TFLite reference pixel for pixel.
    """
    kh, kw = (kernel, kernel) if isinstance(kernel, int) else kernel
    top, bottom = tf_same_padding(in_hw[0], kh, stride)
    left, right = tf_same_padding(in_hw[1], kw, stride)
    if top == bottom and left == right:
        return nn.Conv2d(in_ch, out_ch, (kh, kw), stride, padding=(top, left), groups=groups)
    return nn.Sequential(
        nn.ZeroPad2d((left, right, top, bottom)),
        nn.Conv2d(in_ch, out_ch, (kh, kw), stride, padding=0, groups=groups),
    )


def init_relu_net(module: nn.Module) -> None:
    """He-normal weights and small biases for BN-free ReLU nets, so activations neither vanish
    nor explode through the depth of the model (torch's default init shrinks them per layer)."""
    for m in module.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.1, 0.1)


def calibrate_batch_norms(model: nn.Module, batch_shape: tuple[int, ...]) -> None:
    """Gives every BatchNorm non-trivial running statistics and affine parameters.

    Freshly initialised BNs are identities in eval mode (mean 0, var 1, scale 1, shift 0), which
    would let a compiler that mishandles them pass every test. One train-mode pass over a random
    batch (momentum None = plain average, so the stats are exactly that batch's) sets realistic
    statistics that also keep the eval-mode activations well scaled; the affine parameters are
    then jittered.
    """
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
    model.train()
    with torch.no_grad():
        model(torch.rand(batch_shape))
        for bn in bns:
            bn.momentum = 0.1
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
    model.eval()
