"""pteron::sdpa_kv (kernels/optimized/op_sdpa_kv.cpp): attention over a KV cache read in place,
grouped-query heads sharing a key/value head, against torch's scaled_dot_product_attention on
the repeated caches. Decode-sized queries (keys read as rows) and prefill-sized ones (keys
transposed once into scratch), float and bool masks (per head or broadcast), the causal mask
whose future blocks are skipped, 1 and 2 threads (bit-identical). Tolerance: atol 1e-5, rtol
1e-4 (the blocked online softmax sums in another order than torch).
"""

import math

import pteron_native
import pytest
import torch
from kernel_harness import assert_close, run_kernel

OP = "pteron::sdpa_kv.out"


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def reference(q, k, v, mask, scale, heads):
    b, hkv = k.shape[:2]
    rep = heads // hkv
    q4 = q.view(b, heads, *q.shape[1:])
    k4, v4 = k.repeat_interleave(rep, 1), v.repeat_interleave(rep, 1)
    s = (q4 @ k4.transpose(-1, -2)) * scale
    if mask is not None:
        s = s.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else s + mask
    return (torch.softmax(s, -1) @ v4).reshape(b * heads, q.shape[1], v.shape[-1])


def causal(lq, lk, start, per_head=None):
    """The decoder's additive mask: query i (at position start + i) sees keys <= its position."""
    allowed = torch.arange(lk)[None, :] <= (start + torch.arange(lq))[:, None]
    mask = torch.zeros(lq, lk).masked_fill(~allowed, float("-inf"))
    return mask if per_head is None else mask.expand(1, per_head, lq, lk).contiguous()


@pytest.mark.parametrize("b,heads,hkv,lq,lk,d,dv,start", [
    (1, 12, 4, 1, 256, 64, 64, 192),     # llama-110m decode step
    (1, 12, 4, 32, 256, 64, 64, 40),     # prefill chunk: keys transposed into scratch
    (1, 4, 4, 3, 37, 16, 16, 10),        # no grouping
    (2, 6, 2, 5, 150, 8, 12, 100),       # batch 2, odd sizes, key blocks with a tail
    (1, 8, 1, 1, 20, 128, 128, 19),      # multi-query, D = 128
])
@pytest.mark.parametrize("mask_kind", ["causal", "causal_per_head", "bool", None])
def test_matches_torch(threads, b, heads, hkv, lq, lk, d, dv, start, mask_kind):
    q, k, v = rand(b * heads, lq, d, seed=1), rand(b, hkv, lk, d, seed=2), rand(b, hkv, lk, dv, seed=3)
    mask = None
    if mask_kind == "causal":
        mask = causal(lq, lk, start)
    elif mask_kind == "causal_per_head":
        mask = causal(lq, lk, start, per_head=heads)
        mask[:, 1, :, 1] = float("-inf")  # heads differ
    elif mask_kind == "bool":
        mask = torch.rand(b, heads, lq, lk, generator=torch.Generator().manual_seed(4)) < 0.3
        mask[..., 0] = False
    scale = 1 / math.sqrt(d)
    out = torch.full((b * heads, lq, dv), float("nan"))
    run_kernel(OP, [q, k, v, mask, scale, heads, False, out], library="optimized")
    assert_close(out, reference(q, k, v, mask, scale, heads), atol=1e-5, rtol=1e-4,
                 what=f"sdpa_kv {mask_kind}")
    if threads == 2:
        pteron_native.set_num_threads(1)
        one = torch.full_like(out, float("nan"))
        run_kernel(OP, [q, k, v, mask, scale, heads, False, one], library="optimized")
        assert torch.equal(out, one)


def test_fully_masked_row_is_nan_or_zero():
    q, k, v = rand(4, 3, 8), rand(1, 2, 5, 8), rand(1, 2, 5, 8)
    mask = torch.zeros(3, 5, dtype=torch.bool)
    mask[1] = True
    out, safe = torch.empty(4, 3, 8), torch.empty(4, 3, 8)
    run_kernel(OP, [q, k, v, mask, 0.5, 4, False, out], library="optimized")
    run_kernel(OP, [q, k, v, mask, 0.5, 4, True, safe], library="optimized")
    assert torch.isnan(out[:, 1]).all() and not torch.isnan(out[:, 0::2]).any()
    assert (safe[:, 1] == 0).all() and torch.equal(safe[:, 0::2], out[:, 0::2])


@pytest.mark.parametrize("case,message", [
    ("heads", r"3 query heads do not fit q's 4 slices over 1 batch\(es\) of 2 key/value heads"),
    ("k rank", r"k and v 4-d"),
    ("head size", r"shapes do not match"),
    ("mask", r"mask dim 0 of size 4 does not broadcast to 3"),
    ("dtype", r"must be float32"),
])
def test_bad_arguments_are_one_error(case, message):
    q, k, v, mask, heads = rand(4, 3, 8), rand(1, 2, 5, 8), rand(1, 2, 5, 8), None, 4
    if case == "heads":
        heads = 3
    elif case == "k rank":
        k = rand(2, 5, 8)
    elif case == "head size":
        k = rand(1, 2, 5, 7)
    elif case == "mask":
        mask = torch.zeros(4, 5)
    elif case == "dtype":
        v = v.double()
    with pytest.raises(RuntimeError, match=message):
        run_kernel(OP, [q, k, v, mask, 0.5, heads, False, torch.empty(4, 3, 8)], library="optimized")
