"""The CPU path, end to end: PyTorch eager, ExecuTorch (portable, XNNPACK) and pteron (portable,
best available) on the same zoo model, same inputs, same thread count, in one run.

    .venv-et/bin/python bench/cpu_path.py opt   # OPT-125M -> bench/results/opt125m.*
    .venv-et/bin/python bench/cpu_path.py cpu   # mobilenet-v2, resnet-18, efficientnet-b0,
                                                # mobilenet-v3-large, vit-b16-6l, bert-base-6l,
                                                # llama-prefill-6l -> cpu.*

Every system runs in its own subprocess (so load time and peak RSS are its own): warm-up runs,
then the median of >= 10 timed runs, all with --threads (default 2) threads; --rounds (default 3)
alternating rounds of every system but ExecuTorch portable, each figure the median of its
rounds' medians (this VM's speed moves by up to 2x over minutes). A system whose
first run takes over SLOW_RUN_S (ExecuTorch portable on OPT-125M: minutes per run) has had its
warm-up and takes --slow-iters timed runs instead (default 10; each result records its count).
  - PyTorch eager: the project's venv (--python), torch.set_num_threads; "load" is building the
    zoo model (seeded weights) in eval mode.
  - ExecuTorch 1.5.1 (this venv): the saved .pt2 through to_edge_transform_and_lower without a
    partitioner (portable) or with XnnpackPartitioner, then to_executorch(); run through
    executorch.runtime with its threadpool reset to --threads; delegation from
    executorch.devtools.backend_debug.get_delegation_info.
  - pteron: `pteron compile --backends ...`, `pteron bench --threads --kernels --json`,
    `pteron run --outputs` for the output check, `pteron inspect --delegation --json`.
    PTERON_CONFIGS lists the configurations: "pteron portable" (portable kernels only) and
    "pteron best", the fastest of its backend lists that this build compiles (all are timed
    and recorded; which path wins depends on the model and the machine).
Outputs are compared with eager: max |diff| / max |eager| <= 1e-4. Boundaries are changes of
engine (kernels or one delegate) along the execution order, for ExecuTorch counted the same way
on its lowered graph. Writes bench/results/<suite>.{json,md,png} (--render rewrites the .md and
.png from the .json). Smoke runs (--iters < 10, --systems, --models) write elsewhere (--results);
--work with --reuse keeps the exported .pt2 between runs.
"""

import argparse
import importlib.util
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from priority import match_autogroup_nice

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
SUITES = {"opt": ("opt125m", ["opt-125m"]),
          "cpu": ("cpu", ["mobilenet-v2", "resnet-18", "efficientnet-b0", "mobilenet-v3-large", "vit-b16-6l",
                          "bert-base-6l", "llama-prefill-6l"])}
# transformer layers, for boundaries per layer
LAYERS = {"opt-125m": 12, "vit-b16-6l": 6, "bert-base-6l": 6, "llama-prefill-6l": 6}
# ExecuTorch's portable kernels take seconds to minutes per call of the transformers (57 s on
# OPT-125M): measured on the CNNs and OPT-125M only.
ET_PORTABLE_MODELS = {"opt-125m", "mobilenet-v2", "resnet-18", "efficientnet-b0"}
TOLERANCE = 1e-4
SLOW_RUN_S = 20.0
# pteron configurations: name, backend lists, kernel libraries to run with, and which list to
# keep: "first" that compiles, or the "fastest" of those that compile (see run_pteron).
PTERON_CONFIGS = [
    {"name": "pteron portable", "backends": ["portable"], "kernels": "portable", "pick": "first"},
    {"name": "pteron best", "backends": ["xnnpack,optimized,portable", "optimized,portable"], "kernels": "",
     "pick": "fastest"},
    # What a user gets without --backends (the target's list); issue 19: within 1.15x of the best.
    # Compiled after `pteron tune` (the run's calibration), as a user would; the other lists keep
    # their fixed rules.
    {"name": "pteron default", "backends": [None], "kernels": "", "pick": "first", "calibrated": True},
]
ET_VARIANTS = {"ExecuTorch portable": "portable", "ExecuTorch XNNPACK": "xnnpack"}
GOALS = {  # (faster system, slower system, factor), from issue 4
    "opt-125m": [("pteron best", "ExecuTorch XNNPACK", 1.5), ("pteron best", "PyTorch eager", 1.5),
                 ("pteron portable", "ExecuTorch portable", 10.0)],
}
# Every model (issue 19): the default program 1.5x faster than ExecuTorch XNNPACK and eager, and
# within 1.15x of the best explicit list (best's time / default's >= 1 / 1.15).
DEFAULT_GOALS = [("pteron default", "ExecuTorch XNNPACK", 1.5), ("pteron default", "PyTorch eager", 1.5),
                 ("pteron default", "pteron best", 1 / 1.15)]


def log(msg: str) -> None:
    print(f"[bench-cpu-path] {msg}", flush=True)


