"""INT8 on the CPU: pteron's `--quantize xnnpack` against ExecuTorch's XNNPACKQuantizer, same
calibration data, same inputs, 2 threads, each system in its own process, alternating rounds.

    .venv-et/bin/python bench/cpu_int8.py [--models mobilenet-v2 resnet-18 ds-cnn efficientnet-b0 mobilenet-v3-large]
                                          [--rounds 3]

Per model (zoo, seeded random weights): 16 seeded normal calibration samples, shared by both.
  - ExecuTorch 1.5.1 (this venv): the zoo model, torch.export'ed, through torchao's prepare_pt2e with
    XNNPACKQuantizer (symmetric, per-channel weights: its documented static int8 setting), the
    calibration samples, convert_pt2e, torch.export, to_edge_transform_and_lower with
    XnnpackPartitioner, to_executorch(); run through executorch.runtime, its threadpool reset to
    --threads.
  - pteron: `pteron compile --quantize xnnpack --calibration` with the default backends of the
    host target after `pteron tune` (the run calibrates first: the cost model then chooses per
    region between XNNPACK and pteron's int8 kernels), with `--backends xnnpack,optimized,portable`,
    with the int8 kernel library
    (`--backends cortex-m,optimized,portable`: pteron's own int8 kernels, kernels/cortex_m/host)
    and with `--tune` (the fastest of those lists on this machine); `pteron bench --json`.
Each round runs every system once (warm-up runs, then --iters timed runs) in a fresh process;
a system's figure is the median of its rounds' medians. Wall and CPU time, the ISA and the load
average are recorded; outputs are compared with fp32 eager (random weights: the error says the
two quantizations agree, not that either is accurate). Writes bench/results/cpu_int8.{json,md}.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_path  # noqa: E402
from priority import match_autogroup_nice  # noqa: E402
from timing import median_of_rounds, results_folder, timed_calls_wall_cpu_ms  # noqa: E402

REPO = cpu_path.REPO
# label: --backends (None: the host target's default; TUNE: `--tune`, which times the candidate
# lists on this machine and keeps the fastest, at the benchmark's thread count)
TUNE = "--tune"
PTERON_BACKENDS = {"pteron default": None, "pteron xnnpack,optimized,portable": "xnnpack,optimized,portable",
                   "pteron cortex-m,optimized,portable (own int8 kernels)": "cortex-m,optimized,portable",
                   "pteron --tune": TUNE}
ET = "ExecuTorch XNNPACK int8"
GOAL = 1.5  # issue 19: pteron's default at least 1.5x ExecuTorch XNNPACK at every precision


def log(msg: str) -> None:
    print(f"[bench-cpu-int8] {msg}", flush=True)


# ---- Subprocess steps ---------------------------------------------------------------------

def step_prepare(name: str, work: Path) -> None:
    """Project venv: .pt2, inputs, calibration samples and the fp32 eager output."""
    import torch

    import models

    cpu_path.step_prepare(name, work)
    cpu_path.write_calibration(work, name)
    inputs = cpu_path.inputs_of(work, name)
    model, _ = models.build(name)
    with torch.no_grad():
        np.save(work / f"{name}.fp32.npy", model(*[torch.from_numpy(x) for x in inputs]).numpy())


def step_et_export(name: str, work: Path) -> None:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    import models

    t = time.perf_counter()
    inputs = tuple(torch.from_numpy(x) for x in cpu_path.inputs_of(work, name))
    # The quantizer annotates the graph before decompositions (aten.conv2d, aten.linear): the
    # zoo model (the same seeded weights) exported again here, as ExecuTorch documents.
    model, _ = models.build(name)
    module = torch.export.export(model.eval(), inputs).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(module, quantizer)
    calibration = np.load(work / f"{name}.cal.npz")
    for k in range(cpu_path.CALIBRATION_SAMPLES):
        prepared(*[torch.from_numpy(calibration[f"input_{i}"][k]) for i in range(len(inputs))])
    exported = torch.export.export(convert_pt2e(prepared), inputs)
    edge = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()])
    summary = cpu_path.et_delegation(edge)
    (work / f"{name}.et-int8.pte").write_bytes(edge.to_executorch().buffer)
    summary["export_seconds"] = time.perf_counter() - t
    (work / f"{name}.et-int8.delegation.json").write_text(json.dumps(summary))


def step_et_run(name: str, work: Path, threads: int, warmup: int, iters: int) -> None:
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    torch.set_num_threads(threads)
    _unsafe_reset_threadpool(threads)
    t = time.perf_counter()
    method = Runtime.get().load_program(str(work / f"{name}.et-int8.pte")).load_method("forward")
    load_ms = (time.perf_counter() - t) * 1e3
    inputs = [torch.from_numpy(x) for x in cpu_path.inputs_of(work, name)]
    out = []  # the last call's outputs

    def call():
        out[:] = method.execute(inputs)

    times, cpu = timed_calls_wall_cpu_ms(call, iters, warmup)
    np.save(work / f"{name}.et-int8.npy", out[0].numpy())
    result = cpu_path.timing(times, load_ms, cpu)
    result.update(load_average_1m=os.getloadavg()[0],
                  peak_rss_bytes=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
    (work / f"{name}.et-int8.json").write_text(json.dumps(result))


# ---- Orchestration (this venv) ------------------------------------------------------------

def subprocess_step(python: str, *args) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "python"), str(REPO / "bench")])}
    proc = subprocess.run([python, __file__, *map(str, args)], env=env, capture_output=True, text=True,
                          check=False, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[0]}: {(proc.stderr.strip().splitlines() or [''])[-1]}")


def pteron_compile(pteron: str, name: str, work: Path, backends: str | None, threads: int,
                   calibration: Path | str) -> Path:
    tag = "tune" if backends == TUNE else (backends or "default").replace(",", "+")
    pte = work / f"{name}.pteron-int8-{tag}.pte"
    command = [pteron, "compile", work / f"{name}.pt2", "-o", pte, "--quantize", "xnnpack",
               "--calibration", work / f"{name}.cal.npz"]
    if backends == TUNE:
        command += ["--tune", "--threads", threads]
    elif backends:
        command += ["--backends", backends]
    proc = cpu_path.cli(*command, calibration=calibration)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return pte


def pteron_round(pteron: str, pte: Path, name: str, work: Path, args) -> dict:
    proc = cpu_path.cli(pteron, "bench", pte, "--inputs", work / f"{name}.inputs.npz", "--threads", args.threads,
                        "--warmup", args.warmup, "--iters", args.iters, "--json")
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return json.loads(proc.stdout)


def bench_model(name: str, work: Path, args) -> dict:
    log(f"{name}: export, calibration samples, fp32 reference (project venv)")
    subprocess_step(args.python, "prepare", name, "--work", work)
    log(f"{name}: {ET}: quantize (XNNPACKQuantizer), export, lower")
    subprocess_step(sys.executable, "et-export", name, "--work", work)
    programs = {}
    for label, backends in PTERON_BACKENDS.items():
        log(f"{name}: {label}: compile --quantize xnnpack")
        # The default after `pteron tune` (this run's calibration); the explicit lists and --tune
        # as they are without one.
        calibration = args.calibration["path"] if backends is None else "off"
        programs[label] = pteron_compile(args.pteron, name, work, backends, args.threads, calibration)
    rounds: dict[str, list[dict]] = {ET: [], **{label: [] for label in programs}}
    timing = ["--threads", args.threads, "--warmup", args.warmup, "--iters", args.iters]
    for r in range(args.rounds):
        log(f"{name}: round {r + 1} of {args.rounds}")
        subprocess_step(sys.executable, "et-run", name, "--work", work, *timing)
        rounds[ET].append(json.loads((work / f"{name}.et-int8.json").read_text()))
        for label, pte in programs.items():
            rounds[label].append(pteron_round(args.pteron, pte, name, work, args))
    reference = np.load(work / f"{name}.fp32.npy")
    systems = {label: median_of_rounds(rs) for label, rs in rounds.items()}
    systems[ET]["rel_error_vs_fp32"] = cpu_path.rel_error(np.load(work / f"{name}.et-int8.npy"), reference)
    systems[ET]["program_bytes"] = (work / f"{name}.et-int8.pte").stat().st_size
    systems[ET]["delegation"] = json.loads((work / f"{name}.et-int8.delegation.json").read_text())
    for label, pte in programs.items():
        out = work / f"{pte.stem}.out.npz"
        proc = cpu_path.cli(args.pteron, "run", pte, "--inputs", work / f"{name}.inputs.npz", "--outputs", out,
                            "--threads", args.threads)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip())
        systems[label]["rel_error_vs_fp32"] = cpu_path.rel_error(np.load(out)["output_0"], reference)
        systems[label]["program_bytes"] = pte.stat().st_size
        systems[label]["delegation"] = cpu_path.pteron_delegation(args.pteron, pte)
    for label, s in systems.items():
        log(f"{name}: {label}: median {s['median_ms']:.3f} ms (rounds {s['round_medians_ms']}), "
            f"rel. error vs fp32 {s['rel_error_vs_fp32']:.3f}")
    et = systems[ET]["median_ms"]
    goal = {"goal": f"pteron default >= {GOAL}x {ET}", "ratio": et / systems["pteron default"]["median_ms"]}
    goal["met"] = goal["ratio"] >= GOAL
    goal["tuned_ratio"] = et / systems["pteron --tune"]["median_ms"]
    # Issue 19: the default within 1.15x of the fastest explicit list.
    explicit = [s["median_ms"] for label, s in systems.items() if label.startswith("pteron ")
                and label not in ("pteron default", "pteron --tune")]
    goal["default_vs_best"] = systems["pteron default"]["median_ms"] / min(explicit)
    return {"systems": systems, "goal": goal}


def write_markdown(doc: dict, path: Path) -> None:
    lines = ["# INT8 on the CPU: pteron --quantize xnnpack vs ExecuTorch XNNPACKQuantizer (make bench-cpu-int8)", "",
             f"bench/cpu_int8.py, {doc['machine']}; {doc['threads']} threads; {doc['rounds']} alternating rounds "
             f"of {doc['warmup']} warm-up + {doc['iterations']} timed runs per system, each in its own process; "
             "medians of the rounds' medians. Same 16 seeded calibration samples and the same input for both; "
             "random weights, so the error against fp32 says how far each quantization moved the output, not "
             "task accuracy.", ""]
    lines += cpu_path.calibration_markdown(doc.get("calibration"))
    for name, m in doc["models"].items():
        lines += [f"## {name}", "",
                  "| system | median ms | p90 ms | CPU ms | round medians | ISA | max load | rel. error vs fp32 "
                  "| program KiB | regions |", "|---|---:|---:|---:|---|---|---:|---:|---:|---:|"]
        for label, s in m["systems"].items():
            d = s.get("delegation", {})
            lines.append(f"| {label} | {s['median_ms']:.3f} | {s['p90_ms']:.3f} | {s.get('median_cpu_ms', 0):.3f} "
                         f"| {', '.join(f'{v:.3f}' for v in s['round_medians_ms'])} | {s.get('isa', 'XNNPACK (its own)')} "
                         f"| {s['max_load_average']} | {s['rel_error_vs_fp32']:.4f} | {s['program_bytes'] / 1024:.0f} "
                         f"| {d.get('regions', '-')} |")
        g = m["goal"]
        lines += ["", f"Goal: {g['goal']}: {g['ratio']:.2f}x, {'met' if g['met'] else 'not met'}; "
                  f"pteron --tune: {g['tuned_ratio']:.2f}x.", ""]
        if "default_vs_best" in g:
            lines += [f"Goal: pteron default within 1.15x of the fastest explicit list: "
                      f"{g['default_vs_best']:.2f}x, {'met' if g['default_vs_best'] <= 1.15 else 'not met'}.", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", nargs="?", default="bench", choices=["bench", "prepare", "et-export", "et-run"])
    parser.add_argument("name", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path)
    parser.add_argument("--models", nargs="+",
                        default=["mobilenet-v2", "resnet-18", "ds-cnn", "efficientnet-b0", "mobilenet-v3-large"])
    parser.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"))
    parser.add_argument("--build", type=Path, default=REPO / "build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--results", type=Path, default=cpu_path.RESULTS)
    args = parser.parse_args()
    if args.mode == "prepare":
        return step_prepare(args.name, args.work)
    if args.mode == "et-export":
        return step_et_export(args.name, args.work)
    if args.mode == "et-run":
        return step_et_run(args.name, args.work, args.threads, args.warmup, args.iters)
    if (args.iters < 10 or args.rounds < 3) and args.results.resolve() == cpu_path.RESULTS.resolve():
        sys.exit("[bench-cpu-int8] --iters < 10 or --rounds < 3 is a smoke run: give --results elsewhere")
    args.pteron = str(args.build / "tools" / "cli" / "pteron")
    priority = match_autogroup_nice()
    load_start = os.getloadavg()[0]
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pteron-bench-int8-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        args.calibration = cpu_path.calibrate(args.pteron, args.threads, work)
        models = {name: bench_model(name, work, args) for name in args.models}
    doc = {"target": "bench-cpu-int8", "executorch": "1.5.1", "threads": args.threads, "warmup": args.warmup,
           "iterations": args.iters, "rounds": args.rounds,
           "machine": (f"{os.cpu_count()} cores, load average {load_start:.1f} at the start and "
                       f"{os.getloadavg()[0]:.1f} at the end, {priority}"),
           "commit": cpu_path.cli("git", "-C", REPO, "describe", "--always", "--dirty").stdout.strip(),
           "seconds": round(time.perf_counter() - start, 1), "calibration": args.calibration, "models": models}
    loads = [s["max_load_average"] for m in models.values() for s in m["systems"].values()]
    args.results = results_folder(args.results, cpu_path.RESULTS, max(loads), REPO / "bench" / "work", log)
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "cpu_int8.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_markdown(doc, args.results / "cpu_int8.md")
    log(f"done in {doc['seconds']:.0f} s: {args.results}/cpu_int8.{{json,md}}")


if __name__ == "__main__":
    main()
