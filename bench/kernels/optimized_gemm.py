"""OPT-125M's matmul shapes: pteron's optimized linear/bmm kernels against
torch.nn.functional.linear / torch.bmm, both with 2 threads (and 1 thread), plus the portable
kernel for scale.

Run from the repository root after building (not part of `make test`):
    PYTHONPATH=build/python:python .venv/bin/python bench/kernels/optimized_gemm.py [--reps 15]

Each figure is the median of --reps timed calls (>= 10) after a warm-up call, in wall time; the
smallest process CPU time of one call is shown next to it (on a busy machine wall time includes
waiting for a core, CPU time does not; with 2 threads it includes time spent waiting in spin
loops, torch's OpenMP ones especially). torch.set_num_threads and pteron_native.set_num_threads choose the
threads.
"""

import argparse
import statistics
import time

import pteron_native
import torch

# (name, M, K, N): the linear layers of one decoder layer at sequence 128, and the LM head on
# the last token.
LINEARS = [
    ("q/k/v/out proj", 128, 768, 768),
    ("fc1", 128, 768, 3072),
    ("fc2", 128, 3072, 768),
    ("lm head (last token)", 1, 768, 50272),
]
# (name, batch, M, K, N): attention scores and context, 12 heads.
BMMS = [
    ("attn q @ k^T", 12, 128, 64, 128),
    ("attn p @ v", 12, 128, 128, 64),
]


def median_ms(fn, reps):
    """(median wall ms, minimum process CPU ms) over `reps` calls after a warm-up call."""
    fn()
    walls, cpus = [], []
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls) * 1e3, min(cpus) * 1e3


def row(name, flops, results):
    cells = []
    for label, (wall, cpu) in results:
        cells.append(f"{label} {wall:7.3f} ms ({flops / wall / 1e6:6.1f} GF/s, min cpu {cpu:7.3f})")
    print(f"{name:22s} " + " | ".join(cells), flush=True)


def bench(name, flops, run_pteron, run_torch, reps):
    results = []
    for threads in (2, 1):
        pteron_native.set_num_threads(threads)
        torch.set_num_threads(threads)
        results.append((f"optimized {threads}t", median_ms(lambda: run_pteron("optimized"), reps)))
        results.append((f"torch {threads}t", median_ms(run_torch, reps)))
    results.append(("portable", median_ms(lambda: run_pteron("portable"), max(3, reps // 3))))
    row(name, flops, results)
    two = results[0][1][0], results[1][1][0]
    print(f"{'':22s} optimized 2t vs torch 2t: {two[1] / two[0]:.2f}x", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=15)
    args = parser.parse_args()
    reps = max(10, args.reps)
    gen = torch.Generator().manual_seed(0)
    for name, m, k, n in LINEARS:
        x, w, b = (torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen),
                   torch.randn(n, generator=gen))
        out = torch.empty(m, n)
        bench(f"{name} {m}x{k}x{n}", 2 * m * k * n,
              lambda lib: pteron_native.run_kernel("aten::linear.out", [x, w, b, out], lib),
              lambda: torch.nn.functional.linear(x, w, b), reps)
    for name, bt, m, k, n in BMMS:
        a, b = torch.randn(bt, m, k, generator=gen), torch.randn(bt, k, n, generator=gen)
        out = torch.empty(bt, m, n)
        bench(f"{name} {bt}x{m}x{k}x{n}", 2 * bt * m * k * n,
              lambda lib: pteron_native.run_kernel("aten::bmm.out", [a, b, out], lib),
              lambda: torch.bmm(a, b), reps)
    pteron_native.set_num_threads(0)


if __name__ == "__main__":
    main()