def _load_compile_bench():
    """bench/compile.py's helpers (export_models: the zoo export every bench uses)."""
    spec = importlib.util.spec_from_file_location("compile_bench", REPO / "bench" / "compile.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timing(times_ms: list[float], load_ms: float, cpu_ms: list[float]) -> dict:
    ordered = sorted(times_ms)
    return {"load_ms": load_ms, "median_ms": statistics.median(times_ms),
            "median_cpu_ms": statistics.median(cpu_ms),
            "p90_ms": ordered[min(len(ordered) - 1, int(0.9 * len(ordered) + 0.5) - 1)],
            "min_ms": ordered[0], "max_ms": ordered[-1], "iterations": len(times_ms),
            "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "times_ms": [round(t, 3) for t in times_ms]}


def timed_runs(fn, warmup: int, iters: int, slow_iters: int) -> tuple[list[float], list[float], object]:
    """Warm-up runs, then `iters` timed ones: wall and process CPU ms of each. A first warm-up
    run over SLOW_RUN_S is enough warm-up and the system then gets `slow_iters` timed runs
    (ExecuTorch portable takes minutes per OPT-125M run; the result records the count)."""
    out = None
    for i in range(max(warmup, 1)):
        t = time.perf_counter()
        out = fn()
        if i == 0 and time.perf_counter() - t > SLOW_RUN_S:
            iters = min(iters, slow_iters)
            break
    times, cpu = [], []
    for _ in range(iters):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.process_time() - c) * 1e3)
    return times, cpu, out


def inputs_of(work: Path, name: str) -> list[np.ndarray]:
    arrays = np.load(work / f"{name}.inputs.npz")
    return [arrays[f"input_{i}"] for i in range(len(arrays.files))]


CALIBRATION_SAMPLES = 16


def write_calibration(work: Path, name: str) -> Path:
    """`{name}.cal.npz`: 16 seeded normal samples of the model's inputs, the calibration data every
    int8 benchmark quantizes with (`pteron compile --quantize ... --calibration`, and ExecuTorch's
    XNNPACKQuantizer in bench-cpu-int8)."""
    rng = np.random.default_rng(7)
    path = work / f"{name}.cal.npz"
    np.savez(path, **{f"input_{i}": rng.standard_normal((CALIBRATION_SAMPLES, *x.shape)).astype(x.dtype)
                      for i, x in enumerate(inputs_of(work, name))})
    return path


# ---- Subprocess steps ---------------------------------------------------------------------

