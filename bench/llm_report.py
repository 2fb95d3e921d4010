"""bench/results/llm.{md,png} from the figures bench/llm.py measured, and the goals checked.

    python bench/llm_report.py llm.json llm.png   # the chart (matplotlib: .venv-et has it)
"""

import json
import sys
from pathlib import Path

GOALS = [  # (what, pteron precision, peer system, peer precision, needed ratio)
    ("≥1.5x eager, fp32", "fp32", "eager", "fp32", 1.5),
    ("≥1.5x ExecuTorch, fp32", "fp32", "executorch", "fp32", 1.5),
    ("≥1.5x ExecuTorch, 8da4w", "8da4w", "executorch", "8da4w", 1.5),
    ("≥ llama.cpp F32", "fp32", "llama.cpp", "F32", 1.0),
    ("≥ llama.cpp Q8_0 (int8)", "int8", "llama.cpp", "Q8_0", 1.0),
    ("≥ llama.cpp Q4_0 (8da4w)", "8da4w", "llama.cpp", "Q4_0", 1.0),
]


def find(doc, system, precision):
    return next((r for r in doc["rows"] if r["system"] == system and r["precision"] == precision), None)


def mib(x):
    return "–" if x is None else f"{x / 2**20:.0f}"


def num(x, fmt=".1f"):
    return "–" if x is None else format(x, fmt)


def goal_lines(doc):
    lines = ["| goal | prefill | decode | |", "|---|---|---|---|"]
    for what, prec, system, peer_prec, need in GOALS:
        ours, peer = find(doc, "pteron", prec), find(doc, system, peer_prec)
        if ours is None or peer is None:
            why = "pteron did not run" if ours is None else doc["not_run"].get(system, f"{system} did not run")
            lines.append(f"| {what} | – | – | not measured: {why} |")
            continue
        ratios = [ours[k] / peer[k] if ours[k] and peer[k] else None
                  for k in ("prefill_tokens_per_s", "decode_tokens_per_s")]
        met = all(r is not None and r >= need for r in ratios)
        lines.append(f"| {what} | {num(ratios[0], '.2f')}x | {num(ratios[1], '.2f')}x | "
                     f"{'met' if met else 'not met'} |")
    q4 = find(doc, "pteron", "8da4w")
    if q4 and q4.get("decode_bandwidth_fraction") is not None:
        f = q4["decode_bandwidth_fraction"]
        lines.append(f"| int4 decode ≥70% of the copy bandwidth | | {f:.0%} | {'met' if f >= 0.7 else 'not met'} |")
    for prec in ("fp32", "int8", "8da4w"):
        r = find(doc, "pteron", prec)
        if r and r.get("rss_goal_bytes"):
            ok = r["peak_rss_bytes"] <= r["rss_goal_bytes"]
            lines.append(f"| {prec} peak RSS ≤1.2x (weights + planned arena = "
                         f"{mib(r['constant_bytes'] + r['planned_bytes'])} MiB) | | {mib(r['peak_rss_bytes'])} MiB | "
                         f"{'met' if ok else 'not met'} |")
    return lines


def experts(kw):
    if "num_local_experts" not in kw:
        return ""
    return f" in {kw['num_local_experts']} experts, {kw['num_experts_per_tok']} per token"


def per_cpu_s(tokens, cpu_ms):
    return "–" if not cpu_ms else f"{tokens / (cpu_ms / 1e3):.0f}"


