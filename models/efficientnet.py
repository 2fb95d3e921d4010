"""EfficientNet-B0 (1000 classes) with torchvision's layer structure: MBConv blocks (1x1 expand,
depthwise 3x3 / 5x5, squeeze-and-excitation with SiLU and a sigmoid gate, 1x1 project, a residual
where shapes allow), SiLU activations, batch norms (given real statistics so they are not
identities). Written here because torchvision is not usable with the project's torch; the
parameter count is torchvision's efficientnet_b0's (5,288,548). Input 1x3x224x224."""

import torch
from torch import nn


class ConvBNSiLU(nn.Sequential):
    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int = 1, groups: int = 1,
                 act: bool = True):
        layers = [nn.Conv2d(in_ch, out_ch, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                  nn.BatchNorm2d(out_ch, eps=1e-3)]
        if act:
            layers.append(nn.SiLU())
        super().__init__(*layers)


class SqueezeExcitation(nn.Module):
    def __init__(self, channels: int, squeeze: int):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = nn.functional.adaptive_avg_pool2d(x, 1)
        return x * torch.sigmoid(self.fc2(nn.functional.silu(self.fc1(s))))


class MBConv(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel: int, stride: int, expand: int):
        super().__init__()
        hidden = in_ch * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers.append(ConvBNSiLU(in_ch, hidden, 1))
        layers += [ConvBNSiLU(hidden, hidden, kernel, stride, groups=hidden),
                   SqueezeExcitation(hidden, max(1, in_ch // 4)),
                   ConvBNSiLU(hidden, out_ch, 1, act=False)]
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and in_ch == out_ch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.block(x) if self.residual else self.block(x)


class EfficientNetB0(nn.Module):
    # expansion, kernel, first stride, input channels, output channels, repeats
    STAGES = ((1, 3, 1, 32, 16, 1), (6, 3, 2, 16, 24, 2), (6, 5, 2, 24, 40, 2), (6, 3, 2, 40, 80, 3),
              (6, 5, 1, 80, 112, 3), (6, 5, 2, 112, 192, 4), (6, 3, 1, 192, 320, 1))

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        layers: list[nn.Module] = [ConvBNSiLU(3, 32, 3, stride=2)]
        for expand, kernel, stride, in_ch, out_ch, repeats in self.STAGES:
            for i in range(repeats):
                layers.append(MBConv(in_ch if i == 0 else out_ch, out_ch, kernel, stride if i == 0 else 1,
                                     expand))
        layers.append(ConvBNSiLU(320, 1280, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


def calibrate(model: nn.Module, batch_shape: tuple[int, ...]) -> None:
    """Non-trivial batch norms whose statistics match what they see: affine parameters jittered
    first, then one train-mode pass (momentum None: exactly that batch's statistics).
    common.calibrate_batch_norms jitters after the pass, which 16 residual blocks with
    squeeze-excite gates compound into activations of 1e4; this order keeps them of order 1."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.2, 0.2)
            bn.reset_running_stats()
            bn.momentum = None
        model.train()
        model(torch.rand(batch_shape))
    for bn in bns:
        bn.momentum = 0.1
    model.eval()


def efficientnet_b0():
    model = EfficientNetB0()
    calibrate(model, (2, 3, 224, 224))
    return model.eval(), (torch.rand(1, 3, 224, 224),)
