"""make bench-dynamic: one transformer encoder (2 layers, d_model 128, 4 heads, FFN 512) at
sequence lengths 8, 32, 128, 512, as ONE bounded dynamic pteron program (torch.export.Dim
seq in [8, 512]) against one static pteron program per length, and against ExecuTorch 1.5.1's
dynamic program (the same export through its to_edge_transform_and_lower with
XnnpackPartitioner, run by its pybindings) when .venv-et exists; same --backends, 2 threads.

Every measurement is its own process (`pteron bench`, or this script's `et-run` step under
.venv-et/bin/python): --warmup runs, then --iters timed runs. --rounds rounds alternate the
systems' order at each length; a system's figure is the median over all its timed runs. Each
row records the ISA, the 1-minute load average and the CPU time per run next to wall time;
results measured at a load above the core count are not written to bench/results (a smoke run
with --results elsewhere is). Results: bench/results/dynamic.{json,md}.

The dynamic program runs every node on the kernel libraries (XNNPACK refuses dynamic nodes:
Debian's 2022 XNNPACK has no reshape API; shape-building rewrites such as constant folding skip
them; attention fuses in both), so the gap to the static program is what those cost.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
from priority import match_autogroup_nice  # noqa: E402
from timing import timed_calls_wall_cpu_ms  # noqa: E402

LENGTHS = [8, 32, 128, 512]
D_MODEL = 128
TOLERANCE = 1e-3  # max |diff| against PyTorch eager


def encoder():
    import torch

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(
                [torch.nn.TransformerEncoderLayer(D_MODEL, 4, 512, dropout=0.0, batch_first=True)
                 for _ in range(2)])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    torch.manual_seed(0)
    return Encoder().eval()


def log(msg):
    print(f"bench-dynamic: {msg}", file=sys.stderr, flush=True)


def run(cmd, **kw):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def export(model, seq, work, dynamic, decompose=True):
    import torch
    from torch.export import Dim

    shapes = {"x": {1: Dim("seq", min=LENGTHS[0], max=LENGTHS[-1])}} if dynamic else None
    ep = torch.export.export(model, (torch.randn(1, seq, D_MODEL),), dynamic_shapes=shapes)
    if decompose:
        ep = ep.run_decompositions()
    name = "encoder-dynamic" if dynamic else f"encoder-{seq}"
    path = work / (f"{name}.pt2" if decompose else f"{name}-aten.pt2")
    torch.export.save(ep, path)
    return path


# ---- ExecuTorch steps (run by .venv-et/bin/python) ----------------------------------------

def et_export(pt2: Path, pte: Path) -> None:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    edge = to_edge_transform_and_lower(torch.export.load(pt2), partitioner=[XnnpackPartitioner()])
    pte.write_bytes(edge.to_executorch().buffer)


def et_run(pte: Path, inputs: Path, output: Path, threads: int, warmup: int, iters: int) -> None:
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    torch.set_num_threads(threads)
    _unsafe_reset_threadpool(threads)
    method = Runtime.get().load_program(str(pte)).load_method("forward")
    x = [torch.from_numpy(np.load(inputs)["input_0"])]
    out = []  # the last call's outputs

    def call():
        out[:] = method.execute(x)

    times, cpu = timed_calls_wall_cpu_ms(call, iters, warmup)
    np.savez(output, output_0=out[0].numpy())
    print(json.dumps({"times_ms": times, "median_ms": statistics.median(times),
                      "median_cpu_ms": statistics.median(cpu), "isa": "executorch xnnpack",
                      "load_average_1m": os.getloadavg()[0], "peak_rss_bytes": None}))


# ---- Orchestration (the project's venv) ---------------------------------------------------

def bench_pteron(pteron, pte, inputs, args):
    out = run([pteron, "bench", pte, "--inputs", inputs, "--warmup", args.warmup, "--iters",
               args.iters, "--threads", args.threads, "--json"])
    return json.loads(out)


def bench_et(et_python, pte, inputs, output, args):
    out = run([et_python, __file__, "et-run", pte, inputs, output, args.threads, args.warmup,
               args.iters], env={**os.environ, "PYTHONPATH": ""})
    return json.loads(out.strip().splitlines()[-1])


def check_output(name, got, want, seq):
    err = float(np.abs(got - want).max())
    if err > TOLERANCE:
        raise SystemExit(f"seq {seq}: the {name} program differs from PyTorch by {err}")
    return err


def summarize(runs):
    """One system's figures at one length from its measurements of every round."""
    times = [t for r in runs for t in r["times_ms"]]
    return {"median_ms": statistics.median(times), "times_ms": times,
            "median_cpu_ms": statistics.median(r["median_cpu_ms"] for r in runs),
            "isa": runs[0].get("isa"), "max_load_average_1m": max(r["load_average_1m"] for r in runs),
            "planned_bytes": runs[0].get("planned_bytes")}


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "et-export":
        return et_export(Path(sys.argv[2]), Path(sys.argv[3]))
    if len(sys.argv) > 1 and sys.argv[1] == "et-run":
        a = sys.argv[2:]
        return et_run(Path(a[0]), Path(a[1]), Path(a[2]), int(a[3]), int(a[4]), int(a[5]))
    import torch

    p = argparse.ArgumentParser()
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=str(REPO / "bench" / "work" / "dynamic"))
    p.add_argument("--results", default=str(REPO / "bench" / "results"))
    p.add_argument("--backends", default="xnnpack,optimized,portable")
    p.add_argument("--et-python", default=str(REPO / ".venv-et" / "bin" / "python"),
                   help="ExecuTorch's venv python (its column is left out when it does not exist)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    priority = match_autogroup_nice()
    pteron = Path(args.build) / "tools" / "cli" / "pteron"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    model = encoder()
    with_et = Path(args.et_python).exists()
    if not with_et:
        log(f"no ExecuTorch venv at {args.et_python} (make venv-et): its column is left out")

    dyn_pte = work / "encoder-dynamic.pte"
    run([pteron, "compile", export(model, LENGTHS[1], work, True), "-o", dyn_pte, "--backends",
         args.backends])
    et_pte = work / "encoder-dynamic.et-xnnpack.pte"
    if with_et:
        log("exporting the dynamic encoder with ExecuTorch (XnnpackPartitioner)")
        run([args.et_python, __file__, "et-export", export(model, LENGTHS[1], work, True, False),
             et_pte], env={**os.environ, "PYTHONPATH": ""})
    rows = []
    for seq in LENGTHS:
        x = np.random.default_rng(seq).standard_normal((1, seq, D_MODEL)).astype(np.float32)
        inputs = work / f"inputs-{seq}.npz"
        np.savez(inputs, input_0=x)
        static_pte = work / f"encoder-{seq}.pte"
        run([pteron, "compile", export(model, seq, work, False), "-o", static_pte, "--backends",
             args.backends])
        with torch.no_grad():
            want = model(torch.from_numpy(x)).numpy()
        systems = {"dynamic": lambda: bench_pteron(pteron, dyn_pte, inputs, args),
                   "static": lambda: bench_pteron(pteron, static_pte, inputs, args)}
        if with_et:
            et_out = work / f"out-executorch-{seq}.npz"
            systems["executorch"] = lambda: bench_et(args.et_python, et_pte, inputs, et_out, args)
        names = list(systems)
        runs = {n: [] for n in names}
        for r in range(args.rounds):
            order = names[r % len(names):] + names[:r % len(names)]  # rotate who goes first
            for n in order:
                runs[n].append(systems[n]())
        row = {"seq": seq}
        for n in names:
            for key, value in summarize(runs[n]).items():
                row[f"{n}_{key}"] = value
        for name, pte in (("dynamic", dyn_pte), ("static", static_pte)):
            out = work / f"out-{name}-{seq}.npz"
            run([pteron, "run", pte, "--inputs", inputs, "--outputs", out])
            row[f"{name}_max_abs_err"] = check_output(name, np.load(out)["output_0"], want, seq)
        if with_et:
            row["executorch_max_abs_err"] = check_output(
                "ExecuTorch", np.load(et_out)["output_0"], want, seq)
            row["executorch_over_dynamic"] = row["executorch_median_ms"] / row["dynamic_median_ms"]
        row["ratio"] = row["dynamic_median_ms"] / row["static_median_ms"]
        rows.append(row)
        et_text = (f", ExecuTorch {row['executorch_median_ms']:.3f} ms" if with_et else "")
        log(f"seq {seq}: dynamic {row['dynamic_median_ms']:.3f} ms, static "
            f"{row['static_median_ms']:.3f} ms ({row['ratio']:.2f}x){et_text}")

    cores = os.cpu_count() or 1
    max_load = max(row[f"{n}_max_load_average_1m"] for row in rows for n in ("dynamic", "static"))
    results = {"model": "2 x nn.TransformerEncoderLayer(128, 4, 512), batch 1",
               "backends": args.backends, "threads": args.threads, "warmup": args.warmup,
               "iters": args.iters, "rounds": args.rounds, "priority": priority,
               "machine": platform.processor() or platform.machine(), "cores": cores,
               "max_load_average_1m": max_load, "executorch": "1.5.1" if with_et else None,
               "goal": "dynamic within 1.1x of static at each length", "rows": rows}
    out = Path(args.results)
    if out == REPO / "bench" / "results" and max_load > cores:
        raise SystemExit(f"load average reached {max_load:.1f} on {cores} cores: not publishing "
                         "(rerun on a quieter machine, or pass --results elsewhere for a smoke run)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "dynamic.json").write_text(json.dumps(results, indent=2) + "\n")
    write_markdown(results, out / "dynamic.md", with_et)


def write_markdown(results, path, with_et):
    rows = results["rows"]
    head = "| seq | dynamic (ms) | static (ms) | dynamic / static |"
    rule = "|---|---|---|---|"
    if with_et:
        head += " ExecuTorch dynamic (ms) | ExecuTorch / pteron dynamic |"
        rule += "---|---|"
    head += " CPU ms per run, dynamic / static | planned dynamic / static (KiB) | ISA | max load |"
    rule += "---|---|---|---|"
    lines = ["# Dynamic vs static programs (make bench-dynamic)", "",
             f"{results['model']}; `--backends {results['backends']}`, {results['threads']} threads; "
             f"{results['rounds']} alternating rounds of {results['iters']} timed runs after "
             f"{results['warmup']} warm-up, each system in its own process; medians; "
             f"{results['priority']}; {results['cores']} cores.", "", head, rule]
    for r in rows:
        line = (f"| {r['seq']} | {r['dynamic_median_ms']:.3f} | {r['static_median_ms']:.3f} | "
                f"{r['ratio']:.2f}x |")
        if with_et:
            line += f" {r['executorch_median_ms']:.3f} | {r['executorch_over_dynamic']:.2f}x |"
        line += (f" {r['dynamic_median_cpu_ms']:.2f} / {r['static_median_cpu_ms']:.2f} | "
                 f"{r['dynamic_planned_bytes'] / 1024:.0f} / {r['static_planned_bytes'] / 1024:.0f} | "
                 f"{r['dynamic_isa']} | {max(r['dynamic_max_load_average_1m'], r['static_max_load_average_1m']):.1f} |")
        lines.append(line)
    lines += ["", "The dynamic program's nodes run on the kernel libraries (XNNPACK refuses dynamic"
              " nodes; shape-building rewrites skip them), the static ones get XNNPACK regions where"
              " they pay; attention fuses into pteron::sdpa in both; the dynamic plan is sized for"
              " seq 512.", ""]
    path.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
