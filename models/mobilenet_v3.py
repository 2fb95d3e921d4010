"""MobileNetV3-Large (1000 classes) with torchvision's layer structure: inverted residuals with
ReLU in the early blocks and hardswish in the late ones, squeeze-and-excitation gated by a
hardsigmoid, a hardswish classifier head; batch norms with real statistics. Written here because
torchvision is not usable with the project's torch; the parameter count is torchvision's
mobilenet_v3_large's (5,483,032). Input 1x3x224x224."""

import torch
from torch import nn

from .efficientnet import calibrate
from .mobilenet_v2 import _make_divisible


class ConvBNAct(nn.Sequential):
    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int = 1, groups: int = 1,
                 act: type[nn.Module] | None = nn.Hardswish):
        layers = [nn.Conv2d(in_ch, out_ch, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(out_ch, eps=1e-3)]
        if act is not None:
            layers.append(act())
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        squeeze = _make_divisible(channels // 4)
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * nn.functional.hardsigmoid(self.fc2(nn.functional.relu(self.fc1(s))))


class InvertedResidual(nn.Module):
    def __init__(self, in_ch: int, kernel: int, hidden: int, out_ch: int, se: bool, act: str, stride: int):
        super().__init__()
        activation = nn.Hardswish if act == "HS" else nn.ReLU
        layers: list[nn.Module] = []
        if hidden != in_ch:
            layers.append(ConvBNAct(in_ch, hidden, 1, act=activation))
        layers.append(ConvBNAct(hidden, hidden, kernel, stride, groups=hidden, act=activation))
        if se:
            layers.append(SqueezeExcitation(hidden))
        layers.append(ConvBNAct(hidden, out_ch, 1, act=None))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and in_ch == out_ch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV3Large(nn.Module):
    # input channels, kernel, expanded channels, output channels, squeeze-excite, activation, stride
    SETTINGS = ((16, 3, 16, 16, False, "RE", 1), (16, 3, 64, 24, False, "RE", 2),
                (24, 3, 72, 24, False, "RE", 1), (24, 5, 72, 40, True, "RE", 2),
                (40, 5, 120, 40, True, "RE", 1), (40, 5, 120, 40, True, "RE", 1),
                (40, 3, 240, 80, False, "HS", 2), (80, 3, 200, 80, False, "HS", 1),
                (80, 3, 184, 80, False, "HS", 1), (80, 3, 184, 80, False, "HS", 1),
                (80, 3, 480, 112, True, "HS", 1), (112, 3, 672, 112, True, "HS", 1),
                (112, 5, 672, 160, True, "HS", 2), (160, 5, 960, 160, True, "HS", 1),
                (160, 5, 960, 160, True, "HS", 1))

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = [ConvBNAct(3, 16, 3, stride=2)]
        layers += [InvertedResidual(*setting) for setting in self.SETTINGS]
        layers.append(ConvBNAct(160, 960, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(1280, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def mobilenet_v3_large():
    model = MobileNetV3Large()
    calibrate(model, (2, 3, 224, 224))
    return model.eval(), (torch.rand(1, 3, 224, 224),)
