"""Arm figures: instructions per inference of pteron's NEON kernels against XNNPACK's aarch64
build, on the same programs, next to the same programs' x86 timings (issue 19, item 7).

    .venv/bin/python bench/arm_icount.py [--models mobilenet-v2 resnet-18 ...] [--cpu cortex-a76]

Per model (zoo, seeded random weights, fp32), three programs, compiled for the cortex-a76 target
(targets/cortex-a76.toml: a Raspberry Pi 5's core):
  - "XNNPACK (aarch64)": `--backends xnnpack,portable`, XNNPACK's aarch64 microkernels (Debian's
    arm64 libxnnpack, the build the aarch64 runtime links);
  - "pteron NEON": `--backends optimized,portable`, pteron's own kernels' NEON paths;
  - "pteron default": the target's default backends (XNNPACK, then the optimized kernels).
Each runs on the aarch64 runtime (`make pteron-aarch64`'s pteron-run) under `qemu-aarch64 -cpu
cortex-a76`, one thread, with tools/qemu_icount counting the guest instructions between the
markers pteron-run calls around execute(): the second of two runs is the figure (the first also
pays for one-time work such as XNNPACK's weight packing in its setup). The counts are exact and
repeatable and do not depend on the load; they are instructions, not cycles: a NEON FMA and a
scalar add count one each, and memory stalls count nothing.

Next to them, the same backend lists compiled for the host and timed with `pteron bench`, one
thread (the work the counts measure), alternating rounds, each run in its own process, with the
ISA, CPU time and load average. Every output is checked against PyTorch eager.
Writes bench/results/arm.{json,md,png}; the chart is drawn by `--chart-only` in the venv that has
matplotlib (.venv-et, passed as --chart-python).

`--int8` (make bench-arm BENCH_ARGS=--int8) counts int8 programs instead: each model quantized by
`pteron compile --quantize xnnpack` (16 seeded calibration samples, as bench-cpu-int8) and
compiled for XNNPACK's aarch64 int8 operators (`xnnpack,portable`) and for pteron's int8 kernel
library (`cortex-m,optimized,portable`: its NEON `sdot` host paths, kernels/cortex_m/host). The
aarch64 output of pteron's program must match its x86 output (the same integer arithmetic; a
float tail after the last dequantize may differ in its last bits); both are compared with eager.
No x86 timings (bench-cpu-int8 has them). Writes bench/results/arm_int8.{json,md}.
"""

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_path  # noqa: E402
from priority import match_autogroup_nice  # noqa: E402
from timing import median_of_rounds  # noqa: E402

REPO = cpu_path.REPO
RESULTS = REPO / "bench" / "results"
MODELS = ["ds-cnn", "mobilenet-v2", "resnet-18", "transformer-block", "opt-125m"]
XNNPACK = "XNNPACK (aarch64)"
CONFIGS = {XNNPACK: "xnnpack,portable", "pteron NEON": "optimized,portable", "pteron default": None}
INT8_CONFIGS = {XNNPACK: "xnnpack,portable", "pteron int8 kernels (NEON sdot)": "cortex-m,optimized,portable"}
INT8_MODELS = ["ds-cnn", "mobilenet-v2", "resnet-18"]
TOLERANCE = 1e-4  # max |diff| / max |eager|, float32 (as bench-cpu)
INT8_TOLERANCE = 0.5  # relative L2 error against eager: catches a broken program, not quantization
X86_TOLERANCE = 1e-6  # max |diff| / max |x86| between pteron's int8 program on aarch64 and on x86
ICOUNT = re.compile(r"icount: inference=(\d+) total=(\d+) marks=(\d+)")


def log(msg: str) -> None:
    print(f"[bench-arm] {msg}", flush=True)


def prepare(name: str, work: Path) -> np.ndarray:
    """The .pt2, the example inputs and PyTorch eager's output (the reference)."""
    import torch

    import models

    if not (work / f"{name}.pt2").exists():
        cpu_path.step_prepare(name, work)
    model, inputs = models.build(name)
    with torch.no_grad():
        return model(*inputs).numpy()


