"""The default program against every explicit backend list, on every zoo model that exports
quickly and on small nets of families outside the zoo (bench/model_families.py), fp32 and int8
(make bench-default; issue 19: the host's default within 1.15x of the fastest explicit list on
every model).

pteron tune runs first (its calibration is what the default compiles with); then each model is
compiled with the target's default backends and with each explicit list, and the programs are
timed with `pteron bench` in alternating rounds, each run in its own process. Figures are the
median of the rounds' medians; the load average, the ISA and the CPU time are recorded next to
them. Writes bench/results/default_choice.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

import model_families  # noqa: E402

FP32_LISTS = ["xnnpack,optimized,portable", "optimized,portable"]
INT8_LISTS = ["xnnpack,cortex-m,optimized,portable", "cortex-m,optimized,portable",
              "xnnpack,optimized,portable"]
# The zoo's quick models, then small nets of families outside it (bench/model_families.py).
MODELS = ["mobilenet-v2", "resnet-18", "efficientnet-b0", "mobilenet-v3-large", "mobilenet-v1-025", "resnet-8",
          "ds-cnn", "digits-cnn", "fc-autoencoder", "transformer-block", "convnext", "densenet", "audio-1d",
          "tcn"]
INT8_MODELS = ["mobilenet-v2", "resnet-18", "efficientnet-b0", "mobilenet-v1-025", "resnet-8",
               "ds-cnn", "digits-cnn"]
GOAL = 1.15
ROUND_MS = 100.0  # timed runs per round and program: about this long
MAX_ITERS = 2000


def run(cmd: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"bench-default: {' '.join(map(str, cmd[:3]))}: {r.stderr.strip()[-300:]}")
    return r


def plan(cli: Path, pte: Path, env: dict) -> str:
    """What a program runs where: per op, its nodes' engines, and the delegate regions with their
    sizes (the file's other bytes, such as the backend list it was compiled for, differ between
    identical plans)."""
    info = json.loads(run([cli, "inspect", pte, "--delegation", "--json"], env).stdout)
    regions = [(r["backend"], r["nodes"], r["bytes_in"], r["bytes_out"]) for r in info["regions"]["list"]]
    return json.dumps([info["ops"], regions, info["instructions"]], sort_keys=True)


def samples(model: str, folder: Path) -> Path:
    """16 seeded calibration samples shaped like the zoo model's inputs."""
    from pteron import zoo

    _, inputs = zoo.get(model)
    rng = np.random.default_rng(0)
    path = folder / f"{model}.samples.npz"
    np.savez(path, **{f"input_{i}": np.stack([rng.standard_normal(tuple(x.shape)).astype(np.float32)
                                              for _ in range(16)]) for i, x in enumerate(inputs)})
    return path


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--out", default=str(REPO / "bench" / "results" / "default_choice"))
    args = p.parse_args()
    from pteron import zoo

    cli = Path(args.build) / "tools" / "cli" / "pteron"
    work = REPO / "bench" / "work" / "default"  # kept between runs, as bench/README.md says
    work.mkdir(parents=True, exist_ok=True)
    calibration = work / "calibration.json"
    started = time.time()
    print(f"[bench-default] pteron tune --threads {args.threads}", flush=True)
    run([cli, "tune", "--threads", args.threads, "--output", calibration])
    env = {**os.environ, "PTERON_CALIBRATION": str(calibration)}
    load_start = os.getloadavg()[0]
    rows = []
    for model in args.models.split(","):
        pt2 = work / f"{model}.pt2"
        if model in model_families.FAMILIES:
            model_families.export(model, pt2)
        else:
            zoo.export(model, pt2, log=lambda _m: None)
        for precision in ("fp32", "int8"):
            if precision == "int8" and model not in INT8_MODELS:
                continue
            extra = ["--quantize", "xnnpack", "--calibration", samples(model, work)] \
                if precision == "int8" else []
            lists = ["default"] + (INT8_LISTS if precision == "int8" else FP32_LISTS)
            programs = {}
            for backends in lists:
                pte = work / f"{model}.{precision}.{backends}.pte"
                choose = [] if backends == "default" else ["--backends", backends]
                run([cli, "compile", pt2, "-o", pte, *extra, *choose], env)
                programs[backends] = pte
            # Each round of a program takes about ROUND_MS (at least --iters runs): twenty runs of
            # a 0.2 ms program measured the same program 1.2x apart in one sweep here.
            iters = {}
            for backends, pte in programs.items():
                probe = json.loads(run([cli, "bench", pte, "--threads", args.threads, "--iters", 5,
                                        "--json"]).stdout)["median_ms"]
                iters[backends] = int(min(MAX_ITERS, max(args.iters, ROUND_MS / max(probe, 1e-3))))
            rounds = {b: [] for b in lists}
            for k in range(args.rounds):
                order = list(programs.items()) if k % 2 == 0 else list(programs.items())[::-1]
                for backends, pte in order:
                    r = run([cli, "bench", pte, "--threads", args.threads, "--iters", iters[backends],
                             "--json"])
                    rounds[backends].append(json.loads(r.stdout))
            times = {b: statistics.median(x["median_ms"] for x in rs) for b, rs in rounds.items()}
            cpu = {b: statistics.median(x["median_cpu_ms"] for x in rs) for b, rs in rounds.items()}
            fastest = min((b for b in lists if b != "default"), key=times.get)
            row = {"model": model, "precision": precision, "median_ms": times, "cpu_ms": cpu,
                   "fastest_list": fastest, "default_over_fastest": times["default"] / times[fastest],
                   # The default compiled to the fastest list's plan: their ratio is the machine's noise.
                   "same_plan": plan(cli, programs["default"], env) == plan(cli, programs[fastest], env),
                   "isa": rounds["default"][0].get("isa"),
                   "max_load_average": max(x.get("load_average_1m", 0.0)
                                           for rs in rounds.values() for x in rs)}
            rows.append(row)
            print(f"[bench-default] {model} {precision}: default {times['default']:.3f} ms, fastest "
                  f"list {fastest} {times[fastest]:.3f} ms: {row['default_over_fastest']:.2f}x"
                  + (" (the same plan)" if row["same_plan"] else ""), flush=True)
    result = {"threads": args.threads, "rounds": args.rounds, "iters": args.iters,
              "pteron_isa": os.environ.get("PTERON_ISA", ""),
              "load_average_start": load_start, "load_average_end": os.getloadavg()[0],
              "calibration": json.loads(calibration.read_text()), "rows": rows,
              "goal": GOAL, "seconds": round(time.time() - started)}
    out = Path(args.out)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown(result))
    print(f"[bench-default] done in {result['seconds']} s: {out}.{{json,md}}")


