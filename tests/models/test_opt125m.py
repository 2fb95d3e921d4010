"""OPT-125M (transformers' OPTForCausalLM(OPTConfig()), random weights): 125.2 M parameters,
the reference workload's shapes ([1,128] int64 ids and mask -> [1,50272] float32 last-token
logits). The export (about a minute and a 500 MB .pt2) is marked slow: PTERON_SLOW_TESTS=1."""

import pytest
import torch
from pteron import zoo


def test_opt125m_builds_and_runs_reference_workload():
    model, (ids, mask) = zoo.get("opt-125m")
    assert ids.shape == (1, 128) and ids.dtype == torch.int64
    assert mask.shape == (1, 128) and mask.dtype == torch.int64
    assert sum(p.numel() for p in model.parameters()) == 125_239_296
    cfg = model.lm.config
    assert (cfg.num_hidden_layers, cfg.hidden_size, cfg.num_attention_heads, cfg.ffn_dim,
            cfg.vocab_size) == (12, 768, 12, 3072, 50272)
    with torch.no_grad():
        logits = model(ids, mask)
        full = model.lm(input_ids=ids, attention_mask=mask, use_cache=False).logits
    assert logits.shape == (1, 50272) and logits.dtype == torch.float32
    torch.testing.assert_close(logits, full[:, -1, :])


@pytest.mark.slow
def test_opt125m_export_slow(tmp_path):
    path = zoo.export("opt-125m", tmp_path / "opt-125m.pt2", log=lambda _msg: None)
    ep = torch.export.load(path)
    model, inputs = zoo.get("opt-125m")
    with torch.no_grad():
        torch.testing.assert_close(ep.module()(*inputs), model(*inputs), rtol=1e-4, atol=1e-4)
