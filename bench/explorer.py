"""How fast `pteron explore` pages open in headless Chromium (make bench-explorer), and the
OPT-125M profile figures (issue 6).

For each program: write the page once, then open it RUNS times with `chromium --headless
--dump-dom`; report the median wall time from process start to DOM and the median time of the
page's own script (its `data-render-ms`), next to Chromium opening a blank page (the floor).

OPT-125M (unless --no-opt): its .pt2 (--opt-pt2; `make bench-opt` leaves one in bench/work/opt,
else it is exported here) compiled with `--backends xnnpack,portable` (the XNNPACK program: with
the optimized kernels listed, XNNPACK's cost rule leaves OPT's linears to them and no region is
left to profile), profiled with
`pteron profile --iters 10 --threads 2` (the wall time of each traced run next to the time no
event covers), summarised again by `pteron inspect --trace`, then explored with that trace
(timing overlay) and timed like the other pages.
Writes bench/results/explorer.{json,md} and opt125m_profile.{json,md}. Not part of `make test`.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from priority import match_autogroup_nice

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
OPT_WORK = REPO / "bench" / "work" / "opt"
OPT_BACKENDS = "xnnpack,portable"
PROGRAMS = [
    REPO / "tests" / "fixtures" / "executorch" / "mobilenet_v2.pte",
    REPO / "tests" / "fixtures" / "explorer" / "transformer_block_xnnpack.pte",
    REPO / "tests" / "fixtures" / "explorer" / "mlp_1500.pte",
]


def open_page(chromium: str, profile: Path, url: str) -> tuple[float, str]:
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           f"--user-data-dir={profile}", "--window-size=700,450", "--dump-dom", url]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return time.perf_counter() - start, done.stdout


def run(*cmd, **kw) -> str:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False, **kw)
    if done.returncode != 0:
        sys.exit(f"[explorer] {' '.join(map(str, cmd))} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def prepare_opt(args, work: Path) -> tuple[Path, Path]:
    """OPT-125M compiled for the best CPU path, and its profile: (program, trace prefix)."""
    pt2 = args.opt_pt2
    inputs = pt2.with_name(pt2.name.replace(".pt2", ".inputs.npz"))
    if not (pt2.exists() and inputs.exists()):
        print(f"[explorer] exporting OPT-125M to {pt2.parent} (once; make bench-opt reuses it)", flush=True)
        pt2.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "python")])}
        run(sys.executable, REPO / "bench" / "cpu_path.py", "prepare", "opt-125m", "--work", pt2.parent,
            env=env)
    pte = work / "opt-125m.pte"
    run(args.pteron, "compile", pt2, "-o", pte, "--backends", OPT_BACKENDS)
    trace = work / "opt-125m.trace"
    profile = ["profile", pte, "--inputs", inputs, "--iters", args.profile_iters, "--threads", args.threads,
               "-o", trace]
    summary = json.loads(run(args.pteron, *profile, "--json"))
    text = run(args.pteron, "inspect", pte, "--trace", f"{trace}.etdp", "--top", 12)
    inspected = json.loads(run(args.pteron, "inspect", pte, "--trace", f"{trace}.etdp", "--json"))
    doc = {"program": f"OPT-125M, pteron compile --backends {OPT_BACKENDS}",
           "commands": [f"pteron compile opt-125m.pt2 -o opt-125m.pte --backends {OPT_BACKENDS}",
                        f"pteron profile opt-125m.pte --inputs opt-125m.inputs.npz --iters {args.profile_iters} "
                        f"--threads {args.threads} -o opt-125m.trace",
                        "pteron inspect opt-125m.pte --trace opt-125m.trace.etdp"],
           "runs": summary["runs"], "wall_ms": summary["wall_ms"], "covered_ms": summary["covered_ms"],
           "uncovered_ms": summary["uncovered_ms"], "uncovered_share": summary["uncovered_share"],
           "inspect_uncovered_share": inspected["uncovered_share"],
           "dropped_events": summary.get("dropped_events", 0),
           "by_where": summary.get("by_where", []), "top_ops": summary["ops"][:12],
           "load_average": os.getloadavg()[0], "niceness": os.nice(0), "priority": args.priority}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "opt125m_profile.json").write_text(json.dumps(doc, indent=1) + "\n")
    goal = "met" if doc["uncovered_share"] < 0.05 else "NOT met"
    md = ["# OPT-125M profile (`make bench-explorer`, bench/explorer.py)", "",
          f"{doc['program']}; {args.threads} threads; {doc['runs']} traced runs after 2 warm-up; load "
          f"average {doc['load_average']:.1f}, {doc['priority']}.", "", "```"]
    md += ["$ " + c for c in doc["commands"][:2]]
    md += ["$ " + doc["commands"][2] + "   # first lines", *text.splitlines()[:24], "```", "",
           f"Time not covered by any event: {doc['uncovered_ms']:.3f} ms of {doc['wall_ms']:.1f} ms wall per run "
           f"({100 * doc['uncovered_share']:.2f}%; goal < 5%: {goal}); `inspect --trace` on the written "
           f"ETDump: {100 * doc['inspect_uncovered_share']:.2f}%. Dropped events: {doc['dropped_events']}."]
    (RESULTS / "opt125m_profile.md").write_text("\n".join(md) + "\n")
    print(f"[explorer] OPT-125M profile: wall {doc['wall_ms']:.1f} ms, not covered {doc['uncovered_ms']:.3f} ms "
          f"({100 * doc['uncovered_share']:.2f}%)", flush=True)
    return pte, trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pteron", default=str(REPO / "build" / "tools" / "cli" / "pteron"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--opt-pt2", type=Path, default=OPT_WORK / "opt-125m.pt2",
                        help="OPT-125M's .pt2 (with NAME.inputs.npz next to it); exported when missing")
    parser.add_argument("--no-opt", action="store_true", help="leave OPT-125M out")
    parser.add_argument("--profile-iters", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("programs", nargs="*", type=Path, default=PROGRAMS)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or sys.exit("no chromium: `make deps` installs it")
    args.priority = match_autogroup_nice()
    rows = []
    with tempfile.TemporaryDirectory(prefix="pteron-explorer-") as tmp:
        work = Path(tmp)
        pages = [(program, None) for program in args.programs]
        if not args.no_opt:
            pages.append(prepare_opt(args, work))
        blank = work / "blank.html"
        blank.write_text("<!doctype html><title>blank</title>")
        floor = statistics.median(open_page(chromium, work / "profile", blank.as_uri())[0]
                                  for _ in range(args.runs))
        print(f"[explorer] blank page: {floor:.2f} s", flush=True)
        for program, trace in pages:
            html = work / (program.stem + ".html")
            run(args.pteron, "explore", program, "-o", html, *(["--trace", f"{trace}.etdp"] if trace else []))
            walls, scripts = [], []
            for _ in range(args.runs):
                wall, dom = open_page(chromium, work / "profile", html.as_uri())
                walls.append(wall)
                scripts.append(float(re.search(r'data-render-ms="([\d.]+)"', dom).group(1)))
            data = json.loads(re.search(r'id="program-data">(.*?)</script>', html.read_text(), re.S).group(1))
            row = {"program": program.name + (" (with its profile trace)" if trace else ""),
                   "instructions": len(data["methods"][0]["instructions"]),
                   "page_bytes": html.stat().st_size,
                   "open_s_median": round(statistics.median(walls), 3),
                   "page_script_ms_median": round(statistics.median(scripts), 1),
                   "blank_page_s_median": round(floor, 3)}
            rows.append(row)
            print(f"[explorer] {row}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "explorer.json").write_text(json.dumps({"runs": args.runs, "programs": rows}, indent=1))
    lines = ["| program | instructions | page (KiB) | open in headless Chromium (median s) | page script "
             "(median ms) | blank page (median s) |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['program']} | {r['instructions']} | {r['page_bytes'] // 1024} | {r['open_s_median']} | "
              f"{r['page_script_ms_median']} | {r['blank_page_s_median']} |" for r in rows]
    lines += ["", f"Medians of {args.runs} opens each (`make bench-explorer`); load average "
              f"{os.getloadavg()[0]:.1f} at the end; {args.priority}."]
    (RESULTS / "explorer.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
