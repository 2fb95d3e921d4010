"""A decoder-style test net shared by the Cortex-M kernel and firmware tests: conv, nearest 2x,
conv, bilinear to (20, 24), conv, bilinear 1.5x with align_corners. torch is imported when the
net is built, so that importing this module stays cheap."""


def upsample_net(in_channels: int):
    import torch
    import torch.nn.functional as F

    class UpsampleNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.Conv2d(in_channels, 8, 3, stride=2, padding=1)
            self.mid = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.dec = torch.nn.Conv2d(8, 4, 3, padding=1)

        def forward(self, x):
            y = F.relu(self.enc(x))
            y = F.interpolate(y, scale_factor=2, mode="nearest")
            y = F.relu(self.mid(y))
            y = F.interpolate(y, size=(20, 24), mode="bilinear", align_corners=False)
            y = F.relu(self.dec(y))
            return F.interpolate(y, scale_factor=1.5, mode="bilinear", align_corners=True)

    return UpsampleNet()
