"""make bench-packed-weights: what packing constant weights once per loaded program (instead of
per call: runtime/kernel/constant_cache.h, SgemmProblem::b_cache) saves, in CPU time per
inference, against PyTorch eager.

Models (fp32, batch 1, random weights):
- `encoder`: bench/dynamic.py's encoder (2 x nn.TransformerEncoderLayer(128, 4, 512)) as one
  bounded dynamic program, at sequence lengths 8, 32, 128, 512;
- `gpt2-shape`: 4 pre-norm layers of GPT-2 small's shape (d_model 768, 12 heads, FFN 3072,
  GELU) at sequence 128: the linears of OPT-125M / GPT-2 small, a third of their depth.

Systems, each measurement its own process, rounds alternating their order: pteron with the
packed weights (the default), pteron with PTERON_CONSTANT_CACHE=off (packing per call, as before
the cache), PyTorch eager (torch.set_num_threads; at --isa avx2 also capped to AVX2 through
ATEN_CPU_CAPABILITY, MKL_ENABLE_INSTRUCTIONS and ONEDNN_MAX_CPU_ISA). pteron runs `pteron bench --json`; eager this
script's `eager-run` step. Figures: median wall and median process CPU time per run, the ISA
(PTERON_ISA, default avx2 so AVX2-only machines' figures are reproduced on AVX-512 ones), the
1-minute load average, `packed_constant_bytes`. On a loaded machine compare CPU times: wall
time includes waiting for a core. Results go to --results (default bench/work/packed_weights,
ignored); bench/results only when the load average stayed at or under the core count.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from dynamic import encoder  # noqa: E402
from priority import match_autogroup_nice  # noqa: E402

ENCODER_LENGTHS = [8, 32, 128, 512]
GPT2_SEQ = 128


def gpt2_shape():
    import torch

    class Blocks(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(
                [torch.nn.TransformerEncoderLayer(768, 12, 3072, dropout=0.0, activation="gelu",
                                                  batch_first=True, norm_first=True)
                 for _ in range(4)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    return Blocks().eval()


MODELS = {"encoder": (encoder, 128, ENCODER_LENGTHS, True),
          "gpt2-shape": (gpt2_shape, 768, [GPT2_SEQ], False)}


def log(msg):
    print(f"bench-packed-weights: {msg}", file=sys.stderr, flush=True)


def run(cmd, env=None):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def export(name, work):
    """The model's .pt2 (dynamic sequence for the encoder) and the module itself."""
    import torch
    from torch.export import Dim

    make, width, lengths, dynamic = MODELS[name]
    model = make()
    shapes = {"x": {1: Dim("seq", min=lengths[0], max=lengths[-1])}} if dynamic else None
    ep = torch.export.export(model, (torch.randn(1, lengths[-1] if not dynamic else 32, width),),
                             dynamic_shapes=shapes).run_decompositions()
    path = work / f"{name}.pt2"
    torch.export.save(ep, path)
    return path, model


def eager_run(name, inputs, threads, warmup, iters):
    import torch

    torch.set_num_threads(threads)
    model = MODELS[name][0]()
    x = torch.from_numpy(np.load(inputs)["input_0"])
    with torch.no_grad():
        for _ in range(warmup):
            model(x)
        times, cpu = [], []
        for _ in range(iters):
            w, c = time.perf_counter(), time.process_time()
            model(x)
            times.append((time.perf_counter() - w) * 1e3)
            cpu.append((time.process_time() - c) * 1e3)
    print(json.dumps({"times_ms": times, "median_cpu_ms": statistics.median(cpu),
                      "load_average_1m": os.getloadavg()[0]}))


