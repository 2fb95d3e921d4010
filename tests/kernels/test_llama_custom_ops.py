"""ExecuTorch's LLM custom ops (use_sdpa_with_kv_cache): llama::update_cache.out writes a step
into a [batch, positions, heads, head_dim] cache at start_pos; llama::custom_sdpa.out attends
queries at positions start_pos.. over that cache, grouped-query, causal or with an additive
mask, checked against torch's scaled_dot_product_attention on the same layout turned to
[batch, heads, positions, dim]. End to end (ExecuTorch-exported Llama, ExecuTorch's own
logits): tests/interop/test_executorch_llm.py. Also: aten::_local_scalar_dense (item())."""

import pytest
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel


def test_update_cache_writes_the_positions_and_nothing_else():
    cache = torch.randn(1, 10, 2, 8)
    before = cache.clone()
    value = torch.randn(1, 3, 2, 8)
    placeholder = torch.full((1,), 7.0)
    run_kernel("llama::update_cache.out", [value, cache, 4, placeholder])
    want = before.clone()
    want[:, 4:7] = value
    assert torch.equal(cache, want) and placeholder.item() == 7.0
    # A strided value (a transposed view, as before a copy) is read by its strides.
    value = torch.randn(1, 2, 3, 8).transpose(1, 2)  # [1, 3, 2, 8], not contiguous
    run_kernel("llama::update_cache.out", [value, cache, 0, placeholder])
    assert torch.equal(cache[:, :3], value)


@pytest.mark.parametrize("value, cache, start, message", [
    (torch.randn(1, 3, 2, 8), torch.randn(1, 10, 2, 8), 8, r"positions \[8, 11\) do not fit a cache of 10"),
    (torch.randn(1, 3, 2, 8), torch.randn(1, 10, 4, 8), 0, "differ in dim 2"),
    (torch.randn(1, 3, 2, 8), torch.randn(1, 10, 2, 8, dtype=torch.float16), 0, "value is float32 but the cache is float16"),
    (torch.randn(3, 2, 8), torch.randn(1, 10, 2, 8), 0, "must be 4-d"),
])
def test_update_cache_refuses_what_does_not_fit(value, cache, start, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel("llama::update_cache.out", [value, cache, start, torch.empty(1)])


def reference(q, k, v, start, mask=None, causal=False, scale=None):
    """torch SDPA on [B, H, S, D], the cache's first start + S positions (all with a mask)."""
    s = q.shape[1]
    keys = k.shape[1] if mask is not None else start + s
    group = q.shape[2] // k.shape[2]
    qh = q.transpose(1, 2).double()
    kh = k[:, :keys].repeat_interleave(group, dim=2).transpose(1, 2).double()
    vh = v[:, :keys].repeat_interleave(group, dim=2).transpose(1, 2).double()
    if causal:
        mask = torch.zeros(s, keys, dtype=torch.float64)
        pos = torch.arange(s)[:, None] + start
        mask.masked_fill_(torch.arange(keys)[None, :] > pos, float("-inf"))
    out = F.scaled_dot_product_attention(qh, kh, vh, attn_mask=None if mask is None else mask.double(), scale=scale)
    return out.transpose(1, 2).to(q.dtype)


@pytest.mark.parametrize("start, s, causal", [(0, 5, True), (5, 1, True), (3, 4, True), (2, 3, False)])
def test_custom_sdpa_matches_torch_over_the_filled_cache(start, s, causal):
    torch.manual_seed(start * 10 + s)
    q = torch.randn(1, s, 4, 16)
    k = torch.randn(1, 12, 2, 16)  # GQA: 4 query heads over 2 KV heads
    v = torch.randn(1, 12, 2, 16)
    k[:, start + s:] = float("nan")  # unwritten positions are never read
    v[:, start + s:] = float("nan")
    out = torch.empty(1, s, 4, 16)
    run_kernel("llama::custom_sdpa.out", [q, k, v, start, None, 0.0, causal, None, out])
    torch.testing.assert_close(out, reference(q, k, v, start, causal=causal), atol=1e-5, rtol=1e-5)


def test_custom_sdpa_with_a_mask_and_a_scale_and_half_precision():
    torch.manual_seed(1)
    q, k, v = torch.randn(1, 3, 2, 8), torch.randn(1, 6, 2, 8), torch.randn(1, 6, 2, 8)
    mask = torch.randn(3, 6)
    mask[0, 4:] = float("-inf")
    out = torch.empty(1, 3, 2, 8)
    run_kernel("llama::custom_sdpa.out", [q, k, v, 0, mask, 0.0, False, 0.5, out])
    torch.testing.assert_close(out, reference(q, k, v, 0, mask=mask, scale=0.5), atol=1e-5, rtol=1e-5)
    qh, kh, vh = q.half(), k.half(), v.half()
    out = torch.empty(1, 3, 2, 8, dtype=torch.float16)
    run_kernel("llama::custom_sdpa.out", [qh, kh, vh, 3, None, 0.0, True, None, out])
    torch.testing.assert_close(out, reference(qh.float(), kh.float(), vh.float(), 3, causal=True).half(), atol=2e-3, rtol=2e-3)


def test_custom_sdpa_resizes_a_dynamic_out():
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 8, 2, 8), torch.randn(1, 8, 2, 8)
    out = torch.empty(1, 7, 4, 8)  # the planned upper bound
    assert run_kernel("llama::custom_sdpa.out", [q, k, v, 0, None, 0.0, True, None, out], dynamic=[8]) == [(1, 2, 4, 8)]


@pytest.mark.parametrize("q, k, start, mask, causal, message", [
    (torch.randn(1, 3, 3, 8), torch.randn(1, 8, 2, 8), 0, None, True, "3 query heads do not group over 2 KV heads"),
    (torch.randn(1, 3, 4, 8), torch.randn(1, 8, 2, 8), 6, None, True, r"positions \[6, 9\) do not fit a cache of 8"),
    (torch.randn(1, 3, 4, 8), torch.randn(1, 8, 2, 4), 0, None, True, "does not fit key"),
    (torch.randn(1, 3, 4, 8), torch.randn(1, 8, 2, 8), 0, torch.zeros(3, 8), True, "attn_mask and is_causal together"),
    (torch.randn(1, 3, 4, 8), torch.randn(1, 8, 2, 8), 0, torch.zeros(3, 5), False, r"attn_mask must be float \[3, 8\]"),
])
def test_custom_sdpa_refuses_bad_shapes_with_one_line(q, k, start, mask, causal, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel("llama::custom_sdpa.out", [q, k, k.clone(), start, mask, 0.0, causal, None, torch.empty(q.shape)])


def test_local_scalar_dense_takes_one_element_of_any_dtype():
    # run_kernel returns no scalars, so the value itself is checked end to end: ExecuTorch's
    # Llama reads input_pos[0].item() into every slice and update_cache start, and
    # tests/interop/test_executorch_llm.py compares each step's logits.
    for x in (torch.tensor([5]), torch.tensor(2.5), torch.tensor([True]), torch.tensor([[3]], dtype=torch.int32)):
        run_kernel("aten::_local_scalar_dense", [x, 0])
    with pytest.raises(RuntimeError, match="a tensor of 2 elements has no single value"):
        run_kernel("aten::_local_scalar_dense", [torch.tensor([1, 2]), 0])