def step_prepare(name: str, work: Path) -> None:
    """Project venv: the example inputs, then the .pt2 (bench/compile.py's export)."""
    import models

    _, inputs = models.build(name)
    np.savez(work / f"{name}.inputs.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    _load_compile_bench().export_models([name], work)


def step_eager(name: str, work: Path, threads: int, warmup: int, iters: int, slow_iters: int) -> None:
    import torch

    import models

    torch.set_num_threads(threads)
    t = time.perf_counter()
    model, _ = models.build(name)
    load_ms = (time.perf_counter() - t) * 1e3
    inputs = [torch.from_numpy(x) for x in inputs_of(work, name)]
    with torch.no_grad():
        times, cpu, out = timed_runs(lambda: model(*inputs), warmup, iters, slow_iters)
    np.save(work / f"{name}.eager.npy", out.numpy())
    (work / f"{name}.eager.json").write_text(json.dumps(timing(times, load_ms, cpu)))


def engine_changes(engines: list[str]) -> int:
    """Boundaries along an execution order: each change of engine, plus returning to the caller
    after a trailing delegate (the same rule as pteron's report)."""
    changes, previous = 0, "kernels"
    for engine in engines:
        changes += engine != previous
        previous = engine
    return changes + (previous != "kernels")


def op_name(target) -> str:
    """aten::name.overload, as pteron's report spells it, for an edge-dialect op."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return str(target)
    return f"{schema.name}.{schema.overload_name or 'default'}"


def tensor_bytes(value) -> int:
    values = value if isinstance(value, (list, tuple)) else [value]
    return sum(v.numel() * v.element_size() for v in values if hasattr(v, "numel"))


def et_delegation(edge) -> dict:
    """ExecuTorch's lowered graph, summarised with the rules of pteron's report: op nodes only
    (getitem unpacks a delegate's or a multi-output op's results: no work, not counted), engine
    changes along the execution order, bytes of activations entering and leaving delegates."""
    from executorch.devtools.backend_debug import get_delegation_info

    program = edge.exported_program()
    graph = program.graph_module
    info = get_delegation_info(graph)
    constants = set(program.graph_signature.inputs_to_parameters) | \
        set(program.graph_signature.inputs_to_buffers) | \
        set(program.graph_signature.inputs_to_lifted_tensor_constants)
    engines, not_delegated, boundary_bytes = [], {}, 0
    for node in graph.graph.nodes:
        if node.op != "call_function" or "getitem" in str(node.target):
            continue
        if "call_delegate" in str(node.target):
            engines.append(f"delegate:{node.args[0]}")
            boundary_bytes += tensor_bytes(node.meta.get("val"))
            boundary_bytes += sum(tensor_bytes(a.meta.get("val")) for a in node.args[1:]
                                  if hasattr(a, "meta") and a.op != "get_attr" and a.name not in constants)
        else:
            engines.append("kernels")
            name = op_name(node.target)
            not_delegated[name] = not_delegated.get(name, 0) + 1
    by_op = info.get_operator_delegation_dataframe()
    return {"regions": info.num_delegated_subgraphs,
            "delegated_nodes": info.num_delegated_nodes,
            "non_delegated_nodes": sum(not_delegated.values()),
            "getitem_nodes": int(by_op[by_op["op_type"] == "getitem"]["occurrences_in_non_delegated_graphs"].sum()),
            "boundaries": engine_changes(engines),
            "boundary_bytes": boundary_bytes,
            "not_delegated_ops": dict(sorted(not_delegated.items())),
            "ops": [{"op": str(r["op_type"]), "delegated": int(r["occurrences_in_delegated_graphs"]),
                     "not_delegated": int(r["occurrences_in_non_delegated_graphs"])}
                    for _, r in by_op.iterrows() if str(r["op_type"]) != "Total"]}


def step_et_export(name: str, work: Path, variant: str) -> None:
    import torch
    from executorch.exir import to_edge_transform_and_lower

    partitioners = []
    if variant == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

        partitioners = [XnnpackPartitioner()]
    t = time.perf_counter()
    edge = to_edge_transform_and_lower(torch.export.load(work / f"{name}.pt2"), partitioner=partitioners)
    summary = et_delegation(edge)
    program = edge.to_executorch()
    (work / f"{name}.et-{variant}.pte").write_bytes(program.buffer)
    summary["export_seconds"] = time.perf_counter() - t
    (work / f"{name}.et-{variant}.delegation.json").write_text(json.dumps(summary))


def step_et_run(name: str, work: Path, variant: str, threads: int, warmup: int, iters: int,
                slow_iters: int) -> None:
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    torch.set_num_threads(threads)
    _unsafe_reset_threadpool(threads)
    t = time.perf_counter()
    method = Runtime.get().load_program(str(work / f"{name}.et-{variant}.pte")).load_method("forward")
    load_ms = (time.perf_counter() - t) * 1e3
    inputs = [torch.from_numpy(x) for x in inputs_of(work, name)]
    times, cpu, out = timed_runs(lambda: method.execute(inputs), warmup, iters, slow_iters)
    np.save(work / f"{name}.et-{variant}.npy", out[0].numpy())
    (work / f"{name}.et-{variant}.json").write_text(json.dumps(timing(times, load_ms, cpu)))


# ---- Orchestration (this venv) ------------------------------------------------------------

def subprocess_step(python: str, *args, timeout: float = 3600) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "python")])}
    proc = subprocess.run([python, __file__, *map(str, args)], env=env, timeout=timeout,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        status = f"killed by signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        tail = (proc.stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"{args[0]} step, {status}: {tail}")


def cli(*args, calibration: Path | str = "off") -> subprocess.CompletedProcess:
    """A command with the cost model's calibration named (PTERON_CALIBRATION): "off" for the
    explicit backend lists (their fixed rules, whatever this machine has cached), the run's own
    `pteron tune` file for the default program."""
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False,
                          env={**os.environ, "PTERON_CALIBRATION": str(calibration)})


def calibrate(pteron: str, threads: int, work: Path) -> dict:
    """`pteron tune` once per benchmark run, at the benchmark's thread count, into the work
    folder: the default program is compiled with it, as a user's would be after `pteron tune`.
    Returns the calibration (its rates and where it is)."""
    log(f"pteron tune --threads {threads}: this machine's cost-model calibration")
    proc = cli(pteron, "tune", "--threads", threads, "--output", work / "calibration.json", "--json")
    if proc.returncode != 0:
        raise RuntimeError(f"pteron tune: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def rel_error(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.abs(got - want).max() / (np.abs(want).max() or 1.0))


def pteron_delegation(pteron: str, pte: Path) -> dict:
    report = json.loads(cli(pteron, "inspect", pte, "--delegation", "--json").stdout)
    return {"regions": report["regions"]["count"],
            "per_backend": report["regions"]["per_backend"],
            "delegated_nodes": report["delegated_nodes"],
            "non_delegated_nodes": report["kernel_nodes"],
            "boundaries": report["boundaries"]["crossings"],
            "boundary_bytes": report["boundaries"]["bytes"],
            "flops_share": report["flops"]["share"],
            "runs_on": report["runs_on"],
            "not_delegated_ops": {o["op"]: o["not_delegated"] for o in report["ops"] if o["not_delegated"]},
            "not_delegated_runs_on": {o["op"]: {k: v for k, v in o["runs_on"].items() if k in ("optimized", "portable")}
                                      for o in report["ops"] if o["not_delegated"]}}


def bench_pteron_program(config: dict, backends: str | None, name: str, work: Path, pteron: str, args) -> dict:
    """Compile with one backend list, then `pteron bench` and the delegation report."""
    suffix = (backends or "default").replace(",", "+")
    pte = work / f"{name}.pteron-{suffix}.pte"
    command = [pteron, "compile", work / f"{name}.pt2", "-o", pte] + (["--backends", backends] if backends else [])
    proc = cli(*command, calibration=args.calibration["path"] if config.get("calibrated") else "off")
    if proc.returncode != 0:
        return {"error": f"{backends}: {proc.stderr.strip()}"}
    result = {"backends": backends or "target default (this pteron compile has no --backends)", "program": str(pte)}
    runtime = ["--threads", args.threads] + (["--kernels", config["kernels"]] if config["kernels"] else [])
    proc = cli(pteron, "bench", pte, "--inputs", work / f"{name}.inputs.npz", "--warmup", args.warmup,
               "--iters", args.iters, *runtime, "--json")
    if proc.returncode != 0:
        return {**result, "error": proc.stderr.strip()}
    result.update(json.loads(proc.stdout))
    result["delegation"] = pteron_delegation(pteron, pte)
    return result


def run_pteron(config: dict, name: str, work: Path, pteron: str, args) -> dict:
    """config["pick"] "first": the first backend list this build compiles (backends land one by one);
    "fastest": every list that compiles is timed and the fastest median is the result, the
    others recorded under "candidates" (which path is best depends on the model and machine)."""
    has_backends = "--backends" in cli(pteron, "compile", "--help").stdout
    candidates = []
    for backends in config["backends"] if has_backends else [None]:
        log(f"{name}: {config['name']}: --backends {backends}")
        candidates.append(bench_pteron_program(config, backends, name, work, pteron, args))
        if "median_ms" in candidates[-1]:
            log(f"{name}: {config['name']}: --backends {backends}: median {candidates[-1]['median_ms']:.2f} ms")
        if config["pick"] == "first" and "error" not in candidates[-1]:
            break
    timed = [c for c in candidates if "median_ms" in c]
    if not timed:
        return {"error": "; ".join(c["error"] for c in candidates)}
    result = dict(min(timed, key=lambda c: c["median_ms"]))
    if len(candidates) > 1:
        result["candidates"] = [{k: v for k, v in c.items() if k not in ("times_ms",)} for c in candidates
                                if c is not None]
    runtime = ["--threads", args.threads] + (["--kernels", config["kernels"]] if config["kernels"] else [])
    out = work / f"{Path(result['program']).stem}.out.npz"
    proc = cli(pteron, "run", result["program"], "--inputs", work / f"{name}.inputs.npz", "--outputs", out, *runtime)
    if proc.returncode != 0:
        return {**result, "error": proc.stderr.strip()}
    result["output"] = np.load(out)["output_0"]
    return result


def stamped(entry: dict) -> dict:
    """When a system finished and how loaded the machine was (runs may be merged: --merge)."""
    entry["measured_at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    entry["load_average"] = round(os.getloadavg()[0], 1)
    return entry


def wanted(label: str, args) -> bool:
    return not args.systems or label in args.systems


def bench_model(name: str, work: Path, args) -> dict:
    systems = {}
    if args.reuse and (work / f"{name}.pt2").exists() and (work / f"{name}.inputs.npz").exists():
        log(f"{name}: reusing {work / name}.pt2 and its inputs (--reuse)")
    else:
        log(f"{name}: exporting (project venv)")
        subprocess_step(args.python, "prepare", name, "--work", work)
    timing_args = ["--threads", args.threads, "--warmup", args.warmup, "--iters", args.iters,
                   "--slow-iters", args.slow_iters]
    if wanted("PyTorch eager", args) or not (work / f"{name}.eager.npy").exists():
        log(f"{name}: PyTorch eager, {args.threads} threads")
        try:
            subprocess_step(args.python, "eager", name, "--work", work, *timing_args)
            if wanted("PyTorch eager", args):
                systems["PyTorch eager"] = stamped(json.loads((work / f"{name}.eager.json").read_text()))
        except RuntimeError as e:
            systems["PyTorch eager"] = {"error": str(e)}
    reference = np.load(work / f"{name}.eager.npy") if (work / f"{name}.eager.npy").exists() else None

    for label, variant in ET_VARIANTS.items():
        if not wanted(label, args) or (variant == "portable" and name not in ET_PORTABLE_MODELS):
            continue
        try:
            pte = work / f"{name}.et-{variant}.pte"
            if args.reuse_programs and pte.exists() and pte.with_suffix(".delegation.json").exists() and \
                    pte.stat().st_mtime > (work / f"{name}.pt2").stat().st_mtime:
                log(f"{name}: {label}: reusing {pte} (--reuse-programs)")
            else:
                log(f"{name}: {label}: export and lower")
                subprocess_step(sys.executable, "et-export", name, "--work", work, "--variant", variant)
            log(f"{name}: {label}: {args.iters} timed runs ({args.slow_iters} if a run takes over "
                f"{SLOW_RUN_S:.0f} s)")
            subprocess_step(sys.executable, "et-run", name, "--work", work, "--variant", variant,
                            *timing_args)
            entry = json.loads((work / f"{name}.et-{variant}.json").read_text())
            entry["delegation"] = json.loads(pte.with_suffix(".delegation.json").read_text())
            entry["program_reused"] = bool(args.reuse_programs)
            entry["output"] = np.load(work / f"{name}.et-{variant}.npy")
            systems[label] = stamped(entry)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            systems[label] = {"error": str(e)}

    for config in PTERON_CONFIGS:
        if not wanted(config["name"], args):
            continue
        log(f"{name}: {config['name']}: compile, bench, run")
        systems[config["name"]] = stamped(run_pteron(config, name, work, args.pteron, args))

    more_rounds(name, work, args, systems)
    for label, entry in systems.items():
        output = entry.pop("output", None)
        if output is not None and reference is not None:
            entry["rel_error_vs_eager"] = rel_error(output, reference)
            entry["output_ok"] = entry["rel_error_vs_eager"] <= TOLERANCE
        if "median_ms" in entry:
            log(f"{name}: {label}: median {entry['median_ms']:.2f} ms, load {entry['load_ms']:.0f} ms, "
                f"peak RSS {entry['peak_rss_bytes'] / 2**20:.0f} MiB"
                + (f", rel. error {entry['rel_error_vs_eager']:.1e}" if "rel_error_vs_eager" in entry else ""))
        else:
            log(f"{name}: {label}: FAILED: {entry.get('error')}")
    return {"systems": systems, "goals": goals_of(name, systems)}


def round_median(name: str, work: Path, args, label: str, program: str | None, kernels: str) -> float:
    """One more timed round of a system in a fresh process: its median wall ms."""
    timing_args = ["--threads", args.threads, "--warmup", args.warmup, "--iters", args.iters,
                   "--slow-iters", args.slow_iters]
    if label == "PyTorch eager":
        subprocess_step(args.python, "eager", name, "--work", work, *timing_args)
        return json.loads((work / f"{name}.eager.json").read_text())["median_ms"]
    if label == "ExecuTorch XNNPACK":
        subprocess_step(sys.executable, "et-run", name, "--work", work, "--variant", "xnnpack", *timing_args)
        return json.loads((work / f"{name}.et-xnnpack.json").read_text())["median_ms"]
    runtime = ["--threads", args.threads] + (["--kernels", kernels] if kernels else [])
    proc = cli(args.pteron, "bench", program, "--inputs", work / f"{name}.inputs.npz", "--warmup", args.warmup,
               "--iters", args.iters, *runtime, "--json")
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip())
    return json.loads(proc.stdout)["median_ms"]


def more_rounds(name: str, work: Path, args, systems: dict) -> None:
    """Rounds 2..--rounds of every system but ExecuTorch portable (seconds to minutes a call),
    each system in a fresh process, every other round in reverse order: this VM's speed moves by
    up to 2x over minutes, so systems timed once at different moments are not comparable. A
    system's median becomes the median of its rounds' medians; "pteron best" re-picks the
    candidate with the lowest such median."""
    configs = {c["name"]: c for c in PTERON_CONFIGS}
    # (system, candidate index or None, program, kernels) for everything re-timed
    timed = []
    for label, entry in systems.items():
        if "median_ms" not in entry or label == "ExecuTorch portable":
            continue
        entry["round_medians_ms"] = [entry["median_ms"]]
        if label in configs:
            for i, c in enumerate(entry.get("candidates", [])):
                if "median_ms" in c:
                    c["round_medians_ms"] = [c["median_ms"]]
                    timed.append((label, i, c["program"], configs[label]["kernels"]))
            if not entry.get("candidates"):
                timed.append((label, None, entry["program"], configs[label]["kernels"]))
        else:
            timed.append((label, None, None, ""))
    for r in range(1, args.rounds):
        log(f"{name}: round {r + 1} of {args.rounds}")
        for label, i, program, kernels in (timed if r % 2 == 0 else list(reversed(timed))):
            target = systems[label] if i is None else systems[label]["candidates"][i]
            try:
                target["round_medians_ms"].append(round_median(name, work, args, label, program, kernels))
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                log(f"{name}: {label}: round {r + 1} failed: {e}")
    for label, entry in systems.items():
        if "round_medians_ms" not in entry:
            continue
        candidates = [c for c in entry.get("candidates", []) if "round_medians_ms" in c]
        for c in candidates:
            c["median_ms"] = statistics.median(c["round_medians_ms"])
        if candidates:
            best = min(candidates, key=lambda c: c["median_ms"])
            if best["program"] != entry["program"]:  # another candidate is faster over the rounds
                output = entry.get("output")
                entry.update({k: v for k, v in best.items()})
                entry["output_from_first_pick"] = output is not None
            entry["round_medians_ms"] = best["round_medians_ms"]
        entry["median_ms"] = statistics.median(entry["round_medians_ms"])


def goals_of(name: str, systems: dict) -> list[dict]:
    goals = []
    for fast, slow, factor in GOALS.get(name, []) + DEFAULT_GOALS:
        a, b = systems.get(fast, {}), systems.get(slow, {})
        if "median_ms" in a and "median_ms" in b:
            ratio = b["median_ms"] / a["median_ms"]
            text = (f"{fast} >= {factor}x faster than {slow}" if factor >= 1 else
                    f"{fast} within {1 / factor:.2f}x of {slow}")
            goals.append({"goal": text, "ratio": ratio,
                          "met": ratio >= factor})
    best = systems.get("pteron best", {}).get("delegation")
    if best and name in LAYERS:
        per_layer = best["boundaries"] / LAYERS[name]
        others = [f"{c['backends']}: {c['delegation']['boundaries'] / LAYERS[name]:.1f}"
                  for c in systems["pteron best"].get("candidates", [])
                  if c.get("delegation") and c["backends"] != systems["pteron best"].get("backends")]
        goals.append({"goal": "pteron best: <= 3 backend boundaries per layer"
                      + (f" (other candidates: {'; '.join(others)})" if others else ""),
                      "ratio": per_layer, "met": per_layer <= 3})
    return goals


def delegation_tables(name: str, systems: dict) -> list[str]:
    """Regions, non-delegated op nodes, boundaries side by side, then the non-delegated ops of
    each delegating system by op type (pteron's also say which kernel library runs them)."""
    layers = LAYERS.get(name)
    text = ["Delegation, counted the same way for both (op nodes of the lowered graph, getitem not "
            "counted; a boundary is a change of engine, kernels or one delegate, along the "
            "execution order; bytes are activations entering and leaving delegates). ExecuTorch's "
            "edge graph keeps view/permute/expand copies as nodes that pteron's compiler folds, so "
            "node counts are not one to one.", "",
            "| system | regions | delegated nodes | non-delegated nodes | boundaries | per layer | "
            "MiB crossing | nodes run on |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    delegating = []
    rows = []
    for label, e in systems.items():
        rows.append((label, e.get("delegation")))
        for c in e.get("candidates", []):
            if c.get("delegation") and c["backends"] != e.get("backends"):
                rows.append((f"{label} candidate: --backends {c['backends']}", c["delegation"]))
    for label, d in rows:
        if not d:
            continue
        if d["regions"]:
            delegating.append(label)
        per_layer = f"{d['boundaries'] / layers:.1f}" if layers else "-"
        crossing = f"{d['boundary_bytes'] / 2**20:.1f}" if "boundary_bytes" in d else "-"
        runs_on = ", ".join(f"{k} {v}" for k, v in d.get("runs_on", {}).items()) or "-"
        text.append(f"| {label} | {d['regions']} | {d['delegated_nodes']} | {d['non_delegated_nodes']} | "
                    f"{d['boundaries']} | {per_layer} | {crossing} | {runs_on} |")
    if delegating:
        ops = sorted({op for label in delegating for op in dict(rows)[label].get("not_delegated_ops", {})})
        text += ["", "Ops left outside delegates (count per system):", "",
                 "| op | " + " | ".join(delegating) + " |", "|---|" + "---:|" * len(delegating)]
        by_label = dict(rows)
        for op in ops:
            cells = []
            for label in delegating:
                d = by_label[label]
                count = d.get("not_delegated_ops", {}).get(op, 0)
                where = d.get("not_delegated_runs_on", {}).get(op)
                cells.append("-" if not count else
                             f"{count}" + (f" ({', '.join(f'{k} {v}' for k, v in where.items())})" if where else ""))
            text.append(f"| {op} | " + " | ".join(cells) + " |")
    return text


def calibration_markdown(calibration: dict | None) -> list[str]:
    """The cost model's rates the default program was compiled with, as a table."""
    if not calibration:
        return []
    classes = ["conv3x3", "conv", "pointwise", "depthwise", "depthwise_5x5", "depthwise_large", "linear"]
    lines = [f"'pteron default' is compiled after `pteron tune --threads {calibration['threads']}` "
             f"({calibration['machine']}): its cost model puts each region where these rates say it "
             "runs faster (GMAC/s + us per call, fitted per op class; tools/cli/calibrate.h).", "",
             "| engine | " + " | ".join(classes) + " |", "|---|" + "---:|" * len(classes)]
    for engine, precisions in calibration["rates"].items():
        for precision, rates in precisions.items():
            cells = [f"{1 / rates[c]['ns_per_mac']:.1f} + {rates[c]['ns_per_call'] / 1e3:.1f}" if c in rates
                     else "-" for c in classes]
            lines.append(f"| {engine} {precision} | " + " | ".join(cells) + " |")
    boundaries = calibration.get("boundary_ns_per_byte", {})
    if boundaries:
        lines += ["", "A region's program costs beyond its layers (us) plus per byte of 4-D activations "
                  "crossing its boundary (ns): " + ", ".join(
                      f"{engine} {precision} {calibration['program_ns'][engine][precision] / 1e3:.1f} + "
                      f"{per_byte:.3f}" for engine, precisions in boundaries.items()
                      for precision, per_byte in precisions.items()) + "."]
    return lines + [""]


def write_markdown(doc: dict, path: Path) -> None:
    slow = doc.get("slow_iterations", doc["iterations"])
    text = [f"# CPU path: {', '.join(doc['models'])}", "",
            (f"`make {doc['target']}` (bench/cpu_path.py). {doc['threads']} threads for every system, "
             f"medians of {doc['iterations']} timed runs after {doc['warmup']} warm-up"
             + (f" ({slow} timed runs after one warm-up for a system whose first run takes over "
                f"{SLOW_RUN_S:.0f} s: see the runs column)" if slow < doc["iterations"] else "")
             + (f"; the median of {doc['rounds']} alternating rounds' medians for every system but "
                "ExecuTorch portable (one round), p90/min/CPU from the first round"
                if doc.get("rounds", 1) > 1 else "")
             + ", each system in its own process (load time and peak RSS are its own; Python systems "
             "include the interpreter and torch). Output checked against PyTorch eager: max |diff| / "
             f"max |eager| <= {TOLERANCE:g}."), ""]
    if doc.get("note"):
        text += [doc["note"], ""]
    text += calibration_markdown(doc.get("calibration"))
    for name, r in doc["models"].items():
        text += [f"## {name}", "",
                 "| system | median (ms) | p90 (ms) | min (ms) | CPU (ms) | runs | load (ms) | peak RSS (MiB) | "
                 "rel. error vs eager | ISA | load avg | notes |",
                 "|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---|"]
        for label, e in r["systems"].items():
            if "median_ms" not in e:
                text.append(f"| {label} | - | - | - | - | - | - | - | - | - | - | FAILED: {e.get('error', '')[:200]} |")
                continue
            cpu_cell = f"{e['median_cpu_ms']:.2f}" if "median_cpu_ms" in e else "-"
            isa = e.get("isa", "its own" if label.startswith(("PyTorch", "ExecuTorch")) else "-")
            err = e.get("rel_error_vs_eager")
            err_cell = "-" if err is None else f"{err:.1e} {'ok' if e['output_ok'] else 'OVER'}"
            notes = [f"--backends {e['backends']}"] if "backends" in e else []
            if len(e.get("candidates", [])) > 1:
                notes.append("fastest of: " + ", ".join(
                    f"{c['backends']} {c['median_ms']:.2f} ms" if "median_ms" in c else f"{c.get('backends')} failed"
                    for c in e["candidates"]))
            if len(e.get("round_medians_ms", [])) > 1:
                notes.append("rounds " + " / ".join(f"{m:.2f}" for m in e["round_medians_ms"]))
            if e.get("output_from_first_pick"):
                notes.append("output checked on the first round's pick")
            if e.get("program_reused"):
                notes.append("program lowered by an earlier run from the same .pt2 (--reuse-programs)")
            if doc.get("merged") and "measured_at" in e:
                notes.append(f"measured {e['measured_at'][11:]}, load average {e['load_average']}")
            note = "; ".join(notes)
            text.append(f"| {label} | {e['median_ms']:.2f} | {e['p90_ms']:.2f} | {e['min_ms']:.2f} | "
                        f"{cpu_cell} | {e['iterations']} | {e['load_ms']:.0f} | "
                        f"{e['peak_rss_bytes'] / 2**20:.0f} | {err_cell} | {isa} | "
                        f"{e.get('load_average', '-')} | {note} |")
        text += [""] + delegation_tables(name, r["systems"])
        if r["goals"]:
            text += ["", "Goals:", ""]
            text += [f"- {g['goal']}: {g['ratio']:.2f} -> {'met' if g['met'] else 'NOT met'}" for g in r["goals"]]
        text.append("")
    text += [f"Machine: {doc['machine']}; pteron at {doc.get('commit', '?')}; {doc['seconds']:.0f} s in "
             "all. Shared machine: absolute times move with other jobs."]
    for m in doc.get("merged", []):
        text += ["", f"Rerun with --merge: {', '.join(m['systems'])}: {m['machine']}; pteron at {m['commit']}."]
    text += ["",
             f"![latency]({path.stem}.png)"]
    path.write_text("\n".join(text) + "\n")


def write_chart(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["models"])
    labels = list(next(iter(doc["models"].values()))["systems"])
    fig, ax = plt.subplots(figsize=(max(6, 3 * len(names) + 3), 4))
    width = 0.8 / len(labels)
    for k, label in enumerate(labels):
        values = [doc["models"][n]["systems"].get(label, {}).get("median_ms", 0) for n in names]
        bars = ax.bar([i + (k - (len(labels) - 1) / 2) * width for i in range(len(names))], values, width,
                      label=label)
        for bar, v in zip(bars, values):
            if v:
                ax.annotate(f"{v:.3g}", (bar.get_x() + bar.get_width() / 2, v), ha="center", va="bottom",
                            fontsize=7)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names)
    ax.set_ylabel("median latency, ms (log scale)")
    ax.set_title(f"CPU path, {doc['threads']} threads")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=[*SUITES, "prepare", "eager", "et-export", "et-run"])
    parser.add_argument("name", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--work", type=Path, help="folder for .pt2/.pte files (default: temp)")
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--build", type=Path, default=REPO / "build")
    parser.add_argument("--python", default=str(REPO / ".venv" / "bin" / "python"),
                        help="the project's venv python (export, PyTorch eager)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10, help="timed runs per system (>= 10 for results)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds of every system but ExecuTorch portable (>= 3 for results)")
    parser.add_argument("--slow-iters", type=int, default=10,
                        help=f"timed runs of a system whose first run takes over {SLOW_RUN_S:.0f} s "
                             "(ExecuTorch portable on OPT-125M); recorded per system")
    parser.add_argument("--models", nargs="+", help="zoo models instead of the suite's (smoke runs)")
    parser.add_argument("--systems", nargs="+", metavar="LABEL",
                        help="only these systems, e.g. 'pteron best' (smoke runs; eager still runs "
                             "once for the reference output unless --reuse finds it)")
    parser.add_argument("--reuse", action="store_true",
                        help="reuse the .pt2 and inputs already in --work (export OPT-125M once: "
                             "make bench-opt and bench-explorer share bench/work/opt)")
    parser.add_argument("--reuse-programs", action="store_true",
                        help="also reuse the ExecuTorch programs in --work when newer than the .pt2 "
                             "(their lowering takes minutes and does not change between runs)")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="where to write <suite>.{json,md,png}")
    parser.add_argument("--note", default="", help="a line for the results (e.g. what was merged)")
    parser.add_argument("--merge", action="store_true",
                        help="with --systems: rerun only those systems and replace their entries in the "
                             "existing <suite>.json (each entry records when it ran and the load)")
    parser.add_argument("--render", action="store_true",
                        help="only rewrite <suite>.md and .png from the existing <suite>.json")
    args = parser.parse_args()
    if args.mode == "prepare":
        return step_prepare(args.name, args.work)
    if args.mode == "eager":
        return step_eager(args.name, args.work, args.threads, args.warmup, args.iters, args.slow_iters)
    if args.mode == "et-export":
        return step_et_export(args.name, args.work, args.variant)
    if args.mode == "et-run":
        return step_et_run(args.name, args.work, args.variant, args.threads, args.warmup, args.iters,
                           args.slow_iters)

    smoke = args.iters < 10 or args.rounds < 3 or (args.systems and not args.merge) or args.models
    if smoke and args.results.resolve() == RESULTS.resolve():
        sys.exit("[bench-cpu-path] --iters < 10, --systems or --models are smoke runs: give --results "
                 "elsewhere (bench/results holds medians of >= 10 runs of every system)")
    args.pteron = str(args.build / "tools" / "cli" / "pteron")
    stem, names = SUITES[args.mode]
    if args.models:
        stem, names = f"{stem}-custom", args.models
    if args.render:
        doc = json.loads((args.results / f"{stem}.json").read_text())
        write_markdown(doc, args.results / f"{stem}.md")
        write_chart(doc, args.results / f"{stem}.png")
        return log(f"rewrote {args.results}/{stem}.{{md,png}}")
    start = time.perf_counter()
    priority = match_autogroup_nice()
    load_start = os.getloadavg()[0]
    models = {}
    with tempfile.TemporaryDirectory(prefix=f"pteron-bench-{stem}-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        args.calibration = calibrate(args.pteron, args.threads, work)
        for name in names:
            models[name] = bench_model(name, work, args)
    load = os.getloadavg()[0]
    doc = {"target": f"bench-{args.mode}", "executorch": "1.5.1", "threads": args.threads,
           "warmup": args.warmup, "iterations": args.iters, "slow_iterations": args.slow_iters,
           "rounds": args.rounds,
           "machine": (f"{platform.machine()}, {os.cpu_count()} cores, load average {load_start:.1f} at "
                       f"the start and {load:.1f} at the end, {priority}"),
           "commit": cli("git", "-C", REPO, "describe", "--always", "--dirty").stdout.strip(),
           "note": args.note, "seconds": round(time.perf_counter() - start, 1),
           "calibration": args.calibration, "models": models}
    if args.merge:
        old = json.loads((args.results / f"{stem}.json").read_text())
        for name, r in models.items():
            merged = {**old["models"][name]["systems"], **r["systems"]}
            # Keep the original order of systems.
            merged = {k: merged[k] for k in [*old["models"][name]["systems"], *r["systems"]] if k in merged}
            old["models"][name] = {"systems": merged, "goals": goals_of(name, merged)}
        old["merged"] = old.get("merged", []) + [{"systems": args.systems, "machine": doc["machine"],
                                                  "commit": doc["commit"], "note": args.note}]
        if args.note:
            old["note"] = (old.get("note", "") + " " + args.note).strip()
        doc = old
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / f"{stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
    write_markdown(doc, args.results / f"{stem}.md")
    write_chart(doc, args.results / f"{stem}.png")
    log(f"done in {doc['seconds']:.0f} s: {args.results}/{stem}.{{json,md,png}}")


if __name__ == "__main__":
    main()
