"""A ViT-B/16-style image encoder cut to 6 layers: 16x16 patches of a 224x224 image embedded by a
strided convolution, a class token, learned position embeddings, pre-norm encoder layers (layer
norm, 12-head self-attention, layer norm, MLP 768 -> 3072 -> 768 with GELU, residuals), a final
layer norm and a linear head on the class token (torchvision's vit_b_16 layout, 6 of its 12
layers). Attention is written as matmuls and a softmax, as torch.export decomposes it anyway."""

import math

import torch
from torch import nn


class EncoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int, mlp: int):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
        attn = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(attn)
        return x + self.fc2(nn.functional.gelu(self.fc1(self.ln2(x))))


class ViT(nn.Module):
    def __init__(self, image: int = 224, patch: int = 16, dim: int = 768, layers: int = 6, heads: int = 12,
                 mlp: int = 3072, num_classes: int = 1000):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        self.layers = nn.Sequential(*[EncoderLayer(dim, heads, mlp) for _ in range(layers)])
        self.ln = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)
        for ln in [m for m in self.modules() if isinstance(m, nn.LayerNorm)]:
            with torch.no_grad():  # not identities
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        return self.head(self.ln(self.layers(x))[:, 0])


def vit_b16_6l():
    return ViT().eval(), (torch.rand(1, 3, 224, 224),)
