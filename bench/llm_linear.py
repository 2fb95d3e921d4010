"""Decode-shaped GEMV (one row x [N, K] weights, default 4096 x 4096) on pteron's optimized
kernels: fp32 aten::linear against the quantized linears (int8 weight-only, int4 weight-only,
8da4w, 8da8w per channel), with the bandwidth each achieves (weight bytes streamed per call / time) next to a
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
import itertools
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


def pack_panels(q, scales):
    """8da4w's panels of 16 channels (kernels/optimized/qlinear/qlinear_kernels.h)."""
    n, k = q.shape
    p = (n + 15) // 16
    u = torch.full((p * 16, k), 8, dtype=torch.uint8)
    u[:n] = (q + 8).to(torch.uint8)
    u = u.reshape(p, 16, k // 8, 2, 4)
    packed = (u[:, :, :, 0] | (u[:, :, :, 1] << 4)).permute(0, 2, 1, 3).reshape(p, k // 8, 64)
    s = torch.zeros(p * 16, scales.shape[1])
    s[:n] = scales
    return packed.contiguous(), s.reshape(p, 16, -1).permute(0, 2, 1).contiguous()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--rows", type=int, default=1, help="input rows (1: decode; e.g. 128: prefill)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--min-mib", type=int, default=128,
                    help="cycle through weight sets totalling at least this much (beyond the caches)")
    a = ap.parse_args()
    pteron_native.set_num_threads(a.threads)
    torch.set_num_threads(a.threads)
    n, k, g = a.n, a.k, a.group
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(a.rows, k, generator=gen)
    out = torch.empty(a.rows, n)
    eps = torch.finfo(torch.float32).smallest_normal
    sums = torch.zeros(n)

    def weights(kind):
        """One set of a kernel's weight arguments (fresh random values)."""
        if kind == "fp32":
            return [torch.randn(n, k, generator=gen)]
        if kind in ("int8", "8da8w"):
            return [torch.randint(-128, 128, (n, k), generator=gen).to(torch.int8),
                    torch.rand(n, 1, generator=gen) * 0.01]
        q4 = torch.randint(-8, 8, (n, k), generator=gen)
        s4 = torch.rand(n, k // g, generator=gen) * 0.01
        return [pack_int4(q4), s4] if kind == "int4" else list(pack_panels(q4, s4))

    def cycling(kind, call):
        """(bytes of one weight set, fn): fn runs `call` on the next of enough weight sets that
        together they exceed --min-mib, so that each call streams its weights from memory rather
        than from the last level cache (one 4096 x 4096 int4 set fits in a 32 MiB L3)."""
        first = weights(kind)
        nbytes = sum(t.numel() * t.element_size() for t in first)
        sets = [first] + [weights(kind) for _ in range(max(0, -(-a.min_mib * 2**20 // nbytes) - 1))]
        it = itertools.cycle(sets)
        return nbytes, len(sets), lambda: call(next(it))

    copy = stream_copy(64, max(5, a.reps // 5))
    copy_ms, stream, stream_cpu = copy["copy_ms"], copy["gb_per_s"], copy["gb_per_cpu_s"]

    def kernel(op, args):
        return lambda w: pteron_native.run_kernel(op, args(w), "optimized")

    runs = [
        ("fp32 linear", *cycling("fp32", kernel("aten::linear.out", lambda w: [x, w[0], None, out]))),
        ("int8 weight-only", *cycling("int8", kernel("pteron::linear_q8w.out",
                                                     lambda w: [x, w[0], w[1], None, k, out]))),
        (f"int4 weight-only g{g}", *cycling("int4", kernel("pteron::linear_q4w.out",
                                                           lambda w: [x, w[0], w[1], None, g, out]))),
        (f"8da4w g{g}", *cycling("8da4w", kernel("pteron::linear_8da4w.out",
                                                 lambda w: [x, w[0], w[1], sums, None, g, eps, out]))),
        ("8da8w", *cycling("8da8w", kernel("pteron::linear_8da8w.out",
                                           lambda w: [x, w[0], w[1], None, k, eps, out]))),
    ]
    shape = f"{'GEMV' if a.rows == 1 else 'GEMM'} {a.rows} x {k} -> {n}"
    print(f"{shape}, {a.threads} thread(s); STREAM-style copy: {stream:.1f} GB/s "
          f"({copy_ms:.2f} ms per 64 MiB; {stream_cpu:.1f} GB/s per CPU second)")
    print(f"{'kernel':<24}{'ms':>8}{'cpu ms':>8}{'MB':>7}{'sets':>5}{'GB/s':>7}{'of copy':>8}"
          f"{'GB/s cpu':>9}{'of copy':>8}")
    for name, nbytes, sets, fn in runs:
        ms, cpu = median_ms(fn, a.reps)
        gbs = nbytes / (ms * 1e-3) / 1e9
        gbs_cpu = nbytes / (max(cpu, 1e-6) * 1e-3) / 1e9
        if a.rows > 1:  # compute-bound: GFLOP/s per CPU second instead
            gbs = gbs_cpu = 2 * a.rows * n * k / (max(cpu, 1e-6) * 1e-3) / 1e9
        print(f"{name:<24}{ms:8.3f}{cpu:8.3f}{nbytes / 1e6:7.1f}{sets:5d}{gbs:7.1f}{gbs / stream:8.0%}"
              f"{gbs_cpu:9.1f}{gbs_cpu / stream_cpu:8.0%}")


if __name__ == "__main__":
    main()
