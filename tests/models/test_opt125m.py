"""OPT-125M (transformers' OPTForCausalLM(OPTConfig()), random weights): 125.2 M parameters,
the reference workload's shapes ([1,128] int64 ids and mask -> [1,50272] float32 last-token
logits)."""

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

# The OPT-125M export itself is exercised by tests/compiler/test_zoo_programs.py, which exports,
# compiles and runs it against PyTorch on every `make test`.
