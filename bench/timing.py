"""Timing shared by the benchmarks (bench/llm_linear.py, bench/ops.py, bench/membw.py,
bench/dynamic.py, bench/cpu_int8.py, bench/kernels/optimized_non_gemm.py,
bench/kernels/winograd_conv.py).

Wall time and the process CPU time are both taken per call: on a busy machine wall time
includes waiting for a core, CPU time does not.
"""

import statistics
import time


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
