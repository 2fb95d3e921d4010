"""Decode-shaped GEMV (one row x [N, K] weights, default 4096 x 4096) on pteron's optimized
kernels: fp32 aten::linear against the quantized linears (int8 weight-only, int4 weight-only,
8da4w), with the bandwidth each achieves (weight bytes streamed per call / time) next to a
STREAM-style copy measured in the same run (bytes read + written per second by a large
torch.Tensor.copy_, the memory bandwidth this machine gives one process now).

With --rows > 1 (prefill) the GB/s columns are GFLOP/s per CPU second (2 x rows x N x K).

Run from the repository root after building (not part of `make test`):
    PYTHONPATH=build/python:python .venv/bin/python bench/llm_linear.py [--n 4096] [--k 4096]
        [--threads 1] [--reps 50] [--group 32] [--rows 1]

Figures are medians of --reps calls after a warm-up (wall time; CPU time per call next to it,
since wall time on a busy machine includes waiting for a core).
"""

import argparse
import sys
from pathlib import Path

import pteron_native
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from membw import stream_copy  # noqa: E402
from timing import median_ms  # noqa: E402


def pack_int4(q):
    n, k = q.shape
    u = (q + 8).to(torch.uint8).reshape(n, k // 32, 2, 16)
    return (u[:, :, 0] | (u[:, :, 1] << 4)).reshape(n, k // 2).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--rows", type=int, default=1, help="input rows (1: decode; e.g. 128: prefill)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=50)
    a = ap.parse_args()
    pteron_native.set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    n, k, g = a.n, a.k, a.group
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(a.rows, k, generator=gen)
    w = torch.randn(n, k, generator=gen)
    q4 = torch.randint(-8, 8, (n, k), generator=gen)
    q8 = torch.randint(-128, 128, (n, k), generator=gen).to(torch.int8)
    s4 = torch.rand(n, k // g, generator=gen) * 0.01
    s8 = torch.rand(n, 1, generator=gen) * 0.01
    sums = torch.zeros(n)
    out = torch.empty(a.rows, n)
    eps = torch.finfo(torch.float32).smallest_normal
    w4 = pack_int4(q4)

    copy = stream_copy(64, max(5, a.reps // 5))
    copy_ms, stream, stream_cpu = copy["copy_ms"], copy["gb_per_s"], copy["gb_per_cpu_s"]

    runs = [
        ("fp32 linear", w.numel() * 4,
         lambda: pteron_native.run_kernel("aten::linear.out", [x, w, None, out], "optimized")),
        ("int8 weight-only", q8.numel() + s8.numel() * 4,
         lambda: pteron_native.run_kernel("pteron::linear_q8w.out", [x, q8, s8, None, k, out],
                                          "optimized")),
        (f"int4 weight-only g{g}", w4.numel() + s4.numel() * 4,
         lambda: pteron_native.run_kernel("pteron::linear_q4w.out", [x, w4, s4, None, g, out],
                                          "optimized")),
        (f"8da4w g{g}", w4.numel() + s4.numel() * 4,
         lambda: pteron_native.run_kernel("pteron::linear_8da4w.out",
                                          [x, w4, s4, sums, None, g, eps, out], "optimized")),
    ]
    shape = f"{'GEMV' if a.rows == 1 else 'GEMM'} {a.rows} x {k} -> {n}"
    print(f"{shape}, {a.threads} thread(s); STREAM-style copy: {stream:.1f} GB/s "
          f"({copy_ms:.2f} ms per 64 MiB; {stream_cpu:.1f} GB/s per CPU second)")
    print(f"{'kernel':<24}{'ms':>8}{'cpu ms':>8}{'MB':>7}{'GB/s':>7}{'of copy':>8}"
          f"{'GB/s cpu':>9}{'of copy':>8}")
    for name, nbytes, fn in runs:
        ms, cpu = median_ms(fn, a.reps)
        gbs = nbytes / (ms * 1e-3) / 1e9
        gbs_cpu = nbytes / (max(cpu, 1e-6) * 1e-3) / 1e9
        if a.rows > 1:  # compute-bound: GFLOP/s per CPU second instead
            gbs = gbs_cpu = 2 * a.rows * n * k / (max(cpu, 1e-6) * 1e-3) / 1e9
        print(f"{name:<24}{ms:8.3f}{cpu:8.3f}{nbytes / 1e6:7.1f}{gbs:7.1f}{gbs / stream:8.0%}"
              f"{gbs_cpu:9.1f}{gbs_cpu / stream_cpu:8.0%}")


if __name__ == "__main__":
    main()
