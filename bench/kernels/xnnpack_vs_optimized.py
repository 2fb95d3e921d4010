"""The XNNPACK cost rule's measurements: one op as an XNNPACK region (delegate call, boundary and
Debian's Feb 2022 XNNPACK) against the same op on the optimized kernel library, per shape.

Each case is a tiny model compiled twice through the C++ compiler: `xnnpack,portable` (the op
in one XNNPACK region) and `optimized,portable` (the op on the optimized kernels), run on the
host runtime with the same threads. backends/xnnpack/aot/xnnpack_partitioner.h's thresholds
(kMinRowsForOptimizedLinear) come from this table (bench/results/xnnpack_vs_optimized.md).

Run from the repository root after building (not part of `make test`):
    nice -n -15 env PYTHONPATH=build/python:python .venv/bin/python \
        bench/kernels/xnnpack_vs_optimized.py [--threads 2] [--reps 30]

Figures: median and minimum wall ms of --reps calls after 3 warm-up calls, per program (the
minimum is the steadier figure on a shared machine).
"""

import argparse
import os
import statistics
import time

import pteron
import pteron_native
import torch

# (name, rows M, in K, out N): OPT-125M's projections at sequence 128, fewer rows (decode-like
# and short sequences), and the conv nets' classifier heads.
LINEARS = [
    ("opt q/k/v/out proj", 128, 768, 768),
    ("opt fc1", 128, 768, 3072),
    ("opt fc2", 128, 3072, 768),
    ("proj 64 rows", 64, 768, 768),
    ("proj 32 rows", 32, 768, 768),
    ("proj 16 rows", 16, 768, 768),
    ("proj 8 rows", 8, 768, 768),
    ("proj 4 rows", 4, 768, 768),
    ("proj 2 rows", 2, 768, 768),
    ("proj 1 row", 1, 768, 768),
    ("mobilenet-v2 fc", 1, 1280, 1000),
    ("resnet-18 fc", 1, 512, 1000),
]


class Linear(torch.nn.Module):
    def __init__(self, k, n):
        super().__init__()
        self.fc = torch.nn.Linear(k, n)

    def forward(self, x):
        return self.fc(x)


class LinearSoftmax(Linear):
    def forward(self, x):
        return torch.softmax(self.fc(x), -1)


def median_ms(method, x, reps):
    for _ in range(3):
        method(x)
    walls = []
    for _ in range(reps):
        t = time.perf_counter()
        method(x)
        walls.append(time.perf_counter() - t)
    return statistics.median(walls) * 1e3, min(walls) * 1e3


def compile_run(model, x, backends, reps):
    ep = pteron.export(model.eval(), (x,))
    parts = [pteron.XnnpackPartitioner()] if "xnnpack" in backends else []
    kernels = [b for b in backends if b != "xnnpack"]
    program = pteron.to_edge_transform_and_lower(ep, partitioner=parts, kernels=kernels)
    regions = len(program.report["delegated_regions"])
    method = program.load().forward
    return (*median_ms(method, x, reps), regions)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=60)
    args = ap.parse_args()
    pteron_native.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(f"threads {args.threads}, reps {args.reps}, load average "
          f"{os.getloadavg()[0]:.2f} at start")
    print("| case | shape | xnnpack region median / min (ms) | optimized kernel median / min (ms) "
          "| xnnpack / optimized median / min |")
    print("|---|---|---:|---:|---:|")
    cases = [(name, Linear(k, n), torch.randn(m, k), f"linear {m}x{k}x{n}")
             for name, m, k, n in LINEARS]
    cases.append(("opt attention probs", LinearSoftmax(64, 128), torch.randn(12 * 128, 64),
                  "linear 1536x64x128 + softmax"))
    for name, model, x, shape in cases:
        with torch.no_grad():
            xnn, xnn_min, regions = compile_run(model, x, ["xnnpack", "portable"], args.reps)
            opt, opt_min, _ = compile_run(model, x, ["optimized", "portable"], args.reps)
        assert regions == 1, f"{name}: the op did not form one XNNPACK region"
        print(f"| {name} | {shape} | {xnn:.3f} / {xnn_min:.3f} | {opt:.3f} / {opt_min:.3f} | "
              f"{xnn / opt:.2f} / {xnn_min / opt_min:.2f} |", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
