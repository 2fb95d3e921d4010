"""pteron's portable kernels against ExecuTorch's portable runtime, on the same programs.

Both runtimes run the ExecuTorch-written fixtures mobilenet_v2.pte and transformer_block.pte
(tests/fixtures/executorch/) in this one process, single-threaded, through their Python APIs
(`pteron.load(pte).forward`, ExecuTorch's `_load_for_executorch(pte).forward`), on the fixture's
inputs: warm-up runs first, then the median of >= 10 timed runs each, up to 200 (pteron) and 100
(ExecuTorch) as time allows (ExecuTorch: fewer than 10 when one run is slower than
--et-budget / 10 seconds, never fewer than 3; the output says so). pteron's
timed runs come in two halves, before and after ExecuTorch's, so that a change in machine load
shows up as spread rather than as a bias. `pteron run --iters` (time inside the C++ runtime
only, no Python) is reported next to it. CPU seconds / wall seconds per run checks the single
thread: about 1.0 means one busy thread.

    .venv-et/bin/python bench/portable.py [--build build] [--et-budget 90]

Peer venv (ExecuTorch 1.5.1 + matplotlib); pteron's Python module comes from python/ and the
build folder. Writes bench/results/portable.json, portable.md and portable.png. The goal being
measured: pteron portable >= 5x faster than ExecuTorch portable.
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads: one thread everywhere

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "executorch"
RESULTS = REPO / "bench" / "results"
MODELS = ["mobilenet_v2", "transformer_block"]
GOAL = 5.0
MIN_REPEATS, MIN_ET_REPEATS = 10, 3


def log(msg: str) -> None:
    print(f"[bench-portable] {msg}", flush=True)


def timed(fn) -> tuple[float, float, object]:
    """(wall ms, cpu seconds / wall seconds, result) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall * 1e3, cpu / wall if wall else 0.0, result


def summary(times: list[float], ratios: list[float]) -> dict:
    """Wall-clock figures, and CPU time per run (what the run cost this process: on a shared
    machine it moves less with other jobs than the wall clock does)."""
    cpu_ms = [t * r for t, r in zip(times, ratios)]
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "repeats": len(times), "cpu_per_wall": round(statistics.median(ratios), 2),
            "median_cpu_ms": statistics.median(cpu_ms), "times_ms": [round(t, 3) for t in times]}


def max_diff_over_scale(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / (np.abs(want).max() or 1.0))


