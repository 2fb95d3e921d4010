"""`make bench-ops`: the optimized library's spatial and selection fast paths against PyTorch
eager at representative sizes, 1 and 2 threads, in one run.

Cases: upsample_nearest2d, upsample_bilinear2d and upsample_bicubic2d 2x of [1, 64, 128, 128];
exp, log, sin, sqrt, leaky_relu, elu, erf and floor of the same, where and masked_fill (a mask over
H and W) of the same; max.dim over a detector's 20 classes and argmax over a segmentation map's 21
channels; permutes: pixel shuffle's (a 2-wide innermost output dim) and a transformer's head split
(whole rows); amax and sum over its last dim, mean over
H and W; antialiased bilinear
0.5x of the same (F.interpolate(antialias=True)), reflection_pad2d and
replication_pad2d (3 on each side) of the same, topk 100 of 100,000, a stable sort of
100,000 floats, scatters into 2^20 elements (scatter_add of 2^20 values at random positions of
a 1-D tensor, repeats included; scatter.src of a random permutation; scatter_reduce amax along
the rows of [1024, 1024]), gather along the rows of [1024, 1024], and grid_sampler_2d (bilinear
and nearest, zeros padding) of [1, 64, 128, 128] on a random 128 x 128 grid.

Each system runs in its own process (`worker` below): pteron's kernel through
pteron_native.time_kernel (library "optimized", out tensors allocated once, as a planned program
has them; arguments converted once and each call timed in C++, as a program calls its kernels
with no per-call conversion) and torch's functional op called from Python (which allocates its
result and goes through the dispatcher, as eager does). Rounds alternate the order of the
systems; every figure is the median over rounds of each round's median of --reps calls (after
warm-up calls). The process CPU time per call (the timed calls' total over their number; the
kernel accounts other threads' time only at scheduler ticks, so at 2 threads it is coarse), the
load average, the CPU and its ISA are recorded with them. Results: bench/results/ops.{json,md};
a run whose load average went above the core count writes them to bench/work/ops/ instead (not to be published).

    PYTHONPATH=build/python:python .venv/bin/python bench/ops.py [--rounds 5] [--reps 30]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from timing import results_folder, timed_calls_ms  # noqa: E402

SYSTEMS = ["pteron", "eager"]
WARMUP = 3  # untimed calls before the timed ones


def cases(torch):
    """name -> (pteron kernel, pteron args, torch callable)."""
    A = torch.ops.aten
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 64, 128, 128, generator=g)
    v = torch.randn(100_000, generator=g)
    up = torch.empty(1, 64, 256, 256)
    down = torch.empty(1, 64, 64, 64)
    pad = torch.empty(1, 64, 134, 134)
    topv, topi = torch.empty(100), torch.empty(100, dtype=torch.int64)
    sortv, sorti = torch.empty(100_000), torch.empty(100_000, dtype=torch.int64)
    m = 1 << 20
    flat, flat_src = torch.randn(m, generator=g), torch.randn(m, generator=g)
    flat_idx = torch.randint(0, m, (m,), generator=g)
    perm = torch.randperm(m, generator=g)
    rows, rows_src = torch.randn(1024, 1024, generator=g), torch.randn(1024, 1024, generator=g)
    rows_idx = torch.randint(0, 1024, (1024, 1024), generator=g)
    flat_out, rows_out = torch.empty(m), torch.empty(1024, 1024)
    grid = torch.rand(1, 128, 128, 2, generator=g) * 2 - 1
    sampled = torch.empty(1, 64, 128, 128)
    positive = x.abs() + 0.1
    positive_mask, scaled = x > 0, x * 0.1
    classes, seg = torch.randn(2, 4000, 20, generator=g), torch.randn(1, 21, 256, 256, generator=g)
    best, best_at = torch.empty(2, 4000), torch.empty(2, 4000, dtype=torch.int64)
    seg_at = torch.empty(1, 256, 256, dtype=torch.int64)
    shuffled, shuffle_out = torch.randn(1, 64, 2, 2, 48, 48, generator=g), torch.empty(1, 64, 48, 2, 48, 2)
    heads, heads_out = torch.randn(8, 197, 12, 64, generator=g), torch.empty(8, 12, 197, 64)
    plane_mask = torch.rand(1, 1, 128, 128, generator=g) > 0.5
    same = torch.empty(1, 64, 128, 128)
    last_dim, per_channel = torch.empty(1, 64, 128), torch.empty(1, 64)
    F = torch.nn.functional
    return {
        "upsample_bicubic2d 2x [1,64,128,128]": (
            "aten::upsample_bicubic2d.out", [x, [256, 256], False, 2.0, 2.0, up],
            lambda: F.interpolate(x, scale_factor=2.0, mode="bicubic", align_corners=False)),
        "exp [1,64,128,128]": ("aten::exp.out", [x, same], lambda: torch.exp(x)),
        "log [1,64,128,128]": ("aten::log.out", [positive, same], lambda: torch.log(positive)),
        "sin [1,64,128,128]": ("aten::sin.out", [x, same], lambda: torch.sin(x)),
        "sqrt [1,64,128,128]": ("aten::sqrt.out", [positive, same], lambda: torch.sqrt(positive)),
        "leaky_relu 0.1 [1,64,128,128]": (
            "aten::leaky_relu.out", [x, 0.1, same], lambda: F.leaky_relu(x, 0.1)),
        "elu [1,64,128,128]": ("aten::elu.out", [x, 1.0, 1.0, 1.0, same], lambda: F.elu(x)),
        "erf [1,64,128,128]": ("aten::erf.out", [x, same], lambda: torch.erf(x)),
        "floor [1,64,128,128]": ("aten::floor.out", [x, same], lambda: torch.floor(x)),
        "where(x > 0, x, 0.1 x) [1,64,128,128]": (
            "aten::where.self_out", [positive_mask, x, scaled, same],
            lambda: torch.where(positive_mask, x, scaled)),
        "masked_fill -inf [1,64,128,128], mask [1,1,128,128]": (
            "aten::masked_fill.Scalar_out", [x, plane_mask, float("-inf"), same],
            lambda: x.masked_fill(plane_mask, float("-inf"))),
        "amax over the last dim [1,64,128,128]": (
            "aten::amax.out", [x, [-1], False, last_dim], lambda: torch.amax(x, -1)),
        "sum over the last dim [1,64,128,128]": (
            "aten::sum.IntList_out", [x, [-1], False, None, last_dim], lambda: torch.sum(x, -1)),
        "mean over H, W [1,64,128,128]": (
            "aten::mean.out", [x, [2, 3], False, None, per_channel], lambda: torch.mean(x, (2, 3))),
        "max.dim over 20 classes [2,4000,20]": (
            "aten::max.dim_max", [classes, -1, False, best, best_at], lambda: torch.max(classes, -1)),
        "argmax over channels [1,21,256,256]": (
            "aten::argmax.out", [seg, 1, False, seg_at], lambda: torch.argmax(seg, 1)),
        "pixel shuffle 2x as a permute [1,64,2,2,48,48]": (
            "aten::permute_copy.out", [shuffled, [0, 1, 4, 2, 5, 3], shuffle_out],
            lambda: shuffled.permute(0, 1, 4, 2, 5, 3).contiguous()),
        "head split permute [8,197,12,64] -> [8,12,197,64]": (
            "aten::permute_copy.out", [heads, [0, 2, 1, 3], heads_out],
            lambda: heads.permute(0, 2, 1, 3).contiguous()),
        "upsample_nearest2d 2x [1,64,128,128]": (
            "aten::upsample_nearest2d.vec_out", [x, None, [2.0, 2.0], up],
            lambda: F.interpolate(x, scale_factor=2.0, mode="nearest")),
        "upsample_bilinear2d 2x [1,64,128,128]": (
            "aten::upsample_bilinear2d.vec_out", [x, None, False, [2.0, 2.0], up],
            lambda: F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)),
        "antialiased bilinear 0.5x [1,64,128,128]": (
            "aten::_upsample_bilinear2d_aa.out", [x, [64, 64], False, None, None, down],
            lambda: F.interpolate(x, scale_factor=0.5, mode="bilinear", antialias=True)),
        "reflection_pad2d 3 [1,64,128,128]": (
            "aten::reflection_pad2d.out", [x, [3, 3, 3, 3], pad],
            lambda: A.reflection_pad2d(x, [3, 3, 3, 3])),
        "replication_pad2d 3 [1,64,128,128]": (
            "aten::replication_pad2d.out", [x, [3, 3, 3, 3], pad],
            lambda: A.replication_pad2d(x, [3, 3, 3, 3])),
        "topk 100 of 100000": (
            "aten::topk.values", [v, 100, 0, True, True, topv, topi],
            lambda: torch.topk(v, 100)),
        "sort stable 100000": (
            "aten::sort.values_stable", [v, True, 0, False, sortv, sorti],
            lambda: torch.sort(v, stable=True)),
        "scatter_add 2^20 into 2^20 (1-D, random)": (
            "aten::scatter_add.out", [flat, 0, flat_idx, flat_src, flat_out],
            lambda: torch.scatter_add(flat, 0, flat_idx, flat_src)),
        "scatter 2^20 into 2^20 (1-D, permutation)": (
            "aten::scatter.src_out", [flat, 0, perm, flat_src, flat_out],
            lambda: torch.scatter(flat, 0, perm, flat_src)),
        "scatter_reduce amax [1024,1024] dim 1": (
            "aten::scatter_reduce.two_out", [rows, 1, rows_idx, rows_src, "amax", True, rows_out],
            lambda: torch.scatter_reduce(rows, 1, rows_idx, rows_src, "amax")),
        "gather [1024,1024] dim 1": (
            "aten::gather.out", [rows, 1, rows_idx, False, rows_out],
            lambda: torch.gather(rows, 1, rows_idx)),
        "grid_sampler_2d bilinear [1,64,128,128]": (
            "aten::grid_sampler_2d.out", [x, grid, 0, 0, False, sampled],
            lambda: F.grid_sample(x, grid, mode="bilinear", align_corners=False)),
        "grid_sampler_2d nearest [1,64,128,128]": (
            "aten::grid_sampler_2d.out", [x, grid, 1, 0, False, sampled],
            lambda: F.grid_sample(x, grid, mode="nearest", align_corners=False)),
    }


def worker(system, threads, reps):
    import torch

    torch.set_num_threads(threads)
    if system == "pteron":
        import pteron_native

        pteron_native.set_num_threads(threads)
    out = {}
    for name, (kernel, args, eager) in cases(torch).items():
        if system == "pteron":
            pteron_native.time_kernel(kernel, args, "optimized", WARMUP, 0)
            cpu_start = time.process_time()
            walls = [s * 1e3 for s in pteron_native.time_kernel(kernel, args, "optimized", reps, 0)]
        else:
            timed_calls_ms(eager, WARMUP, 0)
            cpu_start = time.process_time()
            walls = timed_calls_ms(eager, reps, 0)
        cpu = (time.process_time() - cpu_start) * 1e3 / reps
        out[name] = {"wall_ms": statistics.median(walls), "cpu_ms": cpu}
    print(json.dumps(out))


def check_outputs():
    """The pteron kernels agree with torch on the benchmarked inputs before anything is timed."""
    import pteron_native
    import torch

    for name, (kernel, args, eager) in cases(torch).items():
        pteron_native.run_kernel(kernel, args, "optimized")
        ref = eager()
        if kernel in ("aten::topk.values", "aten::sort.values_stable", "aten::max.dim_max"):
            ok = torch.equal(args[-2], ref[0]) and torch.equal(args[-1], ref[1])
        else:
            ok = torch.allclose(args[-1], ref, atol=1e-5, rtol=1e-5)
        if not ok:
            raise SystemExit(f"bench-ops: {name}: pteron's result differs from torch's")


def isa():
    flags = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                flags = line
                break
    except OSError:
        pass
    words = set(flags.split())
    best = "avx512f" if "avx512f" in words else "avx2+fma" if {"avx2", "fma"} <= words else (
        "neon" if platform.machine() in ("aarch64", "arm64") else "baseline")
    return {"cpu_best": best, "PTERON_ISA": os.environ.get("PTERON_ISA", ""),
            "pteron_kernels": "spatial and selection ops: auto-vectorised baseline x86-64 (SSE2) loops; "
                              "element-wise math, reductions, where, masked_fill, max.dim and argmax: "
                              "the ISA table (kernels/optimized/simd)"}


def cpu_model():
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "ops"))
    ap.add_argument("worker", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        system, threads = args.worker
        worker(system, int(threads), args.reps)
        return
    check_outputs()
    import torch

    load_start = os.getloadavg()[0]
    runs = {}  # (threads, system) -> list of per-round results
    for threads in args.threads:
        for r in range(args.rounds):
            order = SYSTEMS if r % 2 == 0 else SYSTEMS[::-1]
            for system in order:
                proc = subprocess.run(
                    [sys.executable, __file__, "--reps", str(args.reps), system, str(threads)],
                    capture_output=True, text=True, check=False, timeout=900)
                if proc.returncode != 0:
                    raise SystemExit(f"bench-ops: {system} worker failed: {proc.stderr.strip()[-500:]}")
                runs.setdefault((threads, system), []).append(json.loads(proc.stdout.splitlines()[-1]))
            print(f"threads {threads} round {r + 1}/{args.rounds} done", file=sys.stderr)
    load_end = os.getloadavg()[0]
    results = []
    names = list(runs[(args.threads[0], SYSTEMS[0])][0].keys())
    for threads in args.threads:
        for name in names:
            row = {"case": name, "threads": threads}
            for system in SYSTEMS:
                rounds = runs[(threads, system)]
                row[f"{system}_ms"] = round(statistics.median(x[name]["wall_ms"] for x in rounds), 4)
                row[f"{system}_cpu_ms"] = round(statistics.median(x[name]["cpu_ms"] for x in rounds), 4)
                row[f"{system}_rounds_ms"] = [round(x[name]["wall_ms"], 4) for x in rounds]
            row["speedup_vs_eager"] = round(row["eager_ms"] / row["pteron_ms"], 2)
            results.append(row)
    meta = {
        "cpu": cpu_model(), "isa": isa(), "torch": torch.__version__, "nproc": os.cpu_count(),
        "rounds": args.rounds, "reps": args.reps, "load_average_start": round(load_start, 2),
        "load_average_end": round(load_end, 2),
    }
    out = Path(args.out)
    out = results_folder(out.parent, ROOT / "bench" / "results", max(load_start, load_end),
                         ROOT / "bench" / "work" / "ops", lambda m: print(f"bench-ops: {m}", file=sys.stderr)) / out.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": results}, indent=2) + "\n")
    lines = [
        "# Spatial, selection, element-wise math and reduction ops: pteron optimized vs PyTorch eager "
        "(`make bench-ops`)",
        "",
        f"CPU: {meta['cpu']} ({meta['nproc']} CPUs; best ISA {meta['isa']['cpu_best']}; pteron's "
        f"loops here: {meta['isa']['pteron_kernels']}). torch {meta['torch']}. "
        f"Load average {meta['load_average_start']} at the start, {meta['load_average_end']} at "
        f"the end. Median over {args.rounds} alternating rounds of each round's median of "
        f"{args.reps} calls, each system in its own process.",
        "",
        "| case | threads | eager ms | pteron ms | pteron / eager speed | eager CPU ms | pteron CPU ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {r['case']} | {r['threads']} | {r['eager_ms']:.3f} | {r['pteron_ms']:.3f} | "
                     f"{r['speedup_vs_eager']:.2f}x | {r['eager_cpu_ms']:.3f} | {r['pteron_cpu_ms']:.3f} |")
    lines.append("")
    out.with_suffix(".md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
