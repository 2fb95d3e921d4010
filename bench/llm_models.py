"""The model bench/llm.py measures, and the same weights in each peer's format.

One Llama-style config (GQA, RoPE, RMSNorm, SwiGLU) built by transformers' LlamaConfig with
seeded random weights (nothing downloaded), or a Mixtral-style mixture of experts (a config with
num_local_experts: MixtralConfig, its experts in place of the MLP), then written once per peer:
  - Hugging Face: the model itself (eager generate, and torch.export for pteron);
  - ExecuTorch: a checkpoint under its Transformer's names + params.json (use_hf_rope, so the
    q/k projections need no permutation), as its LLM export reads them;
  - llama.cpp: the weights as .npz, which bench/llm_peers.py (in the llama.cpp venv, where the
    `gguf` package lives) writes as GGUF with llama.cpp's names and its q/k row order.
"""

import importlib.util
import json
from pathlib import Path



def _zoo_shapes():
    """models/llm_shapes.py, read by path: importing the models package would need torch,
    which the llama.cpp venv does not have."""
    spec = importlib.util.spec_from_file_location(
        "llm_shapes", Path(__file__).resolve().parents[1] / "models" / "llm_shapes.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_SHAPES = _zoo_shapes()
LLAMA_110M, LLAMA_1B = _SHAPES.LLAMA_110M, _SHAPES.LLAMA_1B

# The zoo's shapes (models/llm.py): llama-110m as `python -m pteron.zoo export llama-110m`
# builds it; llama-1b (Llama 3.2 1B's shape, for a run by hand: --config llama-1b) without its
# llama3 RoPE frequency scaling, which the ExecuTorch and GGUF conversions here do not write
# (it changes the rotation angles, not the cost).
_ZOO = {"llama-110m": LLAMA_110M, "llama-1b": {k: v for k, v in LLAMA_1B.items() if k != "rope_scaling"}}
CONFIGS = {
    **_ZOO,
    # A Mixtral-style mixture of experts (8 experts, 2 per token): the experts are 70% of the
    # weights, and a decoded token reads a quarter of them. pteron and eager only (bench/llm.py
    # says why the peers are not run).
    "moe-small": dict(vocab_size=32000, hidden_size=512, intermediate_size=1024, num_hidden_layers=4,
                      num_attention_heads=8, num_key_value_heads=2, num_local_experts=8,
                      num_experts_per_tok=2),
    # --smoke: seconds per system, to check the script end to end
    "smoke": dict(vocab_size=512, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2),
}
COMMON = dict(rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=2048,
              tie_word_embeddings=False, bos_token_id=1, eos_token_id=2)
SEED = 0


def resolve_config(name_or_path):
    """A CONFIGS name, or a JSON file of LlamaConfig arguments (MixtralConfig's with
    num_local_experts); returns (name, kwargs)."""
    if name_or_path in CONFIGS:
        return name_or_path, {**COMMON, **CONFIGS[name_or_path]}
    path = Path(name_or_path)
    if not path.is_file():
        raise SystemExit(f"--config {name_or_path}: neither one of {', '.join(CONFIGS)} nor a "
                         "JSON file of LlamaConfig arguments")
    try:
        kwargs = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise SystemExit(f"--config {path}: not JSON ({e})") from None
    if not isinstance(kwargs, dict):
        raise SystemExit(f"--config {path}: expected an object of LlamaConfig arguments")
    return path.stem, {**COMMON, **kwargs}


def is_moe(kw):
    return "num_local_experts" in kw


def expert_parameters(kw):
    """All layers' expert matrices (SwiGLU, three d x f matrices each); 0 for a dense model."""
    if not is_moe(kw):
        return 0
    return kw["num_hidden_layers"] * kw["num_local_experts"] * 3 * kw["hidden_size"] * kw["intermediate_size"]


def parameter_count(kw):
    d, f, v, n = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"], kw["num_hidden_layers"]
    head = d // kw["num_attention_heads"]
    kv = kw["num_key_value_heads"] * head
    attention = 2 * d * d + 2 * d * kv + 2 * d
    feed_forward = d * kw["num_local_experts"] if is_moe(kw) else 3 * d * f  # MoE: the router
    return n * (attention + feed_forward) + expert_parameters(kw) + v * d * (1 if kw["tie_word_embeddings"] else 2) + d


def embedding_share(kw):
    """The embedding table's share of the parameters: the part of a weight file a decode step
    does not stream (it reads one row), unless the classifier is tied to it."""
    if kw["tie_word_embeddings"]:
        return 0.0
    return kw["vocab_size"] * kw["hidden_size"] / parameter_count(kw)


def decode_streamed_share(kw):
    """The share of the weights a decode step reads: all but the embedding table (one row) and,
    in a mixture of experts, the experts no token picked (num_experts_per_tok of
    num_local_experts are read)."""
    unread = embedding_share(kw)
    if is_moe(kw):
        unread += expert_parameters(kw) / parameter_count(kw) * (
            1 - kw["num_experts_per_tok"] / kw["num_local_experts"])
    return 1.0 - unread


def kv_cache_bytes_per_position(kw, dtype_bytes=4):
    head = kw["hidden_size"] // kw["num_attention_heads"]
    return 2 * kw["num_hidden_layers"] * kw["num_key_value_heads"] * head * dtype_bytes


def hf_model(kw):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, MixtralConfig, MixtralForCausalLM

    torch.manual_seed(SEED)
    if is_moe(kw):
        model = MixtralForCausalLM(MixtralConfig(**kw)).eval()
    else:
        model = LlamaForCausalLM(LlamaConfig(**kw)).eval()
    # transformers' init (std 0.02) gives nearly flat logits; a wider spread keeps greedy picks
    # clear of rounding, so the systems' generated tokens can be compared.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.1 * torch.randn_like(p))
            elif "embed_tokens" in name:
                p.normal_(0, 1.0)
            else:
                p.normal_(0, 1.0 / p.shape[-1] ** 0.5)
    return model


def meta_checkpoint(model, kw, folder: Path):
    """weights.pth + params.json in the layout ExecuTorch's export_llama reads."""
    import torch

    names = {"model.embed_tokens.weight": "tok_embeddings.weight", "model.norm.weight": "norm.weight",
             "lm_head.weight": "output.weight"}
    parts = {"self_attn.q_proj": "attention.wq", "self_attn.k_proj": "attention.wk",
             "self_attn.v_proj": "attention.wv", "self_attn.o_proj": "attention.wo",
             "mlp.gate_proj": "feed_forward.w1", "mlp.down_proj": "feed_forward.w2",
             "mlp.up_proj": "feed_forward.w3", "input_layernorm": "attention_norm",
             "post_attention_layernorm": "ffn_norm"}
    state = {}
    for name, t in model.state_dict().items():
        if name in names:
            state[names[name]] = t.clone()
            continue
        _, _, i, rest = name.split(".", 3)
        module, leaf = rest.rsplit(".", 1)
        state[f"layers.{i}.{parts[module]}.{leaf}"] = t.clone()
    if kw["tie_word_embeddings"]:
        state["output.weight"] = state["tok_embeddings.weight"]
    torch.save(state, folder / "weights.pth")
    params = {"dim": kw["hidden_size"], "n_layers": kw["num_hidden_layers"],
              "n_heads": kw["num_attention_heads"], "n_kv_heads": kw["num_key_value_heads"],
              "vocab_size": kw["vocab_size"], "hidden_dim": kw["intermediate_size"],
              "norm_eps": kw["rms_norm_eps"], "rope_theta": kw["rope_theta"], "use_hf_rope": True,
              "use_scaled_rope": False}
    (folder / "params.json").write_text(json.dumps(params))


def npz_weights(model, path: Path):
    import numpy as np

    np.savez(path, **{k: v.numpy() for k, v in model.state_dict().items()})
