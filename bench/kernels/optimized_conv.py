"""Per-layer times of the optimized convolution (aten::convolution.out through the optimized
library) against the portable kernel and torch, at resnet-18's and mobilenet-v2's distinct
convolution shapes (batch 1, 224x224 input).

    PYTHONPATH=build/python:python:tests/kernels python bench/kernels/optimized_conv.py \
        [--threads 1 2] [--iters 10] [--portable]

Medians of --iters runs after 2 warm-up; GFLOP/s counts 2 x multiply-adds. Noisy on a shared
machine: run under nice -n -15 and quote the load average. --cpu-time reports the minimum
process CPU time instead (1 thread only: with threads it adds the workers' time), which other
processes disturb less than the wall clock.
"""

import argparse
import os
import statistics
import time

import pteron_native
import torch
import torch.nn.functional as F
from kernel_harness import run_kernel

# (name, cin, hw, cout, k, stride, pad, groups)
RESNET18 = [
    ("conv1 7x7/2", 3, 224, 64, 7, 2, 3, 1),
    ("layer1 3x3", 64, 56, 64, 3, 1, 1, 1),
    ("layer2.0 3x3/2", 64, 56, 128, 3, 2, 1, 1),
    ("layer2 3x3", 128, 28, 128, 3, 1, 1, 1),
    ("layer2 down 1x1/2", 64, 56, 128, 1, 2, 0, 1),
    ("layer3.0 3x3/2", 128, 28, 256, 3, 2, 1, 1),
    ("layer3 3x3", 256, 14, 256, 3, 1, 1, 1),
    ("layer4.0 3x3/2", 256, 14, 512, 3, 2, 1, 1),
    ("layer4 3x3", 512, 7, 512, 3, 1, 1, 1),
]
MOBILENET_V2 = [
    ("stem 3x3/2", 3, 224, 32, 3, 2, 1, 1),
    ("expand 1x1 24->144 @56", 24, 56, 144, 1, 1, 0, 1),
    ("project 1x1 144->24 @56", 144, 56, 24, 1, 1, 0, 1),
    ("expand 1x1 64->384 @14", 64, 14, 384, 1, 1, 0, 1),
    ("head 1x1 320->1280 @7", 320, 7, 1280, 1, 1, 0, 1),
]


CPU_TIME = False


def median_ms(fn, iters):
    clock = time.process_time if CPU_TIME else time.perf_counter
    fn()
    fn()
    times = []
    for _ in range(iters):
        t = clock()
        fn()
        times.append((clock() - t) * 1e3)
    return min(times) if CPU_TIME else statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--portable", action="store_true", help="also time the portable kernel")
    ap.add_argument("--cpu-time", action="store_true",
                    help="min process CPU time instead of median wall time (1 thread)")
    args = ap.parse_args()
    global CPU_TIME
    CPU_TIME = args.cpu_time
    if CPU_TIME:
        args.threads = [1]
    print(f"load average {os.getloadavg()[0]:.2f}")
    for threads in args.threads:
        pteron_native.set_num_threads(threads)
        torch.set_num_threads(threads)
        print(f"\n### {threads} thread(s)\n")
        cols = "| layer | GFLOP | optimized ms | GFLOP/s |" + (" portable ms |" if args.portable else "")
        print(cols + " torch ms |")
        print("|---|---:|---:|---:|" + ("---:|" if args.portable else "") + "---:|")
        for name, cin, hw, cout, k, stride, pad, groups in RESNET18 + MOBILENET_V2:
            x = torch.randn(1, cin, hw, hw)
            w = torch.randn(cout, cin // groups, k, k)
            b = torch.randn(cout)
            ref = F.conv2d(x, w, b, stride, pad, 1, groups)
            out = torch.empty_like(ref)
            kargs = [x, w, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], groups, out]
            flop = 2 * ref.numel() * (cin // groups) * k * k / 1e9
            opt = median_ms(lambda: run_kernel("aten::convolution.out", kargs, "optimized"),
                            args.iters)
            row = f"| {name} | {flop:.3f} | {opt:.3f} | {flop / opt * 1e3:.0f} |"
            if args.portable:
                port = median_ms(lambda: run_kernel("aten::convolution.out", kargs, "portable"),
                                 max(3, args.iters // 3))
                row += f" {port:.3f} |"
            with torch.no_grad():
                tm = median_ms(lambda: F.conv2d(x, w, b, stride, pad, 1, groups), args.iters)
            print(row + f" {tm:.3f} |")
    pteron_native.set_num_threads(0)


if __name__ == "__main__":
    main()
