"""Vulkan fp16 arithmetic vs fp16 storage vs fp32, timed with `pteron bench` on one program per
precision (fp16 arithmetic and storage-only load the same `vulkan:fp16=on` program, with
PTERON_VULKAN_FP16_ARITH=1 and =0: a CPU device such as lavapipe runs storage-only unasked).

    nice -n -15 python bench/vulkan_fp16.py --build build [--iters 7] [--rounds 3] [--size 64]

Models: resnet-18 and mobilenet-v2 (zoo, random weights) at --size x --size, and the 2-layer
OPT of the tests. Writes bench/results/vulkan_fp16.{json,md}. On lavapipe (a CPU Vulkan
device) fp16 arithmetic is emulated by LLVM through fp32 with a conversion per operation, so
it is slower there (why CPU devices default to storage-only); the variant is for GPUs with
native fp16 ALUs.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
RESULTS = REPO / "bench" / "results"
LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
SYSTEMS = [  # (label, backends, environment)
    ("fp32", "vulkan,portable", {}),
    ("fp16 storage", "vulkan:fp16=on,portable", {"PTERON_VULKAN_FP16_ARITH": "0"}),
    ("fp16 arithmetic", "vulkan:fp16=on,portable", {"PTERON_VULKAN_FP16_ARITH": "1"}),
]


def prepare(name, size, work):
    import numpy as np
    import torch

    import pteron
    from pteron import zoo

    if name == "opt-2-layers":
        sys.path.insert(0, str(REPO / "tests" / "backends" / "vulkan"))
        from test_vulkan_fp16_arith import _opt_2_layers

        model, inputs = _opt_2_layers()
    else:
        model, _ = zoo.get(name)
        inputs = (torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0)),)
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), work / f"{name}.pt2")
    np.savez(work / f"{name}.in.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    with torch.no_grad():
        return model(*inputs).numpy()


def cpu_seconds():
    """User + system CPU seconds of the finished child processes so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    import numpy as np

    from priority import match_autogroup_nice

    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--iters", type=int, default=7)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--models", default="resnet-18,mobilenet-v2,opt-2-layers")
    args = ap.parse_args()
    priority = match_autogroup_nice()
    pteron_cli = str(Path(args.build).resolve() / "tools" / "cli" / "pteron")
    env = dict(os.environ)
    if os.path.exists(LAVAPIPE):
        env.setdefault("VK_ICD_FILENAMES", LAVAPIPE)
    work = Path(os.environ.get("TMPDIR", "/tmp")) / "pteron_vulkan_fp16_bench"
    work.mkdir(exist_ok=True)
    rows = []
    for name in args.models.split(","):
        want = prepare(name, args.size, work)
        inputs = work / f"{name}.in.npz"
        results = {label: {"medians": [], "mins": [], "cpu": []} for label, _, _ in SYSTEMS}
        for label, backends, extra in SYSTEMS:
            pte = work / f"{name}.{backends.split(',')[0]}.pte"
            subprocess.run([pteron_cli, "compile", work / f"{name}.pt2", "-o", pte,
                            "--backends", backends], check=True, capture_output=True)
            run_env = dict(env, PTERON_VULKAN_LOG="1", **extra)
            out = work / "out.npz"
            run = subprocess.run([pteron_cli, "run", pte, "--inputs", inputs, "--outputs", out],
                                 env=run_env, capture_output=True, text=True, check=True)
            results[label]["precision"] = sorted(
                {line.split(": ")[-1] for line in run.stderr.splitlines()
                 if line.startswith("pteron vulkan:")})
            got = np.load(out)["output_0"]
            results[label]["rel_error"] = float(np.abs(got - want).max() / (1 + np.abs(want).max()))
            results[label]["pte"], results[label]["env"] = pte, run_env
        # Rounds in rotated order, so load drifts do not favour whichever system runs first.
        for r in range(args.rounds):
            order = SYSTEMS[r % len(SYSTEMS):] + SYSTEMS[:r % len(SYSTEMS)]
            for label, _, _ in order:
                res = results[label]
                cpu = []
                for warmup, iters in ((0, 1), (1, args.iters)):
                    before = cpu_seconds()
                    bench = subprocess.run(
                        [pteron_cli, "bench", res["pte"], "--inputs", inputs, "--warmup",
                         str(warmup), "--iters", str(iters), "--threads", "2", "--json"],
                        env=res["env"], capture_output=True, text=True, check=True)
                    cpu.append(cpu_seconds() - before)
                result = json.loads(bench.stdout)
                res["medians"].append(result["median_ms"])
                res["mins"].append(result["min_ms"])
                # CPU time (all threads) of args.iters inferences: the long run minus the
                # one-inference run (load and shader compilation cancel out).
                res["cpu"].append(1000 * (cpu[1] - cpu[0]) / args.iters)
        for label, backends, _ in SYSTEMS:
            res = results[label]
            row = {"model": name, "system": label, "backends": backends,
                   "precision": res["precision"], "median_ms": statistics.median(res["medians"]),
                   "min_ms": min(res["mins"]), "round_medians_ms": res["medians"],
                   "cpu_ms": statistics.median(res["cpu"]),
                   "rel_error": res["rel_error"]}
            rows.append(row)
            print(f"{name:14s} {label:16s} {row['median_ms']:9.1f} ms (min {row['min_ms']:.1f}, "
                  f"cpu {row['cpu_ms']:.1f})"
                  f"  err {row['rel_error']:.1e}  {row['precision']}", flush=True)
    load = os.getloadavg()[0]
    device = subprocess.run(["vulkaninfo", "--summary"], env=env, capture_output=True,
                            text=True).stdout
    device = next((line.split("=", 1)[1].strip() for line in device.splitlines()
                   if "deviceName" in line), "unknown")
    RESULTS.mkdir(exist_ok=True)
    meta = {"device": device, "size": args.size, "iters": args.iters, "rounds": args.rounds,
            "load_average": load,
            "priority": priority, "time": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (RESULTS / "vulkan_fp16.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))
    lines = ["# Vulkan fp16 arithmetic vs fp16 storage vs fp32", "",
             f"`bench/vulkan_fp16.py` on **{device}**, {meta['time']}: median over {args.rounds} "
             f"rounds (rotated order) of `pteron bench` medians of {args.iters} runs (1 warm-up, "
             f"2 threads), min over all runs; images {args.size}x{args.size}; "
             f"load average {load:.2f} ({priority}). Error: max |out - eager| / (1 + "
             "max |eager|).", "",
             "| model | precision | median (ms) | min (ms) | CPU ms / inference | rel. error vs "
             "eager |",
             "|---|---|---:|---:|---:|---:|"]
    lines[3:3] = [
        "",
        "What to read from it: on lavapipe (a CPU) fp16 arithmetic is slower than fp16 "
        "storage: x86 without AVX512-FP16 has no half ALU, so LLVM widens "
        "every fp16 operation to fp32 and rounds it back, and the fp16 products are widened "
        "again for the fp32 accumulators. fp16 storage itself saves memory traffic and is "
        "sometimes faster than fp32 here. The arithmetic variants are for GPUs with fp16 "
        "ALUs (2x fp32 rate on most mobile GPUs), which is why a `vulkan:fp16=on` region runs "
        "them on GPUs with shaderFloat16 and runs storage-only on CPU devices unless "
        "PTERON_VULKAN_FP16_ARITH=1. The machine is shared and noisy: wall times swing by 2x "
        "between runs; the CPU time per inference (user + system of all the process's "
        "threads, a long run minus a one-inference run) is the steadier measure."]
    for r in rows:
        lines.append(f"| {r['model']} | {r['system']} | {r['median_ms']:.1f} | {r['min_ms']:.1f} "
                     f"| {r['cpu_ms']:.1f} | {r['rel_error']:.1e} |")
    (RESULTS / "vulkan_fp16.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