def write_markdown(doc, path: Path) -> str:
    kw = doc["llama_config"]
    s = doc["stream_copy"]
    title = "# Text generation on the CPU (make bench-llm)" + (" — SMOKE RUN, not a result" if doc["smoke"] else "")
    lines = [title, "",
             f"{doc['config']}: {doc['parameters'] / 1e6:.1f}M parameters (d {kw['hidden_size']}, "
             f"{kw['num_hidden_layers']} layers, {kw['num_attention_heads']} heads over "
             f"{kw['num_key_value_heads']} KV heads, SwiGLU {kw['intermediate_size']}{experts(kw)}, "
             f"vocab {kw['vocab_size']}), "
             f"seeded random weights; {doc['prompt_tokens']} prompt tokens, {doc['new_tokens']} generated, greedy; "
             f"{doc['threads']} threads; {doc['rounds']} alternating round(s), each system in its own process, "
             f"medians; {doc['priority']}; {doc['cores']} cores ({doc['machine']}), load average up to "
             f"{doc['max_load_average_1m']:.1f}; {doc['date']}.", "",
             f"STREAM-style copy in the same run: {s['gb_per_s']:.1f} GB/s ({s['gb_per_cpu_s']:.1f} GB/s per CPU second).",
             "", "| system | precision | prefill tok/s | decode tok/s | first token ms | peak RSS MiB | "
             "file MiB | decode GB/s | of copy | prefill / decode tok per CPU s | process CPU s / wall s | "
             "same tokens as eager | ISA | max load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        frac = r.get("decode_bandwidth_fraction")
        match = r.get("tokens_matching_eager")
        same = "–" if match is None else f"{match}/{len(r['tokens'])}"
        lines.append(
            f"| {r['system']} | {r['precision']} | {num(r['prefill_tokens_per_s'])} | {num(r['decode_tokens_per_s'])} | "
            f"{num(r['time_to_first_token_ms'])} | {mib(r['peak_rss_bytes'])} | {mib(r.get('file_bytes'))} | "
            f"{num(r.get('decode_gb_per_s'), '.2f')} | {'–' if frac is None else f'{frac:.0%}'} | "
            f"{per_cpu_s(doc['prompt_tokens'], r.get('prefill_cpu_ms'))} / "
            f"{per_cpu_s(doc['new_tokens'] - 1, r.get('decode_cpu_ms'))} | "
            f"{num(r['process_cpu_s'])} / {num(r['process_wall_s'])} | "
            f"{same} | {r['isa']} | {r['max_load_average_1m']:.1f} |")
    for what, why in doc["not_run"].items():
        lines.append(f"| {what} | – | not run: {why} | | | | | | | | | | | |")
    lines += ["", "## Goals", "", *goal_lines(doc), "",
              "Prefill is the prompt's calls plus picking the first token; decode tok/s counts the other "
              "generated tokens. Peak RSS is the process's (the kernel's accounting); the Python peers' include "
              "the interpreter and torch (rss_before_load_bytes in llm.json). Decode bytes per token are the "
              "weight file less the embedding table's share (one row is read) and, in a mixture of experts, "
              "less the experts a token does not pick, plus the KV cache up to the mean "
              "decode position (fp32; llama.cpp's is f16). Every system runs --warmup untimed generations "
              "(the prompt and 4 tokens) in its process first (`pteron generate --warmup`). Tokens per CPU "
              "second divide by the process's CPU time (all its threads) over the same span: on a loaded "
              "machine, where wall time also counts the other processes, they compare the work each system "
              "does (a spinning worker thread counts too). llama.cpp's GGUF "
              "is written from the same weights with a placeholder vocabulary and quantized by llama.cpp with every tensor "
              "in the type named (pure); ExecuTorch's 8da4w also quantizes the embedding (4-bit, same group). "
              "A fraction of the copy above 100% means the copy was starved more than the decode (a loaded "
              "machine: the copy counts bytes read and written) or the weights fit in the caches (small "
              "configs). int4 weights matching eager on few tokens is expected with random weights; fp32 "
              "systems should match on all.", ""]
    text = "\n".join(lines)
    path.write_text(text)
    return text


def write_chart(doc, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = doc["rows"]
    labels = [f"{r['system']} {r['precision']}" for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(max(8, 1.3 * len(rows)), 4.5))
    for ax, key, title in zip(axes, ("prefill_tokens_per_s", "decode_tokens_per_s"), ("prefill", "decode")):
        values = [r[key] or 0 for r in rows]
        colors = ["tab:blue" if r["system"] == "pteron" else "tab:gray" for r in rows]
        ax.bar(range(len(rows)), values, color=colors)
        ax.set_xticks(range(len(rows)), labels, fontsize=7, rotation=35, ha="right")
        ax.set_ylabel("tokens/s")
        ax.set_title(f"{title} ({doc['prompt_tokens']} prompt, {doc['new_tokens']} new, {doc['threads']} threads)")
    smoke = " — SMOKE, under load" if doc["smoke"] else ""
    fig.suptitle(f"{doc['config']} text generation, load up to {doc['max_load_average_1m']:.1f}{smoke}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    write_chart(json.loads(Path(sys.argv[1]).read_text()), Path(sys.argv[2]))
