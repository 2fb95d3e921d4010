"""make bench-dynamic: one transformer encoder (2 layers, d_model 128, 4 heads, FFN 512) at
sequence lengths 8, 32, 128, 512, as ONE bounded dynamic pteron program (torch.export.Dim
seq in [8, 512]) against one static pteron program per length, same --backends, 2 threads.
Each measurement is its own `pteron bench` process (median of --iters timed runs after
--warmup). Results: bench/results/dynamic.{json,md}.

The dynamic program runs every node on the kernel libraries (XNNPACK refuses dynamic nodes:
Debian's 2022 XNNPACK has no reshape API; shape-building rewrites such as constant folding skip
them; attention fuses in both), so the gap to the static program is what those cost.
"""

import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import torch
from torch.export import Dim

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from priority import match_autogroup_nice  # noqa: E402

LENGTHS = [8, 32, 128, 512]


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0, batch_first=True)
        self.layers = torch.nn.ModuleList([layer, torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0,
                                                                                    batch_first=True)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def log(msg):
    print(f"bench-dynamic: {msg}", file=sys.stderr, flush=True)


def run(cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {proc.stderr.strip()}")
    return proc.stdout


def export(model, seq, work, dynamic):
    shapes = {"x": {1: Dim("seq", min=LENGTHS[0], max=LENGTHS[-1])}} if dynamic else None
    ep = torch.export.export(model, (torch.randn(1, seq, 128),), dynamic_shapes=shapes).run_decompositions()
    path = work / ("encoder-dynamic.pt2" if dynamic else f"encoder-{seq}.pt2")
    torch.export.save(ep, path)
    return path


def bench(pteron, pte, inputs, args):
    out = run([pteron, "bench", pte, "--inputs", inputs, "--warmup", args.warmup, "--iters", args.iters,
               "--threads", args.threads, "--json"])
    return json.loads(out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=str(REPO / "bench" / "work" / "dynamic"))
    p.add_argument("--backends", default="xnnpack,optimized,portable")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    args = p.parse_args()
    priority = match_autogroup_nice()
    pteron = Path(args.build) / "tools" / "cli" / "pteron"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = Encoder().eval()

    dyn_pte = work / "encoder-dynamic.pte"
    run([pteron, "compile", export(model, LENGTHS[1], work, True), "-o", dyn_pte, "--backends", args.backends])
    rows = []
    for seq in LENGTHS:
        x = np.random.default_rng(seq).standard_normal((1, seq, 128)).astype(np.float32)
        inputs = work / f"inputs-{seq}.npz"
        np.savez(inputs, input_0=x)
        static_pte = work / f"encoder-{seq}.pte"
        run([pteron, "compile", export(model, seq, work, False), "-o", static_pte, "--backends", args.backends])
        d = bench(pteron, dyn_pte, inputs, args)
        s = bench(pteron, static_pte, inputs, args)
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        row = {"seq": seq, "dynamic_ms": d["median_ms"], "static_ms": s["median_ms"],
               "ratio": d["median_ms"] / s["median_ms"], "dynamic_planned_bytes": d["planned_bytes"],
               "static_planned_bytes": s["planned_bytes"], "dynamic_times_ms": d["times_ms"],
               "static_times_ms": s["times_ms"]}
        # Both programs must compute the model: check them once against PyTorch.
        for name, pte in (("dynamic", dyn_pte), ("static", static_pte)):
            out = work / f"out-{name}-{seq}.npz"
            run([pteron, "run", pte, "--inputs", inputs, "--outputs", out])
            err = float(np.abs(np.load(out)["output_0"] - want).max())
            row[f"{name}_max_abs_err"] = err
            if err > 1e-3:
                raise SystemExit(f"seq {seq}: the {name} program differs from PyTorch by {err}")
        rows.append(row)
        log(f"seq {seq}: dynamic {d['median_ms']:.3f} ms, static {s['median_ms']:.3f} ms "
            f"({row['ratio']:.2f}x)")

    results = {"model": "2 x nn.TransformerEncoderLayer(128, 4, 512), batch 1",
               "backends": args.backends, "threads": args.threads, "warmup": args.warmup,
               "iters": args.iters, "priority": priority, "machine": platform.processor() or platform.machine(),
               "goal": "dynamic within 1.1x of static at each length", "rows": rows}
    out = REPO / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "dynamic.json").write_text(json.dumps(results, indent=2) + "\n")
    lines = ["# Dynamic vs static programs (make bench-dynamic)", "",
             f"{results['model']}; `--backends {args.backends}`, {args.threads} threads, median of "
             f"{args.iters} runs after {args.warmup} warm-up, each in its own `pteron bench` process; "
             f"{priority}. One dynamic program (seq in [8, 512]) vs one static program per length.", "",
             "| seq | dynamic (ms) | static (ms) | dynamic / static | planned dynamic / static (KiB) |",
             "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['seq']} | {r['dynamic_ms']:.3f} | {r['static_ms']:.3f} | {r['ratio']:.2f}x | "
                     f"{r['dynamic_planned_bytes'] / 1024:.0f} / {r['static_planned_bytes'] / 1024:.0f} |")
    lines += ["", "The dynamic program's nodes run on the kernel libraries (XNNPACK refuses dynamic nodes;"
              " shape-building rewrites skip them), the static ones get XNNPACK regions where they"
              " pay; attention fuses into pteron::sdpa in both; the dynamic plan is sized for seq 512.",
              ""]
    (out / "dynamic.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
