"""make bench-gpu: the zoo's mobilenet-v2, resnet-18 and OPT-125M on the Vulkan path (fp32 and
fp16) next to the best CPU path (XNNPACK + optimized + portable kernels), in one run.

    python bench/gpu.py --build build [--models mobilenet-v2,resnet-18,opt-125m] [--iters 5]
    python bench/gpu.py --chart-only        # bench/results/gpu.png from gpu.json (matplotlib)

Each system is compiled with `pteron compile --backends ...` and timed with `pteron bench`
(medians of --iters runs after --warmup, --threads 2) in its own process; outputs are checked
against PyTorch eager with `pteron run`. The Vulkan device is whatever the loader finds
(VK_ICD_FILENAMES pins lavapipe when set): on this machine that is lavapipe, Mesa's Vulkan
implementation on the CPU, so its numbers say what the GPU path costs on a CPU, not what a GPU
does. Results: bench/results/gpu.{json,md,png}.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
SYSTEMS = [
    ("Vulkan fp32", "vulkan,portable"),
    ("Vulkan fp16", "vulkan-fp16,portable"),
    ("best CPU", "xnnpack,optimized,portable"),
]


def log(msg):
    print(f"[bench-gpu {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def cli(*args, env=None):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=env)


def prepare(name, work):
    """The model's .pt2, inputs and eager output (pteron's Python, torch eager)."""
    import numpy as np
    import torch

    from pteron import zoo

    model, inputs = zoo.get(name)
    ep = zoo.export_program(name, log=log)
    torch.export.save(ep, work / f"{name}.pt2")
    np.savez(work / f"{name}.in.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    with torch.no_grad():
        return model(*inputs).numpy()


def run_system(name, label, backends, work, args, env, want):
    import numpy as np

    pte = work / f"{name}.{label.replace(' ', '-')}.pte"
    proc = cli(args.pteron, "compile", work / f"{name}.pt2", "-o", pte, "--backends", backends,
               "--json", env=env)
    if proc.returncode != 0:
        return {"backends": backends, "error": proc.stderr.strip()}
    report = json.loads(proc.stdout)
    regions = [f"{r['backend']}:{r['nodes']}" for r in report["delegated_regions"]]
    inputs = work / f"{name}.in.npz"
    proc = cli(args.pteron, "bench", pte, "--inputs", inputs, "--warmup", args.warmup,
               "--iters", args.iters, "--threads", args.threads, "--json", env=env)
    if proc.returncode != 0:
        return {"backends": backends, "error": proc.stderr.strip()}
    result = {"backends": backends, "regions": regions, **json.loads(proc.stdout)}
    out = work / f"{pte.stem}.out.npz"
    proc = cli(args.pteron, "run", pte, "--inputs", inputs, "--outputs", out, env=env)
    if proc.returncode == 0:
        got = np.load(out)["output_0"]
        result["rel_error"] = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    return result


def vulkan_device(env):
    """The first device vulkaninfo lists (the delegate prefers discrete, then integrated GPUs)."""
    proc = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True, env=env)
    names = [line.split("=", 1)[1].strip() for line in proc.stdout.splitlines()
             if line.strip().startswith("deviceName")]
    return names[0] if names else "unknown (vulkaninfo lists no device)"


def median_ms(r):
    for key in ("median_ms", "p50_ms"):
        if key in r:
            return r[key]
    lat = r.get("latency_ms") or {}
    return lat.get("median") or lat.get("p50")


def write_markdown(doc, path):
    lines = ["# GPU path: Vulkan delegate vs the best CPU path", "",
             f"`make bench-gpu` (bench/gpu.py). Vulkan device: **{doc['device']}** — "
             + ("Mesa's lavapipe, a Vulkan implementation running on the CPU: these numbers are "
                "the GPU path's cost on a CPU, not a GPU's speed. " if "llvmpipe" in doc["device"]
                else "")
             + f"{doc['threads']} threads, medians of {doc['iters']} runs after {doc['warmup']} "
             f"warm-up; load average {doc['load_average']}.", ""]
    for name, systems in doc["models"].items():
        lines += [f"## {name}", "", "| system | backends | median (ms) | load (ms) | regions | "
                  "rel. error vs eager |", "|---|---|---:|---:|---|---:|"]
        for label, r in systems.items():
            if "error" in r:
                lines.append(f"| {label} | {r['backends']} | error: {r['error'][:80]} | | | |")
                continue
            m = median_ms(r)
            lines.append(f"| {label} | {r['backends']} | {m:.1f} | {r.get('load_ms', 0):.0f} | "
                         f"{', '.join(r['regions'])} | {r.get('rel_error', float('nan')):.1e} |")
        lines.append("")
    path.write_text("\n".join(lines))


def write_chart(doc, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["models"])
    labels = [s[0] for s in SYSTEMS]
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        values = [median_ms(doc["models"][n].get(label, {})) or 0 for n in names]
        ax.bar([x + i * width for x in range(len(names))], values, width, label=label)
    ax.set_xticks([x + width for x in range(len(names))], names)
    ax.set_yscale("log")
    ax.set_ylabel("median latency (ms, log)")
    ax.set_title(f"Vulkan ({doc['device']}) vs best CPU path")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(REPO / "build"))
    ap.add_argument("--models", default="mobilenet-v2,resnet-18,opt-125m")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--work", default="/tmp/pteron-bench-gpu")
    ap.add_argument("--chart-only", action="store_true")
    args = ap.parse_args()
    if args.chart_only:
        write_chart(json.loads((RESULTS / "gpu.json").read_text()), RESULTS / "gpu.png")
        return
    args.pteron = Path(args.build) / "tools" / "cli" / "pteron"
    env = dict(os.environ)
    if os.path.exists(LAVAPIPE):
        env.setdefault("VK_ICD_FILENAMES", LAVAPIPE)
    os.environ.update(env)
    sys.path[:0] = [str(Path(args.build) / "python"), str(REPO / "python")]

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    device = vulkan_device(env)
    doc = {"device": device, "threads": args.threads, "iters": args.iters, "warmup": args.warmup,
           "load_average": os.getloadavg()[0], "models": {}}
    for name in args.models.split(","):
        log(f"{name}: export")
        want = prepare(name, work)
        doc["models"][name] = {}
        for label, backends in SYSTEMS:
            log(f"{name}: {label} ({backends})")
            r = run_system(name, label, backends, work, args, env, want)
            doc["models"][name][label] = r
            log(f"  {median_ms(r) if 'error' not in r else r['error'][:200]}")
            RESULTS.mkdir(parents=True, exist_ok=True)
            (RESULTS / "gpu.json").write_text(json.dumps(doc, indent=1))
            write_markdown(doc, RESULTS / "gpu.md")
    try:
        write_chart(doc, RESULTS / "gpu.png")
    except ImportError:
        log("no matplotlib here: `make bench-gpu` draws gpu.png with the ExecuTorch venv's")


if __name__ == "__main__":
    main()
