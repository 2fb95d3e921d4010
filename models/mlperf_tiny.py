"""The four MLPerf Tiny reference architectures, layer for layer as in the trained TFLite files
(mlcommons/tiny's reference models; models/README.md): same kernel shapes, strides, SAME paddings,
fused ReLUs, pooling and final softmax. The TFLite graphs have their batch norms folded into the
convolutions, so these models are conv-with-bias + ReLU, which gives the same parameter count.

Torch layout is NCHW: the TFLite input 1x49x10x1 is 1x1x49x10 here, 1x96x96x3 is 1x3x96x96.
Weights are random (seeded); the architectures, not the trained values, are what benchmarks use.
"""

import torch
from torch import nn

from .common import init_relu_net, same_conv


class DsCnn(nn.Module):
    """Keyword spotting DS-CNN (kws_ref_model.tflite): 1x1x49x10 MFCC -> 12 class probabilities.

    conv 10x4/2 (64) then four depthwise-separable blocks (dw 3x3 + pw 1x1, 64 channels) on a
    25x5 map, global average pool 25x5, fully connected 64->12, softmax.
    """

    def __init__(self, num_classes: int = 12, channels: int = 64):
        super().__init__()
        layers = [same_conv(1, channels, (10, 4), 2, (49, 10)), nn.ReLU()]
        for _ in range(4):
            layers += [same_conv(channels, channels, 3, 1, (25, 5), groups=channels), nn.ReLU()]
            layers += [nn.Conv2d(channels, channels, 1), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d((25, 5))
        self.fc = nn.Linear(channels, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x))
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class MobileNetV1(nn.Module):
    """Visual wake words MobileNetV1 alpha 0.25 (vww_96_int8.tflite): 1x3x96x96 -> 2 probabilities.

    conv 3x3/2 (8) then 13 depthwise-separable blocks (channels 16,32,32,64,64,128 x6,256,256;
    stride 2 at blocks 2,4,6,12), average pool 3x3, fully connected 256->2, softmax.
    """

    # (output channels of the pointwise conv, stride of the depthwise conv)
    BLOCKS = ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1),
              (128, 1), (128, 1), (128, 1), (256, 2), (256, 1))

    def __init__(self, num_classes: int = 2, input_size: int = 96):
        super().__init__()
        size = input_size
        layers = [same_conv(3, 8, 3, 2, (size, size)), nn.ReLU()]
        size = -(-size // 2)
        ch = 8
        for out_ch, stride in self.BLOCKS:
            layers += [same_conv(ch, ch, 3, stride, (size, size), groups=ch), nn.ReLU()]
            size = -(-size // stride)
            layers += [nn.Conv2d(ch, out_ch, 1), nn.ReLU()]
            ch = out_ch
        self.features = nn.Sequential(*layers)
        self.pool = nn.AvgPool2d(size)
        self.fc = nn.Linear(ch, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.features(x))
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class ResidualStage(nn.Module):
    """One ResNet-8 stage: conv3x3/s + ReLU, conv3x3, plus the shortcut (identity, or 1x1/s
    conv when the shape changes), then ReLU on the sum (the TFLite ADD with fused ReLU)."""

    def __init__(self, in_ch: int, out_ch: int, stride: int, in_size: int):
        super().__init__()
        self.conv1 = same_conv(in_ch, out_ch, 3, stride, (in_size, in_size))
        out_size = -(-in_size // stride)
        self.conv2 = same_conv(out_ch, out_ch, 3, 1, (out_size, out_size))
        self.shortcut = (nn.Identity() if stride == 1 and in_ch == out_ch
                         else same_conv(in_ch, out_ch, 1, stride, (in_size, in_size)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(y + self.shortcut(x))


class ResNet8(nn.Module):
    """Image classification ResNet-8 (pretrainedResnet_quant.tflite): 1x3x32x32 -> 10 probabilities.

    conv 3x3 (16) + ReLU, three residual stages of 16, 32/2 and 64/2 channels, average pool 8x8,
    fully connected 64->10, softmax.
    """

    def __init__(self, num_classes: int = 10):
        super().__init__()
        self.stem = same_conv(3, 16, 3, 1, (32, 32))
        self.stage1 = ResidualStage(16, 16, 1, 32)
        self.stage2 = ResidualStage(16, 32, 2, 32)
        self.stage3 = ResidualStage(32, 64, 2, 16)
        self.pool = nn.AvgPool2d(8)
        self.fc = nn.Linear(64, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.stem(x))
        x = self.stage3(self.stage2(self.stage1(x)))
        x = self.pool(x)
        return torch.softmax(self.fc(torch.flatten(x, 1)), dim=1)


class FcAutoencoder(nn.Module):
    """Anomaly detection FC autoencoder (ad01_int8.tflite): 1x640 -> 1x640 reconstruction.

    640->128->128->128->128->8->128->128->128->128->640, ReLU after every layer but the last.
    """

    WIDTHS = (640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640)

    def __init__(self):
        super().__init__()
        layers = []
        for i, (a, b) in enumerate(zip(self.WIDTHS[:-1], self.WIDTHS[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(self.WIDTHS) - 2:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def _finish(model: nn.Module) -> nn.Module:
    init_relu_net(model)
    return model.eval()


def ds_cnn():
    return _finish(DsCnn()), (torch.randn(1, 1, 49, 10),)


def mobilenet_v1_025():
    return _finish(MobileNetV1()), (torch.rand(1, 3, 96, 96),)


def resnet_8():
    return _finish(ResNet8()), (torch.rand(1, 3, 32, 32),)


def fc_autoencoder():
    return _finish(FcAutoencoder()), (torch.randn(1, 640),)