def bench_model(name: str, pteron_cli: Path, et_budget_s: float) -> dict:
    import pteron
    import torch
    from executorch.extension.pybindings.portable_lib import _load_for_executorch

    pte = FIXTURES / f"{name}.pte"
    arrays = np.load(FIXTURES / f"{name}.npz")
    inputs_np = [arrays[k] for k in sorted(arrays.files) if k.startswith("input_")]
    inputs_t = tuple(torch.from_numpy(x) for x in inputs_np)
    reference = arrays["output_0"]  # what ExecuTorch wrote when the fixture was made

    program = pteron.load(pte).load_method("forward")
    module = _load_for_executorch(str(pte))

    def run_pteron():
        return program(*inputs_np)

    def run_et():
        return module.forward(inputs_t)

    # Warm-up: caches, lazy allocations, first-touch of the weights.
    for _ in range(2):
        warm_ms, _, out_pteron = timed(run_pteron)
    pteron_repeats = max(MIN_REPEATS, min(200, int(5000 / max(warm_ms, 1e-3))))
    log(f"{name}: pteron warm run {warm_ms:.2f} ms; ExecuTorch warm-up run ...")
    et_warm_ms, _, out_et = timed(run_et)
    et_repeats = max(MIN_ET_REPEATS, min(100, int(et_budget_s * 1e3 / max(et_warm_ms, 1e-3))))
    log(f"{name}: ExecuTorch warm-up {et_warm_ms:.1f} ms -> {et_repeats} timed runs; "
        f"pteron {pteron_repeats} timed runs")

    pt_times, pt_ratios, et_times, et_ratios = [], [], [], []
    for half in range(2):
        for _ in range(pteron_repeats // 2 + half * (pteron_repeats % 2)):
            ms, ratio, _ = timed(run_pteron)
            pt_times.append(ms)
            pt_ratios.append(ratio)
        if half == 0:
            for i in range(et_repeats):
                ms, ratio, _ = timed(run_et)
                et_times.append(ms)
                et_ratios.append(ratio)
                if ms > 2000:
                    log(f"{name}: ExecuTorch run {i + 1}/{et_repeats}: {ms:.0f} ms")

    cli = subprocess.run([str(pteron_cli), "run", str(pte), "--inputs",
                          str(FIXTURES / f"{name}.npz"), "--iters", str(pteron_repeats + 2),
                          "--json"], capture_output=True, text=True, check=True)
    cli_report = json.loads(cli.stdout)
    result = {
        "program": str(pte.relative_to(REPO)),
        "pteron": summary(pt_times, pt_ratios),
        "pteron_cli": {"median_ms": cli_report["median_ms"], "min_ms": cli_report["min_ms"],
                       "iterations": cli_report["iterations"],
                       "note": "pteron run --iters: C++ execute() only, first iteration included"},
        "executorch": summary(et_times, et_ratios),
        "pteron_output_vs_fixture": max_diff_over_scale(out_pteron[0], reference),
        "executorch_output_vs_fixture": max_diff_over_scale(out_et[0], reference),
    }
    if et_repeats < MIN_REPEATS:
        result["executorch"]["note"] = (
            f"{et_repeats} timed runs, not {MIN_REPEATS}: one run took {et_warm_ms / 1e3:.1f} s "
            f"(budget {et_budget_s:.0f} s)")
    result["speedup"] = result["executorch"]["median_ms"] / result["pteron"]["median_ms"]
    result["speedup_cpu_time"] = (result["executorch"]["median_cpu_ms"]
                                  / result["pteron"]["median_cpu_ms"])
    result["goal_met"] = result["speedup"] >= GOAL
    return result


def write_chart(results: dict, path: Path) -> None:
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.38
    for k, (runtime, color) in enumerate([("executorch", "#9e9e9e"), ("pteron", "#1f77b4")]):
        values = [results[n][runtime]["median_ms"] for n in names]
        bars = ax.bar([i + (k - 0.5) * width for i in range(len(names))], values, width,
                      label="ExecuTorch 1.5.1 portable" if k == 0 else "pteron portable",
                      color=color)
        for bar, v in zip(bars, values):
            ax.annotate(f"{v:,.0f} ms" if v >= 100 else f"{v:.3g} ms", (bar.get_x() + bar.get_width() / 2, v), ha="center",
                        va="bottom", fontsize=8)
    ax.set_yscale("log")
    lowest = min(results[n][r]["median_ms"] for n in names for r in ("pteron", "executorch"))
    ax.set_ylim(bottom=lowest / 4)
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([f"{n}\n{results[n]['speedup']:.0f}x faster" for n in names])
    ax.set_ylabel("median latency, ms (log scale)")
    ax.set_title("Portable kernels, single thread, same .pte (ExecuTorch fixtures)")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_markdown(doc: dict, path: Path) -> None:
    rows = [("| program | pteron median (ms) | pteron runs | `pteron run` median (ms) | "
             "ExecuTorch median (ms) | ExecuTorch runs | ExecuTorch / pteron | >= 5x | "
             "same, CPU time |"),
            "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    notes = []
    for name, r in doc["models"].items():
        p, c, e = r["pteron"], r["pteron_cli"], r["executorch"]
        rows.append(f"| {name} | {p['median_ms']:.3f} | {p['repeats']} | {c['median_ms']:.3f} | "
                    f"{e['median_ms']:.1f} | {e['repeats']} | {r['speedup']:.1f}x | "
                    f"{'yes' if r['goal_met'] else 'NO'} | {r['speedup_cpu_time']:.1f}x |")
        if "note" in e:
            notes.append(f"- {name}, ExecuTorch: {e['note']}.")
        notes.append(f"- {name}: CPU/wall per run: pteron {p['cpu_per_wall']}, ExecuTorch "
                     f"{e['cpu_per_wall']}; outputs vs the fixture's ExecuTorch output, max |diff| "
                     f"/ scale: pteron {r['pteron_output_vs_fixture']:.1e}, ExecuTorch "
                     f"{r['executorch_output_vs_fixture']:.1e}; spread pteron "
                     f"{p['min_ms']:.3f}-{p['max_ms']:.3f} ms, ExecuTorch "
                     f"{e['min_ms']:.1f}-{e['max_ms']:.1f} ms.")
    text = [
        "# Portable kernels: pteron vs ExecuTorch",
        "",
        ("`make bench-portable` (bench/portable.py). Both runtimes run the same ExecuTorch-written "
        "programs (tests/fixtures/executorch/) in one process, single thread, through their "
        "Python APIs, after warm-up; medians of the timed runs. `pteron run` is the CLI's own "
        "timing (C++ execute() only). The last column is the ratio of median CPU time per run, "
        "less sensitive than the wall clock to other jobs on a shared machine."),
        "",
        *rows,
        "",
        *notes,
        "",
        f"Machine: {doc['machine']}. {doc['note']}",
        "",
        "![portable latency](portable.png)",
    ]
    path.write_text("\n".join(text) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=REPO / "build")
    parser.add_argument("--et-budget", type=float, default=90.0,
                        help="seconds of timed ExecuTorch runs per model (>= 3 runs regardless)")
    parser.add_argument("models", nargs="*", default=MODELS)
    args = parser.parse_args()
    sys.path[:0] = [str(REPO / "python"), str(args.build / "python")]
    import torch

    torch.set_num_threads(1)
    start = time.perf_counter()
    results = {}
    for name in args.models:
        results[name] = bench_model(name, args.build / "tools" / "cli" / "pteron", args.et_budget)
        r = results[name]
        log(f"{name}: pteron {r['pteron']['median_ms']:.3f} ms, ExecuTorch "
            f"{r['executorch']['median_ms']:.1f} ms -> {r['speedup']:.1f}x")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    doc = {"executorch": "1.5.1", "goal": f"pteron >= {GOAL}x faster",
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, load average "
                      f"{load:.1f} at the end" if load is not None else platform.machine(),
           "note": "Shared machine: absolute times move with other jobs; the ratio is the "
                   "figure to compare.",
           "seconds": round(time.perf_counter() - start, 1), "models": results}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "portable.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_markdown(doc, RESULTS / "portable.md")
    write_chart(results, RESULTS / "portable.png")
    log(f"done in {doc['seconds']:.0f} s: bench/results/portable.{{json,md,png}}")


if __name__ == "__main__":
    main()