def measure(system, name, pte, inputs, args):
    env = {**os.environ, "PTERON_ISA": args.isa}
    env.pop("PTERON_CONSTANT_CACHE", None)
    if system == "eager":
        if args.isa == "avx2":  # PyTorch's own caps, so eager runs at the same level
            env.update(ATEN_CPU_CAPABILITY="avx2", MKL_ENABLE_INSTRUCTIONS="AVX2",
                       ONEDNN_MAX_CPU_ISA="AVX2")
        out = run([sys.executable, __file__, "eager-run", name, inputs, args.threads, args.warmup,
                   args.iters], env=env)
        return json.loads(out.strip().splitlines()[-1])
    if system == "per-call":
        env["PTERON_CONSTANT_CACHE"] = "off"
    out = run([args.pteron, "bench", pte, "--inputs", inputs, "--warmup", args.warmup, "--iters",
               args.iters, "--threads", args.threads, "--json"], env=env)
    return json.loads(out)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "eager-run":
        a = sys.argv[2:]
        return eager_run(a[0], Path(a[1]), int(a[2]), int(a[3]), int(a[4]))
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=str(REPO / "bench" / "work" / "packed_weights"))
    p.add_argument("--results", default=str(REPO / "bench" / "work" / "packed_weights"))
    p.add_argument("--models", default="encoder,gpt2-shape")
    p.add_argument("--backends", default="optimized,portable")
    p.add_argument("--isa", default="avx2", help="PTERON_ISA for pteron's runs")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    priority = match_autogroup_nice()
    args.pteron = Path(args.build) / "tools" / "cli" / "pteron"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    import torch

    systems = ["packed", "per-call", "eager"]
    rows = []
    for name in args.models.split(","):
        pt2, model = export(name, work)
        pte = work / f"{name}.pte"
        run([args.pteron, "compile", pt2, "-o", pte, "--backends", args.backends])
        _, width, lengths, _ = MODELS[name]
        for seq in lengths:
            x = np.random.default_rng(seq).standard_normal((1, seq, width)).astype(np.float32)
            inputs = work / f"{name}-{seq}.npz"
            np.savez(inputs, input_0=x)
            runs = {s: [] for s in systems}
            for r in range(args.rounds):
                order = systems if r % 2 == 0 else systems[::-1]
                for s in order:
                    runs[s].append(measure(s, name, pte, inputs, args))
            row = {"model": name, "seq": seq}
            for s in systems:
                row[f"{s}_median_ms"] = statistics.median(t for m in runs[s] for t in m["times_ms"])
                row[f"{s}_median_cpu_ms"] = statistics.median(m["median_cpu_ms"] for m in runs[s])
                row[f"{s}_max_load"] = max(m["load_average_1m"] for m in runs[s])
            row["isa"] = runs["packed"][0]["isa"]
            row["packed_constant_bytes"] = runs["packed"][0]["packed_constant_bytes"]
            with torch.no_grad():
                want = model(torch.from_numpy(x)).numpy()
            out = work / "out.npz"
            run([args.pteron, "run", pte, "--inputs", inputs, "--outputs", out])
            row["max_abs_err_vs_eager"] = float(np.abs(np.load(out)["output_0"] - want).max())
            rows.append(row)
            log(json.dumps(row))
    cores = os.cpu_count()
    max_load = max(row[f"{s}_max_load"] for row in rows for s in systems)
    results = {"threads": args.threads, "isa_requested": args.isa, "backends": args.backends,
               "rounds": args.rounds, "warmup": args.warmup, "iters": args.iters,
               "priority": priority, "cores": cores, "max_load_average_1m": max_load,
               "torch": torch.__version__, "rows": rows}
    out = Path(args.results)
    if out == REPO / "bench" / "results" and max_load > cores:
        raise SystemExit(f"load average reached {max_load:.1f} on {cores} cores: not publishing "
                         "(rerun on a quieter machine, or pass --results elsewhere)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "packed_weights.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["# Constant weights packed once vs per call, and PyTorch eager", "",
             f"`--backends {args.backends}`, {args.threads} thread(s), PTERON_ISA={args.isa}; "
             f"{args.rounds} alternating rounds of {args.iters} runs after {args.warmup} warm-up, "
             f"each system in its own process; medians; {priority}; {cores} cores; max load "
             f"average {max_load:.1f}. CPU ms is the process CPU time per run.", "",
             "| model | seq | packed CPU ms | per-call CPU ms | eager CPU ms | per-call / packed | "
             "eager / packed | packed wall ms | packed weights (KiB) | ISA | max load |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        load = max(r[f"{s}_max_load"] for s in systems)
        lines.append(f"| {r['model']} | {r['seq']} | {r['packed_median_cpu_ms']:.2f} | "
                     f"{r['per-call_median_cpu_ms']:.2f} | {r['eager_median_cpu_ms']:.2f} | "
                     f"{r['per-call_median_cpu_ms'] / r['packed_median_cpu_ms']:.2f}x | "
                     f"{r['eager_median_cpu_ms'] / r['packed_median_cpu_ms']:.2f}x | "
                     f"{r['packed_median_ms']:.2f} | {r['packed_constant_bytes'] / 1024:.0f} | "
                     f"{r['isa']} | {load:.1f} |")
    (out / "packed_weights.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
