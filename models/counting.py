"""Multiply-accumulate and parameter counts, the way MLPerf Tiny and model cards count them:
convolutions and fully connected layers only (out elements x in-channels-per-group x kernel
area; rows x in x out), one MAC per weight use; pools, adds, activations and biases are free."""

import torch
from torch import nn


def count_macs(model: nn.Module, inputs: tuple) -> int:
    """MACs of one forward pass of model on inputs, from the shapes seen by forward hooks."""
    total = 0

    def conv_hook(m: nn.Conv2d, _inp, out):
        nonlocal total
        kh, kw = m.kernel_size
        total += out.numel() * (m.in_channels // m.groups) * kh * kw

    def linear_hook(m: nn.Linear, _inp, out):
        nonlocal total
        total += out.numel() * m.in_features

    handles = []
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            handles.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            handles.append(m.register_forward_hook(linear_hook))
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return total


def count_params(model: nn.Module) -> int:
    """Number of parameter elements (weights and biases), shared tensors counted once."""
    return sum(p.numel() for p in model.parameters())
