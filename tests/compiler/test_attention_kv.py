"""The attention_kv pass (compiler/passes/attention_kv.cpp): a decoder exported by
transformers' convert_and_export_with_cache reads its static KV cache through repeat_kv's
expand, the keys' transpose and the math sdpa's scales; with the "optimized" library the pass
makes that pteron::sdpa_kv over the caches as stored, so no step copies a cache, and the
program's logits still match the exported program's at every prefill and decode step.

Tolerance: max abs error within 1e-4 * (1 + max |reference|) per step.
"""

import pteron
import pytest
import torch
from torch.export import Dim

CACHE = 40
CHUNK = 8


def decoder(heads, kv_heads):
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM
    from transformers.integrations.executorch import convert_and_export_with_cache

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=96,
                                         num_hidden_layers=2, num_attention_heads=heads,
                                         num_key_value_heads=kv_heads,
                                         max_position_embeddings=64)).eval()
    model.generation_config = GenerationConfig(use_cache=True, cache_implementation="static",
                                               max_length=CACHE,
                                               cache_config={"batch_size": 1, "max_cache_len": CACHE})
    seq = Dim("seq", min=1, max=CHUNK)
    return convert_and_export_with_cache(model, torch.tensor([[1, 2]]), torch.tensor([0, 1]),
                                         dynamic_shapes={"input_ids": {1: seq},
                                                         "cache_position": {0: seq}})


def rewritten(lowered):
    line = next(p for p in lowered.report["passes"] if p.startswith("optimized/attention_kv"))
    return int(line.split(":")[1].split()[0])


@pytest.mark.parametrize("heads,kv_heads", [(4, 2), (4, 4), (4, 1)], ids=["gqa", "mha", "mqa"])
def test_reads_the_cache_in_place_and_matches_every_step(heads, kv_heads):
    ep = decoder(heads, kv_heads)
    lowered = pteron.to_edge_transform_and_lower(ep, kernels=("optimized", "portable"))
    assert rewritten(lowered) == 2  # one per layer
    method = lowered.load().load_method("forward")
    ops = set(method.instruction_names())
    assert "pteron::sdpa_kv.out" in ops
    assert not {"pteron::sdpa.out", "aten::expand_copy.out", "aten::bmm.out"} & ops, ops
    reference = ep.module()
    steps = [list(range(3, 3 + CHUNK)), [40, 41, 42], [7], [8], [9]]  # a chunk, then decoding
    pos = 0
    for ids in steps:
        inputs = (torch.tensor([ids]), torch.arange(pos, pos + len(ids)))
        with torch.no_grad():
            expected = reference(input_ids=inputs[0], cache_position=inputs[1])
        actual = method.execute(list(inputs))[0]
        tol = 1e-4 * (1 + float(expected.abs().max()))
        err = float((actual - expected).abs().max())
        assert err <= tol, f"step at position {pos}: max error {err} > {tol}"
        pos += len(ids)


def test_portable_programs_keep_plain_ops():
    lowered = pteron.to_edge_transform_and_lower(decoder(4, 2), kernels=("portable",))
    ops = set(lowered.load().load_method("forward").instruction_names())
    assert not any(op.startswith("pteron::") for op in ops), ops
