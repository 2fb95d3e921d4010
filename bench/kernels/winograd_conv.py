"""Winograd F(4x4, 3x3) at resnet-18's 3x3 stride-1 layers (batch 1, 224x224 input): the
optimized aten::convolution.out (which takes Winograd with per-call weight transforms where
winograd_pays_off says so, else the im2col SGEMM), pteron::conv2d_winograd on weights
transformed beforehand (what the winograd_conv pass emits), and torch; with each one's
max|out - torch| / max|torch|.

    PYTHONPATH=build/python:python:tests/kernels python bench/kernels/winograd_conv.py \
        [--threads 1 2] [--iters 15]

Medians of --iters runs after 2 warm-up (min in brackets). Noisy on a shared machine: run
under nice -n -15 and quote the load average.
"""

import argparse
import os
import statistics
import sys
from pathlib import Path

import pteron_native
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from timing import timed_calls_ms  # noqa: E402

LAYERS = [("layer1", 64, 56, 64), ("layer2", 128, 28, 128), ("layer3", 256, 14, 256),
          ("layer4", 512, 7, 512)]
G = torch.tensor([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                  [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
                 dtype=torch.float64)


def winograd_weights(w):
    """U[36][Cin][Cout] = G g G^T per (Cout, Cin) pair, as compiler/passes/winograd_conv.cpp."""
    u = torch.einsum("ia,ocab,jb->ijco", G, w.double(), G)
    return u.reshape(36, w.shape[1], w.shape[0]).float().contiguous()


def timed(fn, iters):
    times = timed_calls_ms(fn, iters, warmup=2)
    return statistics.median(times), min(times)


def rel(out, ref):
    return float((out - ref).abs().max() / ref.abs().max())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1])
    ap.add_argument("--iters", type=int, default=15)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}")
    for threads in args.threads:
        pteron_native.set_num_threads(threads)
        torch.set_num_threads(threads)
        print(f"\n### {threads} thread(s)\n")
        print("| layer | convolution.out ms (min) | rel err | conv2d_winograd ms (min) | rel err |"
              " torch ms (min) |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, c, hw, k in LAYERS:
            g = torch.Generator().manual_seed(c)
            x, w, b = (torch.randn(1, c, hw, hw, generator=g), torch.randn(k, c, 3, 3, generator=g),
                       torch.randn(k, generator=g))
            ref = F.conv2d(x, w, b, 1, 1)
            out, out_w = torch.empty_like(ref), torch.empty_like(ref)
            conv = [x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, out]
            wino = [x, winograd_weights(w), b, None, [1, 1], False, out_w]
            t_conv = timed(lambda: run_kernel("aten::convolution.out", conv, "optimized"),
                           args.iters)
            t_wino = timed(lambda: run_kernel("pteron::conv2d_winograd.out", wino, "optimized"),
                           args.iters)
            with torch.no_grad():
                t_torch = timed(lambda: F.conv2d(x, w, b, 1, 1), args.iters)
            print(f"| {name} 3x3 {c}->{k} @{hw} | {t_conv[0]:.3f} ({t_conv[1]:.3f}) |"
                  f" {rel(out, ref):.1e} | {t_wino[0]:.3f} ({t_wino[1]:.3f}) |"
                  f" {rel(out_w, ref):.1e} | {t_torch[0]:.3f} ({t_torch[1]:.3f}) |")
    pteron_native.set_num_threads(0)


if __name__ == "__main__":
    main()
