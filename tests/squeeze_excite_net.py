"""A squeeze-excite block (MobileNetV3's and EfficientNet's) shared by the Cortex-M kernel and
firmware tests: conv, activation, global mean, two 1x1 convolutions, gate, then the activation
times its [N, C, 1, 1] channel weights, then a 1x1 convolution. torch is imported when the net
is built, so that importing this module stays cheap."""


def squeeze_excite_net(in_channels: int, act: str = "silu", gate: str = "sigmoid",
                       weights_first: bool = False):
    """`act` and `gate` name torch.nn.functional activations; `weights_first` puts the channel
    weights first in the multiply."""
    import torch
    import torch.nn.functional as F

    class SqueezeExcite(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(in_channels, 16, 3, padding=1)
            self.reduce = torch.nn.Conv2d(16, 4, 1)
            self.expand = torch.nn.Conv2d(4, 16, 1)
            self.out = torch.nn.Conv2d(16, 8, 1)

        def forward(self, x):
            y = getattr(F, act)(self.conv(x))
            w = self.expand(F.relu(self.reduce(y.mean((2, 3), keepdim=True))))
            w = getattr(F, gate)(w)
            return self.out(w * y if weights_first else y * w)

    return SqueezeExcite()
