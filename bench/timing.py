"""Timing shared by the benchmarks (bench/llm_linear.py, bench/ops.py, bench/membw.py,
bench/dynamic.py, bench/cpu_int8.py, bench/families_vs_eager.py, bench/arm_icount.py,
bench/kernels/optimized_non_gemm.py, bench/kernels/winograd_conv.py), and where their results
may go.

Wall time and the process CPU time are both taken per call: on a busy machine wall time
includes waiting for a core, CPU time does not.
"""

import os
import statistics
import time
from pathlib import Path


def timed_calls_wall_cpu_ms(fn, reps, warmup=1):
    """(wall ms, process CPU ms) of each of `reps` calls of fn after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    walls, cpus = [], []
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append((time.perf_counter() - w) * 1e3)
        cpus.append((time.process_time() - c) * 1e3)
    return walls, cpus


def median_ms(fn, reps, warmup=1):
    """(median wall ms, median process CPU ms) over `reps` calls of fn after `warmup` calls."""
    walls, cpus = timed_calls_wall_cpu_ms(fn, reps, warmup)
    return statistics.median(walls), statistics.median(cpus)


def timed_calls_ms(fn, reps, warmup=1):
    """Wall ms of each of `reps` calls of fn after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    walls = []
    for _ in range(reps):
        w = time.perf_counter()
        fn()
        walls.append((time.perf_counter() - w) * 1e3)
    return walls


def median_of_rounds(rounds: list[dict]) -> dict:
    """Alternating rounds of `pteron bench --json` (or a peer's same fields): the median of the
    rounds' medians, the rest from the round that gave it, and the highest load any round saw."""
    ordered = sorted(rounds, key=lambda r: r["median_ms"])
    mid = ordered[len(ordered) // 2]
    keys = ("median_ms", "p90_ms", "min_ms", "median_cpu_ms", "load_ms", "peak_rss_bytes", "isa")
    return {**{k: mid[k] for k in keys if k in mid},
            "round_medians_ms": [round(r["median_ms"], 3) for r in rounds],
            "max_load_average": round(max(r.get("load_average_1m", 0.0) for r in rounds), 1)}


def results_folder(wanted: Path, published: Path, max_load: float, scratch: Path, log) -> Path:
    """Where a benchmark writes its results: `wanted`, unless that is the published folder and the
    load average went above the core count, when the figures go to `scratch` and the log says so
    (a figure taken while other work held the cores is not published)."""
    cores = os.cpu_count() or 1
    if max_load <= cores or wanted.resolve() != published.resolve():
        return wanted
    log(f"load average reached {max_load:.1f} on {cores} cores: not published to {published}, written "
        f"to {scratch} instead (rerun on a quieter machine)")
    return scratch
