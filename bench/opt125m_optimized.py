"""OPT-125M (fp32, sequence 128, last-token logits) end to end: pteron's runtime with the
optimized kernels preferred, with the portable kernels only, and PyTorch eager, all with the
same number of threads (default 2).

    PYTHONPATH=build/python:python .venv/bin/python bench/opt125m_optimized.py \
        --pte /tmp/zoo/opt-125m.pte [--threads 2] [--reps 10]

--pte is a program compiled from the zoo's opt-125m (`python -m pteron.zoo`); this script does
not export it (slow, and memory hungry). The eager model is the zoo's seeded one, so outputs
are compared too (the largest difference relative to the largest logit). Figures are medians
of --reps runs (>= 10; the portable run takes fewer, it is only there for scale) after one
warm-up, in wall time, with process CPU time next to it. Not a test.
"""

import argparse
import statistics
import time

import pteron
import pteron_native
import torch
from pteron import zoo


def median_ms(fn, reps):
    out = fn()
    walls, cpus = [], []
    for _ in range(reps):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pte", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--portable-reps", type=int, default=3)
    parser.add_argument("--fused-pte", help="the same model compiled with --backends "
                        "optimized,portable (attention fused into pteron::sdpa)")
    args = parser.parse_args()
    reps = max(10, args.reps)
    torch.set_num_threads(args.threads)
    pteron_native.set_num_threads(args.threads)

    model, (ids, mask) = zoo.get("opt-125m")
    with torch.no_grad():
        eager_ms, eager_cpu, expected = median_ms(lambda: model(ids, mask), reps)
    rows = [("torch eager", eager_ms, eager_cpu, 0.0)]
    scale = expected.abs().max().item()

    runs = [("pteron optimized", args.pte, ["optimized", "portable"], reps),
            ("pteron portable", args.pte, ["portable"], args.portable_reps)]
    if args.fused_pte:
        runs.insert(1, ("pteron opt + sdpa", args.fused_pte, ["optimized", "portable"], reps))
    for label, pte, libraries, n in runs:
        pteron_native.set_kernel_libraries(libraries)
        method = pteron.load(pte).load_method("forward")
        # Fresh inputs every run: the program may plan its inputs into the arena it reuses.
        ms, cpu, out = median_ms(lambda: method(ids.clone(), mask.clone())[0], n)
        err = (out - expected).abs().max().item() / scale
        rows.append((label, ms, cpu, err))
    pteron_native.set_kernel_libraries([])

    print(f"OPT-125M, {args.threads} threads, median of {reps} (portable {args.portable_reps})")
    for label, ms, cpu, err in rows:
        print(f"  {label:18s} {ms:9.1f} ms  (cpu {cpu:9.1f} ms)  max |diff| / max |logit| "
              f"{err:.2e}  eager/this {eager_ms / ms:5.2f}x")


if __name__ == "__main__":
    main()
