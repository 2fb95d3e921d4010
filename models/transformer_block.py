"""A small 2-layer pre-norm transformer encoder, written out op by op (no nn.MultiheadAttention,
whose fused fast path would hide the graph): layer norm, multi-head self-attention with a causal
mask, feed-forward with GELU, residual adds, final layer norm. Embedding-free: the input is
already a sequence of vectors, 1x16x64. Used as an interop fixture and compiler test model."""

import math

import torch
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, dim: int, heads: int, seq_len: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        # True above the diagonal: positions a token may not attend to.
        self.register_buffer("mask", torch.ones(seq_len, seq_len, dtype=torch.bool).triu(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        dh = d // self.heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q = q.view(b, s, self.heads, dh).transpose(1, 2)
        k = k.view(b, s, self.heads, dh).transpose(1, 2)
        v = v.view(b, s, self.heads, dh).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(dh)
        scores = scores.masked_fill(self.mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, s, d))


class EncoderLayer(nn.Module):
    def __init__(self, dim: int, heads: int, ffn: int, seq_len: int):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, seq_len)
        self.ln2 = nn.LayerNorm(dim)
        self.ffn = nn.Sequential(nn.Linear(dim, ffn), nn.GELU(), nn.Linear(ffn, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class TransformerBlock(nn.Module):
    def __init__(self, dim: int = 64, heads: int = 4, ffn: int = 256, layers: int = 2,
                 seq_len: int = 16):
        super().__init__()
        self.layers = nn.Sequential(*[EncoderLayer(dim, heads, ffn, seq_len) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln_f(self.layers(x))


def transformer_block():
    model = TransformerBlock()
    # Non-trivial layer-norm affine parameters, so a compiler that drops them fails the tests.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return model.eval(), (torch.randn(1, 16, 64),)
