"""How fast `pteron explore` pages open in headless Chromium (make bench-explorer).

For each program: write the page once, then open it RUNS times with `chromium --headless
--dump-dom`; report the median wall time from process start to DOM and the median time of the
page's own script (its `data-render-ms`), next to Chromium opening a blank page (the floor).
Writes bench/results/explorer.json and explorer.md. Not part of `make test` (timings).
"""

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pteron", default=str(REPO / "build" / "tools" / "cli" / "pteron"))
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("programs", nargs="*", type=Path, default=PROGRAMS)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or sys.exit("no chromium: `make deps` installs it")
    rows = []
    with tempfile.TemporaryDirectory(prefix="pteron-explorer-") as tmp:
        work = Path(tmp)
        blank = work / "blank.html"
        blank.write_text("<!doctype html><title>blank</title>")
        floor = statistics.median(open_page(chromium, work / "profile", blank.as_uri())[0]
                                  for _ in range(args.runs))
        print(f"[explorer] blank page: {floor:.2f} s", flush=True)
        for program in args.programs:
            html = work / (program.stem + ".html")
            subprocess.run([args.pteron, "explore", str(program), "-o", str(html)], check=True,
                           capture_output=True)
            walls, scripts = [], []
            for _ in range(args.runs):
                wall, dom = open_page(chromium, work / "profile", html.as_uri())
                walls.append(wall)
                scripts.append(float(re.search(r'data-render-ms="([\d.]+)"', dom).group(1)))
            data = json.loads(re.search(r'id="program-data">(.*?)</script>', html.read_text(), re.S).group(1))
            row = {"program": program.name,
                   "instructions": len(data["methods"][0]["instructions"]),
                   "open_s_median": round(statistics.median(walls), 3),
                   "page_script_ms_median": round(statistics.median(scripts), 1),
                   "blank_page_s_median": round(floor, 3)}
            rows.append(row)
            print(f"[explorer] {row}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "explorer.json").write_text(json.dumps({"runs": args.runs, "programs": rows}, indent=1))
    lines = ["| program | instructions | open in headless Chromium (median s) | page script (median ms) "
             "| blank page (median s) |", "|---|---|---|---|---|"]
    lines += [f"| {r['program']} | {r['instructions']} | {r['open_s_median']} | "
              f"{r['page_script_ms_median']} | {r['blank_page_s_median']} |" for r in rows]
    (RESULTS / "explorer.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
