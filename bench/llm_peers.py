"""The steps of bench/llm.py that run in a peer's own environment, one process each, each
printing one JSON object as its last line:

    prepare    (the project's venv) the weights for the peers, and pteron's programs
    eager-run  (the project's venv: torch + transformers)  Hugging Face generate, static cache
    et-export  (.venv-et)  ExecuTorch's LLM export (export_llama) with XNNPACK, fp32 or 8da4w
    et-run     (.venv-et)  the .pte through ExecuTorch's pybindings, prompt in one call
    gguf-write (the llama.cpp venv)  the .npz weights as F32 GGUF, then Q8_0 / Q4_0 by
               llama.cpp's own quantizer (llama_model_quantize)
    llamacpp-run (the llama.cpp venv)  llama-cpp-python's Llama.generate, greedy

Every run reports the same figures as `pteron generate --json`: prefill_ms (the prompt's
calls and the first token's pick), time_to_first_token_ms, decode_ms (the other tokens),
prefill_tokens_per_s = prompt / prefill, decode_tokens_per_s = (generated - 1) / decode; and the
process CPU time of the generation next to its wall time. Warm-up generations of the prompt and
4 tokens first, as `pteron generate --warmup` does.
"""

import json
import os
import sys
import time
from pathlib import Path


def status_bytes(field):
    """VmRSS (now) or VmHWM (peak) of this process. Not getrusage's ru_maxrss: that keeps the
    peak of the image exec replaced, i.e. of the benchmark's driver that started this one."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return None


def rss_bytes():
    return status_bytes("VmRSS")


def figures(prompt_len, tokens, times, cpus, **extra):
    """times, cpus: wall and process CPU time at the start, the first token and the end."""
    start, first, end = times
    cpu0, cpu_first, cpu1 = cpus
    n = len(tokens)
    decode_ms = (end - first) * 1e3
    out = {"prompt_tokens": prompt_len, "generated_tokens": n, "tokens": tokens,
           "prefill_ms": (first - start) * 1e3, "time_to_first_token_ms": (first - start) * 1e3,
           "decode_ms": decode_ms, "prefill_tokens_per_s": prompt_len / (first - start),
           "decode_tokens_per_s": (n - 1) / (decode_ms / 1e3) if n > 1 and decode_ms > 0 else None,
           "prefill_cpu_ms": (cpu_first - cpu0) * 1e3, "decode_cpu_ms": (cpu1 - cpu_first) * 1e3,
           "generation_cpu_s": cpu1 - cpu0, "generation_wall_s": end - start,
           "load_average_1m": os.getloadavg()[0],
           "peak_rss_bytes": status_bytes("VmHWM")}
    out.update(extra)
    return out


# ---- The weights, and pteron's programs (the project's venv) ----------------------------

PTERON_QUANTIZE = {"fp32": None, "int8": "llm-int8", "8da4w": "llm-8da4w"}


def log(msg):
    print(f"bench-llm: {msg}", file=sys.stderr, flush=True)


def prepare(config, work, prompt_tokens, new_tokens, group, reuse, with_pteron):
    """Writes the seeded model's weights for ExecuTorch (meta/) and llama.cpp (weights.npz), and
    compiles pteron's programs from transformers' export with a static cache: forward(input_ids
    [1, T], cache_position [T]) with T dynamic up to the prompt, so the prompt takes one call;
    compiled with last_token_logits, so a call returns the last token's logits only (what
    ExecuTorch's export computes and llama.cpp's generate asks for)."""
    from llm_models import hf_model, is_moe, meta_checkpoint, npz_weights, resolve_config

    work = Path(work)
    _, kw = resolve_config(config)
    model = hf_model(kw)
    # The peers' converters write Llama's tensors only (bench/llm.py leaves them out for MoE).
    if not is_moe(kw) and not (reuse and (work / "weights.npz").exists()):
        (work / "meta").mkdir(parents=True, exist_ok=True)
        meta_checkpoint(model, kw, work / "meta")
        npz_weights(model, work / "weights.npz")
    paths = {}
    if not with_pteron:
        return {"pteron": paths}
    import torch
    from torch.export import Dim
    from transformers import GenerationConfig
    from transformers.integrations.executorch import convert_and_export_with_cache

    import pteron

    cache = prompt_tokens + new_tokens
    model.generation_config = GenerationConfig(use_cache=True, cache_implementation="static", max_length=cache,
                                               cache_config={"batch_size": 1, "max_cache_len": cache})
    ep = None
    for precision, quantize in PTERON_QUANTIZE.items():
        pte = work / f"pteron-{precision}.pte"
        paths[precision] = str(pte)
        if reuse and pte.exists():
            continue
        if ep is None:
            seq = Dim("seq", min=1, max=prompt_tokens)
            ep = convert_and_export_with_cache(model, torch.tensor([[1, 2]]), torch.tensor([0, 1]),
                                               dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
        log(f"compiling pteron {precision}")
        # Logits for the last token only, as ExecuTorch's export_llama and llama.cpp compute them.
        common = {"kernels": ("optimized", "portable"), "last_token_logits": True}
        if quantize is None:
            lowered = pteron.to_edge_transform_and_lower(ep, **common)
        elif quantize == "llm-int8":  # int8 per output channel (Q8_0 has a scale per 32)
            lowered = pteron.to_edge_transform_and_lower(ep, quantize=quantize, **common)
        else:
            lowered = pteron.to_edge_transform_and_lower(ep, quantize=quantize, group_size=group, **common)
        lowered.save(pte)
    return {"pteron": paths}


# ---- Hugging Face eager ----------------------------------------------------------------

def eager_run(config, prompt, n, threads, warmup):
    import torch
    from transformers import GenerationConfig
    from transformers.generation.streamers import BaseStreamer

    from llm_models import hf_model, resolve_config

    torch.set_num_threads(threads)
    rss0 = rss_bytes()
    _, kw = resolve_config(config)
    model = hf_model(kw)
    cache = len(prompt) + n

    class Clock(BaseStreamer):  # put(prompt) first, then put(token) as each one is picked
        def __init__(self):
            self.times, self.cpus, self.ids = [], [], []

        def put(self, value):
            self.times.append(time.perf_counter())
            self.cpus.append(time.process_time())
            if len(self.times) > 1:
                self.ids.append(int(value.reshape(-1)[-1]))

        def end(self):
            pass

    def generate(prompt, n):
        gc = GenerationConfig(do_sample=False, max_new_tokens=n, min_new_tokens=n, eos_token_id=None,
                              pad_token_id=0, cache_implementation="static",
                              cache_config={"batch_size": 1, "max_cache_len": cache})
        clock = Clock()
        start, cpu0 = time.perf_counter(), time.process_time()
        with torch.inference_mode():
            model.generate(torch.tensor([prompt]), generation_config=gc, streamer=clock)
        return clock, start, cpu0, time.process_time()

    for _ in range(warmup):
        generate(prompt, 4)
    clock, start, cpu0, cpu1 = generate(prompt, n)
    return figures(len(prompt), clock.ids, (start, clock.times[1], clock.times[-1]),
                   (cpu0, clock.cpus[1], cpu1),
                   rss_before_load_bytes=rss0, isa=f"torch {torch.__version__} "
                   f"{torch.backends.cpu.get_cpu_capability()}", threads=threads)


# ---- ExecuTorch -------------------------------------------------------------------------

def et_export(checkpoint_dir, pte, quant, max_prompt, max_context, group):
    from executorch.examples.models.llama.export_llama_lib import export_llama
    from executorch.extension.llm.export.config.llm_config import LlmConfig, ModelType

    folder = Path(checkpoint_dir)
    c = LlmConfig()
    c.base.model_class = ModelType.llama3
    c.base.checkpoint = str(folder / "weights.pth")
    c.base.params = str(folder / "params.json")
    c.base.metadata = json.dumps({"get_bos_id": 1, "get_eos_ids": [2]})
    c.model.use_kv_cache = True
    c.model.use_sdpa_with_kv_cache = True  # its XNNPACK recipe: llama::custom_sdpa + update_cache
    c.model.enable_dynamic_shape = True  # the prompt in one call
    c.export.max_seq_length = max_prompt
    c.export.max_context_length = max_context
    c.export.output_dir = str(Path(pte).parent)
    c.export.output_name = Path(pte).name
    c.backend.xnnpack.enabled = True
    c.backend.xnnpack.extended_ops = True  # fp32 linears, not just the dynamically quantized ones
    if quant == "8da4w":
        c.quantization.qmode = "8da4w"
        c.quantization.group_size = group
        c.quantization.embedding_quantize = f"4,{group}"
    elif quant != "fp32":
        raise SystemExit(f"et-export: unknown precision {quant}")
    out = Path(export_llama(c))
    if out != Path(pte):
        out.replace(pte)
    return {"pte": str(pte), "bytes": Path(pte).stat().st_size}


def et_run(pte, prompt, n, threads, warmup):
    import torch

    rss0 = rss_bytes()
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  llama::custom_sdpa kernels
    import executorch.kernels.quantized  # noqa: F401  quantized embedding kernels
    from executorch.extension.pybindings.portable_lib import _load_for_executorch, _unsafe_reset_threadpool

    torch.set_num_threads(threads)
    _unsafe_reset_threadpool(threads)
    module = _load_for_executorch(str(pte))

    def step(ids, pos):
        (out,) = module.forward((torch.tensor([ids], dtype=torch.long), torch.tensor([pos], dtype=torch.long)))
        return int(out.reshape(-1, out.shape[-1])[-1].argmax())

    def generate(prompt, n):
        start, cpu0 = time.perf_counter(), time.process_time()
        tokens = [step(prompt, 0)]
        first, cpu_first = time.perf_counter(), time.process_time()
        pos = len(prompt)
        while len(tokens) < n:
            tokens.append(step([tokens[-1]], pos))
            pos += 1
        return tokens, (start, first, time.perf_counter()), (cpu0, cpu_first, time.process_time())

    for _ in range(warmup):
        generate(prompt, 4)
    tokens, times, cpus = generate(prompt, n)
    return figures(len(prompt), tokens, times, cpus, rss_before_load_bytes=rss0,
                   isa="ExecuTorch 1.5.1 XNNPACK (its wheel's own, dispatched at run time)",
                   threads=threads)


# ---- llama.cpp --------------------------------------------------------------------------

def spm_vocab(size):
    """A SentencePiece-style vocabulary llama.cpp accepts: <unk> <s> </s>, the 256 byte
    tokens (it looks up <0x0A> at load), then placeholder pieces; ids are all the bench uses."""
    if size < 259:
        raise SystemExit(f"gguf-write: a vocabulary of {size} is too small for llama.cpp (259+)")
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    tokens += [f"\u2581t{i}" for i in range(len(tokens), size)]
    types = [2, 3, 3] + [6] * 256 + [1] * (size - 259)  # unknown, control, byte, normal
    return tokens, [0.0] * size, types


def permute_rows(w, heads):
    """Hugging Face's q/k rows (halves rotated) in llama.cpp's order (pairs rotated), as
    convert_hf_to_gguf.py's LlamaModel.permute does."""
    return (w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape))