def compile_program(args, name: str, work: Path, target: str, backends: str | None) -> Path:
    tag = "int8." if args.int8 else ""
    pte = work / f"{name}.{target}.{tag}{(backends or 'default').replace(',', '+')}.pte"
    command = [args.pteron, "compile", work / f"{name}.pt2", "-o", pte, "--target", target]
    if args.int8:
        command += ["--quantize", "xnnpack", "--calibration", work / f"{name}.cal.npz"]
    proc = cpu_path.cli(*command, *(["--backends", backends] if backends else []))
    if proc.returncode != 0:
        raise RuntimeError(f"{name}: compile for {target} ({backends or 'default'}): {proc.stderr.strip()}")
    return pte


def count_instructions(args, pte: Path, name: str, work: Path) -> tuple[int, np.ndarray]:
    """Guest instructions of the second of two runs under qemu-aarch64, and the outputs."""
    out = pte.with_suffix(".aarch64.out.npz")
    lib = args.sysroot / "usr" / "lib" / "aarch64-linux-gnu"
    plugin = f"{args.plugin},begin_symbol=pteron_icount_begin,end_symbol=pteron_icount_end"
    command = ["qemu-aarch64", "-cpu", args.cpu, "-L", "/usr/aarch64-linux-gnu", "-E", f"LD_LIBRARY_PATH={lib}",
               "-plugin", plugin, "-d", "plugin", args.runner, pte, "--inputs", work / f"{name}.inputs.npz",
               "--outputs", out, "--iters", "2", "--threads", "1"]
    proc = cpu_path.cli(*command)
    found = ICOUNT.search(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not found:
        raise RuntimeError(f"{pte.name} under qemu-aarch64: {(proc.stderr.strip().splitlines() or ['no count'])[-1]}")
    if int(found.group(3)) != 2:
        raise RuntimeError(f"{pte.name}: {found.group(3)} marker pairs, expected 2 (one per run)")
    return int(found.group(1)), np.load(out)["output_0"]


def x86_round(args, pte: Path, name: str, work: Path) -> dict:
    proc = cpu_path.cli(args.pteron, "bench", pte, "--inputs", work / f"{name}.inputs.npz", "--threads", 1,
                        "--warmup", args.warmup, "--iters", args.iters, "--json")
    if proc.returncode != 0:
        raise RuntimeError(f"{pte.name}: pteron bench: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def bench_model(name: str, work: Path, args) -> dict:
    log(f"{name}: export and PyTorch eager reference")
    reference = prepare(name, work)
    systems = {}
    for label, backends in CONFIGS.items():
        pte = compile_program(args, name, work, "cortex-a76", backends)
        t = time.perf_counter()
        instructions, output = count_instructions(args, pte, name, work)
        error = cpu_path.rel_error(output, reference)
        if error > TOLERANCE:
            raise RuntimeError(f"{name}: {label} on aarch64: rel. error {error:.2e} > {TOLERANCE}")
        systems[label] = {"backends": backends or "target default", "aarch64_instructions": instructions,
                          "aarch64_rel_error": error, "aarch64_program_bytes": pte.stat().st_size,
                          "delegation": cpu_path.pteron_delegation(args.pteron, pte),
                          "qemu_seconds": round(time.perf_counter() - t, 1)}
        log(f"{name}: {label}: {instructions / 1e6:.2f} M instructions per inference "
            f"(rel. error {error:.1e}, {systems[label]['qemu_seconds']} s under qemu)")
    hosts = {label: compile_program(args, name, work, "host", backends) for label, backends in CONFIGS.items()}
    rounds = {label: [] for label in hosts}
    for r in range(args.rounds):
        for label, pte in hosts.items():
            rounds[label].append(x86_round(args, pte, name, work))
    for label, pte in hosts.items():
        systems[label]["x86"] = median_of_rounds(rounds[label])
        out = pte.with_suffix(".x86.out.npz")
        proc = cpu_path.cli(args.pteron, "run", pte, "--inputs", work / f"{name}.inputs.npz", "--outputs", out)
        if proc.returncode != 0:
            raise RuntimeError(f"{pte.name}: pteron run: {proc.stderr.strip()}")
        systems[label]["x86"]["rel_error"] = cpu_path.rel_error(np.load(out)["output_0"], reference)
        log(f"{name}: {label}: x86 {systems[label]['x86']['median_ms']:.3f} ms, 1 thread "
            f"(rounds {systems[label]['x86']['round_medians_ms']})")
    return systems


def bench_model_int8(name: str, work: Path, args) -> dict:
    """Instructions per inference of each int8 program on aarch64, and the checks (module doc)."""
    log(f"{name}: export, calibration samples and PyTorch eager reference")
    reference = prepare(name, work)
    cpu_path.write_calibration(work, name)
    systems = {}
    for label, backends in INT8_CONFIGS.items():
        pte = compile_program(args, name, work, "cortex-a76", backends)
        t = time.perf_counter()
        instructions, output = count_instructions(args, pte, name, work)
        error = float(np.linalg.norm(output - reference) / np.linalg.norm(reference))
        if error > INT8_TOLERANCE:
            raise RuntimeError(f"{name}: {label} on aarch64: rel. L2 error {error:.2f} > {INT8_TOLERANCE}")
        systems[label] = {"backends": backends, "aarch64_instructions": instructions, "aarch64_rel_l2_error": error,
                          "aarch64_program_bytes": pte.stat().st_size,
                          "delegation": cpu_path.pteron_delegation(args.pteron, pte),
                          "qemu_seconds": round(time.perf_counter() - t, 1)}
        if backends.startswith("cortex-m"):
            host = compile_program(args, name, work, "host", backends)
            out = host.with_suffix(".x86.out.npz")
            proc = cpu_path.cli(args.pteron, "run", host, "--inputs", work / f"{name}.inputs.npz", "--outputs", out,
                                "--threads", 1)
            if proc.returncode != 0:
                raise RuntimeError(f"{host.name}: pteron run: {proc.stderr.strip()}")
            x86 = np.load(out)["output_0"]
            # The int8 layers give the same bytes on both; a float tail after the last dequantize
            # (a pool, a softmax) may differ in its last bits between the two CPUs' kernels.
            diff = float(np.abs(x86 - output).max() / max(float(np.abs(x86).max()), 1e-30))
            if diff > X86_TOLERANCE:
                raise RuntimeError(f"{name}: {label}: the aarch64 output differs from the x86 one ({diff:.1e})")
            systems[label]["aarch64_vs_x86_max_rel_diff"] = diff
        log(f"{name}: {label}: {instructions / 1e6:.2f} M instructions per inference "
            f"(rel. L2 error vs eager {error:.3f}, {systems[label]['qemu_seconds']} s under qemu)")
    return systems


def write_markdown_int8(doc: dict, path: Path) -> None:
    text = ["# Arm figures, int8: pteron's int8 kernels (NEON sdot) vs XNNPACK's aarch64 build "
            "(make bench-arm BENCH_ARGS=--int8)", "",
            f"bench/arm_icount.py --int8. Instructions per inference under `qemu-aarch64 -cpu {doc['cpu']}` "
            f"({doc['qemu']}, tools/qemu_icount; the second of two runs, one thread, exact and load independent) "
            "of each model quantized by `pteron compile --quantize xnnpack` (16 seeded calibration samples) and "
            "compiled with `--target cortex-a76` for XNNPACK's int8 operators (Debian's arm64 build, "
            f"{doc['xnnpack']}) and for pteron's int8 kernel library (kernels/cortex_m/host). pteron's aarch64 "
            f"output is within {X86_TOLERANCE} (max |diff| / max |x86|) of its x86 output (its int8 layers give "
            "the same bytes; a float tail may differ in the last bits); the error column is the relative L2 distance from "
            "PyTorch eager in float32 (random weights: it says how far quantization moved the output).", "",
            "Instructions are not cycles. A ratio below 1 means fewer instructions than XNNPACK.", ""]
    for name, systems in doc["models"].items():
        text += [f"## {name}", "", "| program | aarch64 M instructions | vs XNNPACK | rel. L2 error vs eager | "
                 "runs on |", "|---|---:|---:|---:|---|"]
        for label, s in systems.items():
            runs_on = ", ".join(f"{k} {v}" for k, v in sorted(s["delegation"]["runs_on"].items()))
            text.append(f"| {label} | {s['aarch64_instructions'] / 1e6:.2f} | "
                        f"{ratio(systems, label, lambda v: v['aarch64_instructions']):.2f} | "
                        f"{s['aarch64_rel_l2_error']:.3f} | {runs_on} |")
        text.append("")
    text += [f"pteron at {doc['commit']}; {doc['seconds']:.0f} s in all.", ""]
    path.write_text("\n".join(text))


def ratio(systems: dict, label: str, key) -> float:
    return key(systems[label]) / key(systems[XNNPACK])


def write_markdown(doc: dict, path: Path) -> None:
    text = ["# Arm figures: pteron's NEON kernels vs XNNPACK's aarch64 build (make bench-arm)", "",
            f"bench/arm_icount.py. Instructions per inference under `qemu-aarch64 -cpu {doc['cpu']}` "
            f"({doc['qemu']}, tools/qemu_icount; the second of two runs, one thread, exact and load independent), "
            "programs compiled with `--target cortex-a76`; XNNPACK is Debian's arm64 build "
            f"({doc['xnnpack']}). Next to them the same backend lists compiled for this x86 host, "
            f"`pteron bench`, 1 thread, {doc['rounds']} alternating rounds of {doc['warmup']} warm-up + "
            f"{doc['iterations']} timed runs, each in its own process: medians of the rounds' medians. "
            f"Outputs within {TOLERANCE} (max |diff| / max |eager|) of PyTorch eager on both machines.", "",
            "Instructions are not cycles: one NEON FMA counts as one, as does a scalar add, and cache misses "
            "count nothing. A ratio below 1 means fewer instructions than XNNPACK.", ""]
    for name, systems in doc["models"].items():
        text += [f"## {name}", "",
                 "| program | aarch64 M instructions | vs XNNPACK | x86 ms (1 thread) | x86 CPU ms | vs XNNPACK | "
                 "ISA | load | runs on (aarch64 program) |",
                 "|---|---:|---:|---:|---:|---:|---|---:|---|"]
        for label, s in systems.items():
            x = s["x86"]
            runs_on = ", ".join(f"{k} {v}" for k, v in sorted(s["delegation"]["runs_on"].items()))
            text.append(
                f"| {label} | {s['aarch64_instructions'] / 1e6:.2f} | "
                f"{ratio(systems, label, lambda v: v['aarch64_instructions']):.2f} | {x['median_ms']:.3f} | "
                f"{x.get('median_cpu_ms', float('nan')):.3f} | "
                f"{ratio(systems, label, lambda v: v['x86']['median_ms']):.2f} | {x.get('isa', '?')} | "
                f"{x['max_load_average']} | {runs_on} |")
        text.append("")
    text += [f"Machine: {doc['machine']}, load average {doc['load_average_start']:.1f} at the start and "
             f"{doc['load_average_end']:.1f} at the end, {doc['priority']}; pteron at {doc['commit']}; "
             f"{doc['seconds']:.0f} s in all.", ""]
    path.write_text("\n".join(text))


def write_chart(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["models"])
    labels = list(CONFIGS)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    width = 0.8 / len(labels)
    for ax, (title, key) in zip(axes, [("aarch64 instructions (vs XNNPACK)", lambda s: s["aarch64_instructions"]),
                                       ("x86 time, 1 thread (vs XNNPACK)", lambda s: s["x86"]["median_ms"])]):
        for i, label in enumerate(labels):
            values = [ratio(doc["models"][n], label, key) for n in names]
            ax.bar([j + i * width for j in range(len(names))], values, width, label=label)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks([j + width * (len(labels) - 1) / 2 for j in range(len(names))], names, rotation=15)
        ax.set_title(title + ", lower is better")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def git_commit() -> str:
    proc = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False)
    return proc.stdout.strip() or "unknown"


def qemu_version() -> str:
    proc = subprocess.run(["qemu-aarch64", "--version"], capture_output=True, text=True, check=False)
    return (proc.stdout.splitlines() or ["qemu-aarch64 (unknown version)"])[0]


def xnnpack_version(sysroot: Path) -> str:
    debs = sorted((sysroot / "debs").glob("libxnnpack0_*_arm64.deb"))
    return debs[0].name.split("_")[1] if debs else "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", nargs="+", help=f"default {MODELS} (--int8: {INT8_MODELS})")
    parser.add_argument("--cpu", default="cortex-a76", help="qemu-aarch64 -cpu (cortex-a76: a Raspberry Pi 5)")
    parser.add_argument("--build", type=Path, default=REPO / "build", help="the host build (pteron, qemu_icount)")
    parser.add_argument("--aarch64-build", type=Path, default=REPO / "build-aarch64")
    parser.add_argument("--sysroot", type=Path, default=REPO / "build-aarch64-sysroot")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the x86 timings")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--work", type=Path, help="folder for .pt2/.pte files (default: temp)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--chart-python", help="a python with matplotlib (.venv-et) to draw arm.png")
    parser.add_argument("--chart-only", action="store_true", help="only draw arm.png from arm.json")
    parser.add_argument("--int8", action="store_true", help="int8 programs, instruction counts only (arm_int8.*)")
    args = parser.parse_args()
    default_models = INT8_MODELS if args.int8 else MODELS
    args.models = args.models or default_models
    if args.chart_only:
        return write_chart(json.loads((args.results / "arm.json").read_text()), args.results / "arm.png")
    args.pteron = str(args.build / "tools" / "cli" / "pteron")
    args.plugin = str(args.build / "tools" / "qemu_icount" / "libqemu_icount.so")
    args.runner = str(args.aarch64_build / "tools" / "run" / "pteron-run")
    for path, how in [(args.pteron, "make build"), (args.plugin, "make build"), (args.runner, "make pteron-aarch64")]:
        if not Path(path).exists():
            sys.exit(f"[bench-arm] {path} is missing: {how}")
    if args.models != default_models and args.results.resolve() == RESULTS.resolve():
        sys.exit("[bench-arm] --models is a partial run: give --results elsewhere")
    start = time.perf_counter()
    if args.int8:  # instruction counts only: exact whatever the load
        with tempfile.TemporaryDirectory(prefix="pteron-bench-arm-") as tmp:
            work = args.work or Path(tmp)
            work.mkdir(parents=True, exist_ok=True)
            models = {name: bench_model_int8(name, work, args) for name in args.models}
        doc = {"target": "bench-arm --int8", "cpu": args.cpu, "qemu": qemu_version(),
               "xnnpack": xnnpack_version(args.sysroot), "models": models, "commit": git_commit(),
               "seconds": round(time.perf_counter() - start, 1)}
        args.results.mkdir(parents=True, exist_ok=True)
        (args.results / "arm_int8.json").write_text(json.dumps(doc, indent=1))
        write_markdown_int8(doc, args.results / "arm_int8.md")
        return log(f"done in {doc['seconds']:.0f} s: {args.results}/arm_int8.{{json,md}}")
    priority = match_autogroup_nice()
    load_start = os.getloadavg()[0]
    if load_start > os.cpu_count():
        sys.exit(f"[bench-arm] load average {load_start:.1f} is above the {os.cpu_count()} cores: "
                 "the x86 timings would not be honest; rerun on a quieter machine")
    with tempfile.TemporaryDirectory(prefix="pteron-bench-arm-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        models = {name: bench_model(name, work, args) for name in args.models}
    doc = {"target": "bench-arm", "cpu": args.cpu, "qemu": qemu_version(),
           "xnnpack": xnnpack_version(args.sysroot), "rounds": args.rounds,
           "warmup": args.warmup, "iterations": args.iters, "models": models, "commit": git_commit(),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores", "priority": priority,
           "load_average_start": load_start, "load_average_end": os.getloadavg()[0],
           "seconds": round(time.perf_counter() - start, 1)}
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "arm.json").write_text(json.dumps(doc, indent=1))
    write_markdown(doc, args.results / "arm.md")
    chart = subprocess.run([args.chart_python, __file__, "--chart-only", "--results", args.results],
                           capture_output=True, text=True, check=False) if args.chart_python else None
    if not chart or chart.returncode != 0:
        log("no chart (matplotlib lives in .venv-et): " + (chart.stderr.strip()[-300:] if chart else "no --chart-python"))
    log(f"wrote {args.results}/arm.{{json,md,png}} ({doc['seconds']:.0f} s)")


if __name__ == "__main__":
    main()
