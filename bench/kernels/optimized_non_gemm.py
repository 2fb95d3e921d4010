"""OPT-125M's non-GEMM ops and its attention: pteron's optimized kernels against the portable
ones (and torch for scale), at the shapes one decoder layer runs (sequence 128, d 768, 12 heads).
"attention" is the portable chain the graph has without fusion (bmm, mul by the scale, add the
mask, softmax, bmm) against the fused pteron::sdpa.

Run from the repository root after building (not part of `make test`):
    PYTHONPATH=build/python:python .venv/bin/python bench/kernels/optimized_non_gemm.py \
        [--threads 1] [--reps 20]

Each figure is the median of --reps timed calls after a warm-up call (wall time; the process
CPU time per call next to it, since wall time on a busy machine includes waiting for a core).
"""

import argparse
import sys
from pathlib import Path

import pteron_native
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from timing import median_ms  # noqa: E402


def kernel(name, args, library):
    return lambda: pteron_native.run_kernel(name, args, library)


def cases():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 128, 768, generator=g)
    w, b = torch.randn(768, generator=g), torch.randn(768, generator=g)
    h = torch.randn(1, 128, 3072, generator=g)
    s = torch.randn(1, 12, 128, 128, generator=g)
    p = torch.randn(1, 128, 12, 64, generator=g)
    ln = [x, [768], w, b, 1e-5, torch.empty_like(x), torch.empty(1, 128, 1), torch.empty(1, 128, 1)]
    yield "native_layer_norm [1,128,768]", "aten::native_layer_norm.out", ln, \
        lambda: torch.native_layer_norm(x, [768], w, b, 1e-5)
    yield "gelu [1,128,3072]", "aten::gelu.out", [h, "none", torch.empty_like(h)], \
        lambda: torch.nn.functional.gelu(h)
    yield "relu [1,128,3072]", "aten::relu.out", [h, torch.empty_like(h)], lambda: torch.relu(h)
    yield "add [1,128,768]", "aten::add.out", [x, x, 1, torch.empty_like(x)], lambda: x + x
    yield "softmax [1,12,128,128]", "aten::_softmax.out", [s, -1, False, torch.empty_like(s)], \
        lambda: torch.softmax(s, -1)
    yield "permute [1,128,12,64]->[0,2,1,3]", "aten::permute_copy.out", \
        [p, [0, 2, 1, 3], torch.empty(1, 12, 128, 64)], lambda: p.permute(0, 2, 1, 3).contiguous()


def attention(reps):
    g = torch.Generator().manual_seed(1)
    q, kt, v = (torch.randn(12, 128, 64, generator=g), torch.randn(12, 64, 128, generator=g),
                torch.randn(12, 128, 64, generator=g))
    mask = torch.zeros(1, 1, 128, 128).masked_fill(torch.ones(128, 128, dtype=torch.bool).triu(1),
                                                   float("-inf"))
    scores, scaled, masked = (torch.empty(12, 128, 128) for _ in range(3))
    probs, out = torch.empty(12, 128, 128), torch.empty(12, 128, 64)

    def chain():
        run = pteron_native.run_kernel
        run("aten::bmm.out", [q, kt, scores], "portable")
        run("aten::mul.Scalar_out", [scores, 0.125, scaled], "portable")
        run("aten::add.out", [scaled.view(1, 12, 128, 128), mask, 1, masked.view(1, 12, 128, 128)],
            "portable")
        run("aten::_softmax.out", [masked, -1, False, probs], "portable")
        run("aten::bmm.out", [probs, v, out], "portable")

    fused = kernel("pteron::sdpa.out", [q, kt, v, mask, 0.125, 12, torch.empty(12, 128, 64)],
                   "optimized")

    def ref():
        return torch.softmax(torch.bmm(q, kt) * 0.125 + mask.view(1, 128, 128), -1) @ v

    return median_ms(chain, reps), median_ms(fused, reps), median_ms(ref, reps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    pteron_native.set_num_threads(args.threads)
    print(f"threads {args.threads}; ms per call, median of {args.reps} (wall / cpu)")
    print(f"{'op':36} {'portable':>16} {'optimized':>16} {'torch':>16} {'speed-up':>8}")
    fmt = lambda t: f"{t[0]:7.3f} /{t[1]:7.3f}"  # noqa: E731
    for name, op, kargs, ref in cases():
        port = median_ms(kernel(op, kargs, "portable"), args.reps)
        opt = median_ms(kernel(op, kargs, "optimized"), args.reps)
        tor = median_ms(ref, args.reps)
        print(f"{name:36} {fmt(port):>16} {fmt(opt):>16} {fmt(tor):>16} {port[0] / opt[0]:7.1f}x")
    port, opt, tor = attention(args.reps)
    print(f"{'attention 12x128x128, d 64 (sdpa)':36} {fmt(port):>16} {fmt(opt):>16} {fmt(tor):>16} "
          f"{port[0] / opt[0]:7.1f}x")


if __name__ == "__main__":
    main()
