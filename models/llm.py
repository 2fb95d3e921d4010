"""KV-cache decoders for text generation (runtime/llm, `pteron generate`): transformers models
wrapped as transformers' executorch integration wraps them, forward(input_ids int64 [1, T],
cache_position int64 [T]) -> logits [1, T, vocab], the static cache as mutable buffers.

T is a bounded dynamic size (1..PREFILL_CHUNK): the Generator prefills a prompt in chunks of up
to that many tokens, one call per chunk, instead of one call per token. A call reads every
weight once whatever its T, so on a memory-bound CPU a chunk of 32 tokens costs little more than
one token (a GEMM instead of 32 GEMVs); decoding still runs T = 1 through the same program.

Random-weight entries (seeded, from a config): llama-110m (Llama 3 layout: GQA, RoPE, RMSNorm,
SwiGLU), llama-1b (Llama-3.2-1B's config), opt-125m-kv (opt-125m's OPTConfig with a cache). The
trained entry, tiny-stories, is in models/tiny_stories.py. Needs `transformers` (imported on use).
"""

import torch
from torch import nn
from torch.export import Dim

from .llm_shapes import LLAMA_1B, LLAMA_110M  # shared with bench/llm.py

PREFILL_CHUNK = 32  # the dynamic T's bound: the prefill chunk

LLAMA_110M_CACHE = 256
LLAMA_1B_CACHE = 512
LLAMA_1B_PARAMS = 1_235_814_400  # Hugging Face's model card figure for Llama-3.2-1B (tied)

OPT_125M_CACHE = 256


def static_cache(model, cache_len: int):
    """Gives a transformers model the generation config convert_and_export_with_cache reads: a
    static cache of cache_len positions, batch 1."""
    from transformers import GenerationConfig

    model.generation_config = GenerationConfig(
        use_cache=True, cache_implementation="static", max_length=cache_len,
        cache_config={"batch_size": 1, "max_cache_len": cache_len})
    return model


def example_inputs(t: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """(input_ids [1, t], cache_position [t]): t = 2 so that export sees T as a size, not 1."""
    return torch.arange(1, t + 1).unsqueeze(0), torch.arange(t)


def dynamic_shapes():
    seq = Dim("seq", min=1, max=PREFILL_CHUNK)
    return {"input_ids": {1: seq}, "cache_position": {0: seq}}


def llama_config(fields: dict, **overrides):
    from transformers import LlamaConfig

    return LlamaConfig(**{**fields, **overrides})


def llama(fields: dict, cache_len: int, **overrides):
    """A random LlamaForCausalLM (the caller seeds) with a static cache, wrapped for export."""
    from transformers import LlamaForCausalLM
    from transformers.integrations.executorch import TorchExportableModuleWithStaticCache

    lm = static_cache(LlamaForCausalLM(llama_config(fields, **overrides)).eval(), cache_len)
    return TorchExportableModuleWithStaticCache(lm).eval(), example_inputs()


def export_hf(module, inputs):
    """transformers' convert_and_export_with_cache of the wrapped model, T dynamic."""
    from transformers.integrations.executorch import convert_and_export_with_cache

    return convert_and_export_with_cache(module.model, *inputs, dynamic_shapes=dynamic_shapes())


def llama_110m():
    return llama(LLAMA_110M, LLAMA_110M_CACHE)


def llama_1b():
    return llama(LLAMA_1B, LLAMA_1B_CACHE)


class OptWithStaticCache(nn.Module):
    """OPT's decoder over transformers' StaticCache, called layer by layer.

    convert_and_export_with_cache cannot export OPT: OPTDecoder.forward derives its positions
    and a ones mask from cache.get_seq_length(), a data-dependent size torch.export leaves
    symbolic. Here positions are cache_position and the mask is built from it, the rest is
    OPT's own modules (embeddings, learned positions with OPT's offset of 2, decoder layers,
    final norm, lm_head), so the logits are OPTForCausalLM's."""

    def __init__(self, lm, cache_len: int):
        super().__init__()
        from transformers import StaticCache

        self.lm = lm
        self.cache = StaticCache(config=lm.config, max_cache_len=cache_len)
        self.cache_len = cache_len
        # Register the cache tensors as buffers, as TorchExportableModuleWithStaticCache does,
        # so they are the program's mutable state.
        for i, layer in enumerate(self.cache.layers):
            layer.lazy_initialization(torch.zeros(1, lm.config.num_attention_heads, 1,
                                                  lm.config.hidden_size // lm.config.num_attention_heads),
                                      torch.zeros(1, lm.config.num_attention_heads, 1,
                                                  lm.config.hidden_size // lm.config.num_attention_heads))
            self.register_buffer(f"key_cache_{i}", layer.keys, persistent=False)
            self.register_buffer(f"value_cache_{i}", layer.values, persistent=False)
            self.register_buffer(f"cumulative_length_{i}", layer.cumulative_length, persistent=False)

    def forward(self, input_ids: torch.Tensor, cache_position: torch.Tensor) -> torch.Tensor:
        for layer in self.cache.layers:
            layer.cumulative_length.copy_(cache_position[0])
        dec = self.lm.model.decoder
        x = dec.embed_tokens(input_ids)
        if dec.project_in is not None:
            x = dec.project_in(x)
        x = x + dec.embed_positions.weight[cache_position + dec.embed_positions.offset].unsqueeze(0)
        # Additive causal mask over the whole cache: position p sees the slots 0..p.
        allowed = torch.arange(self.cache_len).unsqueeze(0) <= cache_position.unsqueeze(1)
        mask = torch.zeros(allowed.shape, dtype=x.dtype).masked_fill(~allowed, torch.finfo(x.dtype).min)
        mask = mask[None, None]
        for layer in dec.layers:
            x = layer(x, attention_mask=mask, cache=self.cache, use_cache=True)
            x = x[0] if isinstance(x, tuple) else x
        if dec.final_layer_norm is not None:
            x = dec.final_layer_norm(x)
        if dec.project_out is not None:
            x = dec.project_out(x)
        return self.lm.lm_head(x)


def opt_125m_kv():
    """facebook/opt-125m's architecture (the opt-125m entry's OPTConfig()), random weights."""
    from transformers import OPTConfig, OPTForCausalLM

    lm = OPTForCausalLM(OPTConfig(attn_implementation="eager")).eval()
    return OptWithStaticCache(lm, OPT_125M_CACHE).eval(), example_inputs()


def export_module(module, inputs):
    """torch.export (strict, as convert_and_export_with_cache) of a decoder module, T dynamic."""
    with torch.no_grad():
        return torch.export.export(module, (), dict(zip(("input_ids", "cache_position"), inputs)),
                                   dynamic_shapes=dynamic_shapes(), strict=True)