def gguf_write(npz, config, out_dir, threads):
    import gguf
    import numpy as np
    from llama_cpp import llama_cpp

    from llm_models import resolve_config

    _, kw = resolve_config(config)
    w = np.load(npz)
    out_dir = Path(out_dir)
    f32 = out_dir / "model-f32.gguf"
    writer = gguf.GGUFWriter(str(f32), "llama")
    heads, kv_heads = kw["num_attention_heads"], kw["num_key_value_heads"]
    writer.add_context_length(kw["max_position_embeddings"])
    writer.add_embedding_length(kw["hidden_size"])
    writer.add_block_count(kw["num_hidden_layers"])
    writer.add_feed_forward_length(kw["intermediate_size"])
    writer.add_head_count(heads)
    writer.add_head_count_kv(kv_heads)
    writer.add_rope_dimension_count(kw["hidden_size"] // heads)
    writer.add_layer_norm_rms_eps(kw["rms_norm_eps"])
    writer.add_rope_freq_base(kw["rope_theta"])
    writer.add_vocab_size(kw["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    tokens, scores, types = spm_vocab(kw["vocab_size"])
    writer.add_tokenizer_model("llama")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_unk_token_id(0)
    writer.add_add_bos_token(False)
    names = {"q_proj": "attn_q", "k_proj": "attn_k", "v_proj": "attn_v", "o_proj": "attn_output",
             "gate_proj": "ffn_gate", "up_proj": "ffn_up", "down_proj": "ffn_down",
             "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    for name in w.files:
        t = w[name].astype(np.float32)
        if name == "model.embed_tokens.weight":
            writer.add_tensor("token_embd.weight", t)
        elif name == "model.norm.weight":
            writer.add_tensor("output_norm.weight", t)
        elif name == "lm_head.weight":
            if not kw["tie_word_embeddings"]:
                writer.add_tensor("output.weight", t)
        else:
            _, _, i, rest = name.split(".", 3)
            part = rest.split(".")[-2]
            if part == "q_proj":
                t = permute_rows(t, heads)
            elif part == "k_proj":
                t = permute_rows(t, kv_heads)
            writer.add_tensor(f"blk.{i}.{names[part]}.weight", t)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    sizes = {"F32": f32.stat().st_size}
    for name, ftype in (("Q8_0", llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0), ("Q4_0", llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0)):
        params = llama_cpp.llama_model_quantize_default_params()
        params.ftype = ftype
        params.nthread = threads
        params.pure = True  # every tensor in the type named, as pteron's and ExecuTorch's schemes
        path = out_dir / f"model-{name.lower()}.gguf"
        if llama_cpp.llama_model_quantize(str(f32).encode(), str(path).encode(), params) != 0:
            raise SystemExit(f"gguf-write: llama.cpp could not quantize {f32} to {name}")
        sizes[name] = path.stat().st_size
    return {"bytes": sizes, "tensor_types": {n: tensor_types(out_dir / f"model-{n.lower()}.gguf") for n in sizes}}


def tensor_types(path):
    import gguf

    counts = {}
    for t in gguf.GGUFReader(str(path)).tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return counts


def llamacpp_run(gguf_path, prompt, n, threads, warmup):
    rss0 = rss_bytes()
    import llama_cpp
    from llama_cpp import Llama

    llm = Llama(model_path=str(gguf_path), n_ctx=len(prompt) + n, n_batch=len(prompt),
                n_ubatch=len(prompt), n_threads=threads, n_threads_batch=threads, verbose=False,
                seed=0)

    def generate(prompt, n):
        # reset(): else generate() would keep the warm-up's cache for the matching prompt prefix
        llm.reset()
        tokens, start, cpu0 = [], time.perf_counter(), time.process_time()
        first = cpu_first = None
        for token in llm.generate(prompt, temp=0.0, top_k=1, top_p=1.0, min_p=0.0,
                                  repeat_penalty=1.0, reset=True):
            tokens.append(int(token))
            if first is None:
                first, cpu_first = time.perf_counter(), time.process_time()
            if len(tokens) == n:
                break
        return tokens, (start, first, time.perf_counter()), (cpu0, cpu_first, time.process_time())

    for _ in range(warmup):
        generate(prompt, 4)
    tokens, times, cpus = generate(prompt, n)
    # "CPU : SSE3 = 1 | AVX2 = 1 | ... |": the features its kernels were built for and found
    info = llama_cpp.llama_print_system_info().decode().strip()
    flags = [part.split("=")[0].split(":")[-1].strip() for part in info.split("|") if part.strip().endswith("= 1")]
    info = " ".join(flags) or info
    return figures(len(prompt), tokens, times, cpus, rss_before_load_bytes=rss0,
                   isa=f"llama.cpp (llama-cpp-python {llama_cpp.__version__}): {info}", threads=threads)


def main():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    step, a = sys.argv[1], sys.argv[2:]
    ids = lambda s: [int(x) for x in s.split(",")]  # noqa: E731
    if step == "prepare":
        out = prepare(a[0], a[1], int(a[2]), int(a[3]), int(a[4]), a[5] == "1", a[6] == "1")
    elif step == "eager-run":
        out = eager_run(a[0], ids(a[1]), int(a[2]), int(a[3]), int(a[4]))
    elif step == "et-export":
        out = et_export(a[0], a[1], a[2], int(a[3]), int(a[4]), int(a[5]))
    elif step == "et-run":
        out = et_run(a[0], ids(a[1]), int(a[2]), int(a[3]), int(a[4]))
    elif step == "gguf-write":
        out = gguf_write(a[0], a[1], a[2], int(a[3]))
    elif step == "llamacpp-run":
        out = llamacpp_run(a[0], ids(a[1]), int(a[2]), int(a[3]), int(a[4]))
    else:
        raise SystemExit(f"llm_peers.py: unknown step {step}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
