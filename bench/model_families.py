"""Small nets of families the zoo does not have, for bench-default: the default program must
hold against the explicit lists on architectures nobody tuned it for. Each is a few blocks of
its family's characteristic layers, random weights from a fixed seed (speed, not accuracy):

- convnext: ConvNeXt blocks (7x7 depthwise, LayerNorm over channels between permutes, GELU MLP,
  layer scale), two stages, 224x224.
- densenet: DenseNet layers (BN-ReLU-1x1-BN-ReLU-3x3, each concatenated to its input), 128x128.
- audio-1d: a waveform front end (Conv1d with a wide strided window, BatchNorm1d), max pools,
  1-D convolutions and a mean over time, 1 s at 16 kHz.
- tcn: a temporal convolutional net (dilated causal Conv1d through F.pad, residual adds).
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn


class ConvNeXtBlock(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.dw = nn.Conv2d(d, d, 7, padding=3, groups=d)
        self.norm = nn.LayerNorm(d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.gamma = nn.Parameter(torch.full((d,), 0.1))

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(F.gelu(self.fc1(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class ConvNeXt(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 64, 4, 4)
        self.stage1 = nn.Sequential(*[ConvNeXtBlock(64) for _ in range(2)])
        self.down = nn.Conv2d(64, 128, 2, 2)
        self.stage2 = nn.Sequential(*[ConvNeXtBlock(128) for _ in range(3)])
        self.head = nn.Linear(128, 100)

    def forward(self, x):
        x = self.stage2(self.down(self.stage1(self.stem(x))))
        return self.head(x.mean((2, 3)))


class DenseNet(nn.Module):
    def __init__(self, c0: int = 32, growth: int = 16, layers: int = 6):
        super().__init__()
        self.stem = nn.Conv2d(3, c0, 3, 2, 1)
        self.layers = nn.ModuleList(
            nn.Sequential(nn.BatchNorm2d(c0 + i * growth), nn.ReLU(),
                          nn.Conv2d(c0 + i * growth, 4 * growth, 1), nn.BatchNorm2d(4 * growth),
                          nn.ReLU(), nn.Conv2d(4 * growth, growth, 3, padding=1))
            for i in range(layers))
        self.fc = nn.Linear(c0 + layers * growth, 10)

    def forward(self, x):
        x = self.stem(x)
        for layer in self.layers:
            x = torch.cat([x, layer(x)], 1)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class AudioNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 32, 80, 4), nn.BatchNorm1d(32), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(32, 64, 3, padding=1), nn.BatchNorm1d(64), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(64, 128, 3, padding=1), nn.BatchNorm1d(128), nn.ReLU(), nn.MaxPool1d(4),
            nn.Conv1d(128, 128, 3, padding=1), nn.ReLU())
        self.fc = nn.Linear(128, 35)

    def forward(self, x):
        return self.fc(self.net(x).mean(2))


class Tcn(nn.Module):
    def __init__(self, channels: int = 64, levels: int = 6):
        super().__init__()
        self.inp = nn.Conv1d(16, channels, 1)
        self.convs = nn.ModuleList(nn.Conv1d(channels, channels, 3, dilation=2 ** i)
                                   for i in range(levels))
        self.out = nn.Conv1d(channels, 8, 1)

    def forward(self, x):
        x = self.inp(x)
        for i, conv in enumerate(self.convs):
            x = x + F.relu(conv(F.pad(x, (2 * 2 ** i, 0))))
        return self.out(x)


FAMILIES = {
    "convnext": (ConvNeXt, (1, 3, 224, 224)),
    "densenet": (DenseNet, (1, 3, 128, 128)),
    "audio-1d": (AudioNet, (1, 1, 16000)),
    "tcn": (Tcn, (1, 16, 1000)),
}


def build(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The family's net in eval mode (batch norms given non-trivial statistics) and an input."""
    cls, shape = FAMILIES[name]
    torch.manual_seed(0)
    model = cls().eval()
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
    return model, (torch.randn(*shape, generator=torch.Generator().manual_seed(1)),)


def export(name: str, path: Path) -> None:
    model, inputs = build(name)
    torch.export.save(torch.export.export(model, inputs).run_decompositions(), path)
