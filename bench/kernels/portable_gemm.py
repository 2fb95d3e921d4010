"""Where the portable GEMM stands: GFLOP/s of pteron's portable mm and 3x3 convolution, with
single-threaded torch for scale.

Run from the repository root after building:
    PYTHONPATH=build/python:python .venv/bin/python bench/kernels/portable_gemm.py
Times are the best of several runs, in thread CPU time (robust on a shared machine) and wall
time. Not a test.
"""

import time

import pteron_native
import torch


def best_time(fn, reps):
    fn()  # warm up caches and any lazy initialisation
    cpu = wall = float("inf")
    for _ in range(reps):
        c0, w0 = time.thread_time(), time.perf_counter()
        fn()
        cpu = min(cpu, time.thread_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall


def report(name, flops, ours, theirs):
    (cpu, wall), (tcpu, _) = ours, theirs
    print(f"{name:34s} pteron {flops / cpu / 1e9:6.1f} GFLOP/s ({cpu * 1e3:7.2f} ms cpu, "
          f"{wall * 1e3:7.2f} ms wall) | torch 1 thread {flops / tcpu / 1e9:6.1f} GFLOP/s")


def main():
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)

    m, k, n = 128, 768, 3072
    a, b = torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)
    out = torch.empty(m, n)
    report(f"mm {m}x{k} @ {k}x{n}", 2 * m * k * n,
           best_time(lambda: pteron_native.run_kernel("aten::mm.out", [a, b, out]), 10),
           best_time(lambda: torch.mm(a, b), 10))

    x = torch.randn(1, 32, 112, 112, generator=gen)
    w, bias = torch.randn(64, 32, 3, 3, generator=gen), torch.randn(64, generator=gen)
    y = torch.empty(1, 64, 112, 112)
    args = [x, w, bias, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, y]
    report("conv3x3 1x32x112x112 -> 64", 2 * 64 * 112 * 112 * 32 * 9,
           best_time(lambda: pteron_native.run_kernel("aten::convolution.out", args), 5),
           best_time(lambda: torch.conv2d(x, w, bias, 1, 1), 5))


if __name__ == "__main__":
    main()
