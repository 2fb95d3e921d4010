"""make bench-gpu: the zoo's mobilenet-v2, resnet-18 and OPT-125M on the Vulkan path (fp32 and
fp16) next to the best CPU program, in one run.

    python bench/gpu.py --build build [--models mobilenet-v2,resnet-18,opt-125m] [--iters 5]
                        [--warmup 1] [--systems "Vulkan fp32,best CPU"] [--results DIR]
    python bench/gpu.py --chart-only        # bench/results/gpu.png from gpu.json (matplotlib)

Each candidate backend list is compiled with `pteron compile --backends ...` and timed with
`pteron bench` (medians of --iters runs after --warmup, --threads 2) in its own process; outputs
are checked against PyTorch eager with `pteron run`. A system with several candidates (the best
CPU program: XNNPACK + optimized + portable, or optimized + portable, as `make bench-opt`) is
its fastest candidate; every candidate's numbers are recorded under "candidates". The Vulkan device is whatever the loader finds
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
# (label, candidate backend lists): a system's result is its fastest candidate. An fp16
# arithmetic variant of the Vulkan delegate gets its own row here.
SYSTEMS = [
    ("Vulkan fp32", ["vulkan,portable"]),
    ("Vulkan fp16", ["vulkan:fp16=on,portable"]),
    ("best CPU", ["xnnpack,optimized,portable", "optimized,portable"]),
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


def regions_per_backend(report):
    """{backend: {"regions": count, "nodes": delegated nodes}} from `pteron compile --json`."""
    per = {}
    for r in report["delegated_regions"]:
        entry = per.setdefault(r["backend"], {"regions": 0, "nodes": 0})
        entry["regions"] += 1
        entry["nodes"] += r["nodes"]
    return per


def regions_text(per):
    """"xnnpack: 60 regions (198 nodes)", per backend."""
    return "; ".join(f"{b}: {e['regions']} region{'s' if e['regions'] != 1 else ''} "
                     f"({e['nodes']} nodes)" for b, e in per.items()) or "no delegate (kernels only)"


def run_candidate(name, backends, work, args, env, want):
    """One backend list: compile, time, check the output against eager."""
    import numpy as np

    pte = work / f"{name}.{backends.replace(',', '+')}.pte"
    proc = cli(args.pteron, "compile", work / f"{name}.pt2", "-o", pte, "--backends", backends,
               "--json", env=env)
    if proc.returncode != 0:
        return {"backends": backends, "error": proc.stderr.strip()}
    report = json.loads(proc.stdout)
    result = {"backends": backends, "regions": regions_per_backend(report),
              "kernel_calls": report["kernel_calls"]}
    inputs = work / f"{name}.in.npz"
    proc = cli(args.pteron, "bench", pte, "--inputs", inputs, "--warmup", args.warmup,
               "--iters", args.iters, "--threads", args.threads, "--json", env=env)
    if proc.returncode != 0:
        return {**result, "error": proc.stderr.strip()}
    result.update(json.loads(proc.stdout))
    out = work / f"{pte.stem}.out.npz"
    proc = cli(args.pteron, "run", pte, "--inputs", inputs, "--outputs", out, env=env)
    if proc.returncode != 0:
        return {**result, "error": f"pteron run: {proc.stderr.strip()}"}
    got = np.load(out)["output_0"]
    result["rel_error"] = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))
    return result


def run_system(name, candidates, work, args, env, want):
    """The fastest candidate that ran, with every candidate under "candidates" (without their
    per-iteration times) when there is more than one."""
    results = []
    for backends in candidates:
        results.append(run_candidate(name, backends, work, args, env, want))
        r = results[-1]
        log(f"  --backends {backends}: "
            + (f"median {ms(median_ms(r))} ms" if "error" not in r else r["error"][:200]))
    timed = [r for r in results if "error" not in r]
    if not timed:
        return {"backends": " or ".join(candidates),
                "error": "; ".join(f"{r['backends']}: {r['error']}" for r in results)}
    best = dict(min(timed, key=median_ms))
    if len(results) > 1:
        best["candidates"] = [{k: v for k, v in r.items() if k != "times_ms"} for r in results]
    return best


def vulkan_device(env):
    """The first device vulkaninfo lists (the delegate prefers discrete, then integrated GPUs)."""
    proc = subprocess.run(["vulkaninfo", "--summary"], capture_output=True, text=True, env=env)
    names = [line.split("=", 1)[1].strip() for line in proc.stdout.splitlines()
             if line.strip().startswith("deviceName")]
    return names[0] if names else "unknown (vulkaninfo lists no device)"


def ms(value):
    """Milliseconds with 3 significant digits below 100 ms (CPU rows can be tens of us)."""
    return f"{value:.1f}" if value >= 100 else f"{value:.3g}"


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
            lines.append(f"| {label} | {r['backends']} | {ms(m)} | {r.get('load_ms', 0):.0f} | "
                         f"{regions_text(r['regions'])} | {r.get('rel_error', float('nan')):.1e} |")
        for label, r in systems.items():
            if len(r.get("candidates", [])) > 1:
                lines += ["", f"{label}: the fastest of " + "; ".join(
                    f"`--backends {c['backends']}` "
                    + (f"{ms(median_ms(c))} ms ({regions_text(c['regions'])})"
                       if "error" not in c else f"failed: {c['error'][:80]}")
                    for c in r["candidates"]) + "."]
        lines.append("")
    path.write_text("\n".join(lines))


def write_chart(doc, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["models"])
    labels = [label for label, _ in SYSTEMS if any(label in doc["models"][n] for n in names)]
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
    ap.add_argument("--systems", default=",".join(label for label, _ in SYSTEMS),
                    help="comma-separated labels of the systems to run")
    ap.add_argument("--work", default="/tmp/pteron-bench-gpu")
    ap.add_argument("--results", default=str(RESULTS),
                    help="where gpu.{json,md,png} go (a trial run points this elsewhere)")
    ap.add_argument("--chart-only", action="store_true")
    args = ap.parse_args()
    results = Path(args.results)
    if args.chart_only:
        write_chart(json.loads((results / "gpu.json").read_text()), results / "gpu.png")
        return
    known = dict(SYSTEMS)
    systems = [s.strip() for s in args.systems.split(",")]
    unknown = [s for s in systems if s not in known]
    if unknown:
        ap.error(f"unknown system(s) {unknown}; known: {', '.join(known)}")
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
        for label in systems:
            log(f"{name}: {label}")
            doc["models"][name][label] = run_system(name, known[label], work, args, env, want)
            results.mkdir(parents=True, exist_ok=True)
            (results / "gpu.json").write_text(json.dumps(doc, indent=1))
            write_markdown(doc, results / "gpu.md")
    try:
        write_chart(doc, results / "gpu.png")
    except ImportError:
        log("no matplotlib here: `make bench-gpu` draws gpu.png with the ExecuTorch venv's")


if __name__ == "__main__":
    main()