def markdown(r: dict) -> str:
    worst = max(row["default_over_fastest"] for row in r["rows"])
    lines = [
        "# The default program against every explicit backend list (make bench-default)",
        "",
        f"bench/default_choice.py: {r['threads']} threads, {r['rounds']} alternating rounds (every "
        f"other one in reverse order) of at least {r['iters']} timed runs per program, about "
        f"{ROUND_MS:.0f} ms of them, each in its own process; medians of the rounds' "
        f"medians. Load average {r['load_average_start']:.1f} at the start, "
        f"{r['load_average_end']:.1f} at the end. The default compiles with the calibration "
        f"`pteron tune` measured at the start ({r['calibration']['machine']}); int8: pteron's "
        "`--quantize xnnpack`, 16 seeded samples."
        + (f" PTERON_ISA={r['pteron_isa']}: pteron's own kernels (and the calibration) at that "
           "level; Debian's XNNPACK picks its own ISA." if r.get("pteron_isa") else ""),
        "",
        "| model | precision | default ms | fastest explicit list | its ms | default / fastest | "
        "same plan | default CPU ms | ISA | max load |",
        "|---|---|---:|---|---:|---:|---|---:|---|---:|",
    ]
    for row in r["rows"]:
        f = row["fastest_list"]
        lines.append(
            f"| {row['model']} | {row['precision']} | {row['median_ms']['default']:.3f} | `{f}` | "
            f"{row['median_ms'][f]:.3f} | {row['default_over_fastest']:.2f}x | "
            f"{'yes' if row.get('same_plan') else 'no'} | "
            f"{row['cpu_ms']['default']:.3f} | {row['isa']} | {row['max_load_average']:.1f} |")
    differ = [row["default_over_fastest"] for row in r["rows"] if not row.get("same_plan")]
    lines += ["", f"Goal: the default within {r['goal']}x of the fastest explicit list on every "
              f"model: worst {worst:.2f}x, {'met' if worst <= r['goal'] else 'not met'}"
              + (f"; where the default's plan differs from the fastest list's, worst {max(differ):.2f}x"
                 if differ else "")
              + ". 'same plan': the default runs every node on the engine the fastest list does, so "
              "their ratio is this machine's noise between runs of one program.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
