"""Mixture-of-experts decoders (Mixtral's layout: a router picking 2 of 4 experts per token).
transformers exports their experts as transformers::grouped_mm_fallback (fp32 weights), the
token order sorted by expert and the offsets computed in the program (histc, cumsum): pteron
runs it on the grouped SGEMM (one product per expert with tokens).

Checked: a prefill's logits within 1e-4 (relative to the largest) of torch, on the default and
on the portable kernels; a module of the user's own calling torch._grouped_mm (bfloat16) within
2e-2; and
greedy generation with the static KV cache and a bounded dynamic T giving exactly the tokens of
Hugging Face's model.generate.
"""

import copy
import functools

import pteron
import pteron_native
import pytest
import torch
from llm_cli import generate_json
from torch.export import Dim

CACHE = 24
PROMPT = [5, 9, 3, 17, 60, 2, 41, 33, 8, 27]


@functools.cache
def mixtral():
    from transformers import GenerationConfig, MixtralConfig, MixtralForCausalLM

    torch.manual_seed(0)
    config = MixtralConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                           num_local_experts=4, num_experts_per_tok=2)
    model = MixtralForCausalLM(config).eval()
    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=CACHE,
        cache_config={"batch_size": 1, "max_cache_len": CACHE})
    return model


class Logits(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(ids, use_cache=False).logits


def relative_error(got, want):
    return float((torch.as_tensor(got) - want).abs().max() / want.abs().max())


@pytest.fixture
def portable_kernels_only():
    pteron_native.set_kernel_libraries(["portable"])
    yield
    pteron_native.set_kernel_libraries([])


def prefill_program(kernels):
    ids = torch.tensor([PROMPT])
    ep = pteron.export(Logits(mixtral()), (ids,))
    grouped = torch.ops.transformers.grouped_mm_fallback.default
    assert any(n.target == grouped for n in ep.graph.nodes)  # what this test is about
    with torch.no_grad():
        want = Logits(mixtral())(ids)
    return pteron.to_edge_transform_and_lower(ep, **kernels).load(), ids, want


def test_prefill_matches_torch_on_the_default_kernels():
    program, ids, want = prefill_program({})
    assert relative_error(program.forward(ids)[0], want) < 1e-4


def test_prefill_matches_torch_on_the_portable_kernels(portable_kernels_only):
    program, ids, want = prefill_program({"kernels": ["portable"]})
    assert relative_error(program.forward(ids)[0], want) < 1e-4


class TorchGroupedExperts(torch.nn.Module):
    """Top-1 routing written with torch._grouped_mm, as a user's own MoE layer would (bfloat16:
    torch's _grouped_mm takes no other dtype on the CPU)."""

    def __init__(self, experts=4, dim=16, hidden=32):
        super().__init__()
        self.experts = experts
        self.router = torch.nn.Linear(dim, experts)
        self.up = torch.nn.Parameter(torch.randn(experts, dim, hidden) / dim**0.5)
        self.down = torch.nn.Parameter(torch.randn(experts, hidden, dim) / hidden**0.5)

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        order = torch.argsort(choice)
        counts = torch.histc(choice.float(), bins=self.experts, min=0, max=self.experts - 1)
        offs = torch.cumsum(counts, 0, dtype=torch.int32)
        h = torch.relu(torch._grouped_mm(x[order], self.up, offs=offs))
        y = torch._grouped_mm(h, self.down, offs=offs)
        return torch.empty_like(y).index_copy(0, order, y)


def test_a_torch_grouped_mm_layer_matches_torch():
    torch.manual_seed(1)
    model, x = TorchGroupedExperts().bfloat16().eval(), torch.randn(24, 16).bfloat16()
    with torch.no_grad():
        want = model(x).float()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (x,))).load()
    # bfloat16 rounding of each product's inputs and outputs, in another order than torch's
    assert relative_error(torch.as_tensor(program.forward(x)[0]).float(), want) < 2e-2


def dequantized(w, bits, group):
    """torchao's SYMMETRIC per-group quantization along the last dim (what pteron's llm-*
    schemes store for a linear's [N, K], an embedding's rows and each expert's [N, K]), then
    dequantized: the float model the quantized program must compute."""
    qmin, qmax = (-128, 127) if bits == 8 else (-8, 7)
    g = w.reshape(*w.shape[:-1], -1, group)
    hi = torch.maximum(-g.amin(-1, keepdim=True).clamp(max=0), g.amax(-1, keepdim=True).clamp(min=0))
    scale = (hi / ((qmax - qmin) / 2)).clamp(min=torch.finfo(torch.float32).tiny)
    return (torch.clamp(torch.round(g * (1 / scale)), qmin, qmax) * scale).reshape(w.shape)


@pytest.mark.parametrize("scheme,bits,group,tolerance", [
    ("llm-int8", 8, 0, 1e-4), ("llm-int4", 4, 32, 1e-4),
    # 8da4w also rounds each token's activations to int8 (about 0.4% of its range)
    ("llm-8da4w", 4, 32, 2e-2)])
@pytest.mark.parametrize("tokens", [10, 40])  # 40: 8+ rows per expert, the weight-only SGEMM path
def test_quantized_experts_compute_the_dequantized_model(scheme, bits, group, tolerance, tokens):
    """--quantize llm-* quantizes the experts too (in an MoE model they are most of the
    weights): every grouped product becomes a quantized one, the program shrinks, and its
    logits are those of the model whose matrices are replaced by their dequantized values."""
    ids = torch.randint(0, 64, (1, tokens), generator=torch.Generator().manual_seed(tokens))
    ep = pteron.export(Logits(mixtral()), (ids,))
    fp32 = pteron.to_edge_transform_and_lower(ep)
    lowered = pteron.to_edge_transform_and_lower(ep, quantize=scheme, group_size=group or None)
    line = next(x for x in lowered.report["passes"] if x.startswith(scheme))
    assert "4 expert layer(s)" in line  # two layers, two grouped products each
    assert len(lowered.buffer()) < len(fp32.buffer()) * (0.45 if bits == 8 else 0.4)
    model = copy.deepcopy(mixtral())
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.copy_(dequantized(p, bits, group or p.shape[-1]))
        want = Logits(model)(ids)
    assert relative_error(lowered.load().forward(ids)[0], want) < tolerance


def test_greedy_generation_matches_hugging_face(tmp_path):
    from transformers import GenerationConfig
    from transformers.integrations.executorch import convert_and_export_with_cache

    model, n = mixtral(), CACHE - len(PROMPT)
    config = GenerationConfig(do_sample=False, max_new_tokens=n, pad_token_id=0,
                              cache_implementation="static",
                              cache_config={"batch_size": 1, "max_cache_len": CACHE})
    with torch.no_grad():
        want = model.generate(torch.tensor([PROMPT]), generation_config=config)[0, len(PROMPT):]
    seq = Dim("seq", min=1, max=4)
    ep = convert_and_export_with_cache(model, torch.tensor([[1, 2]]), torch.tensor([0, 1]),
                                       dynamic_shapes={"input_ids": {1: seq},
                                                       "cache_position": {0: seq}})
    path = tmp_path / "mixtral.pte"
    pteron.to_edge_transform_and_lower(ep).save(path)
    got = generate_json(path, "--prompt-ids", ",".join(map(str, PROMPT)), "-n", n)
    assert got["tokens"] == want.tolist()
    assert got["prefill_calls"] == 3  # ten prompt tokens in chunks of up to 4
