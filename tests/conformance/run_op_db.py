"""Runs the op-database conformance suite (op_db_suite.py) and writes the coverage tables.

    python tests/conformance/run_op_db.py                       # full: bench/results/op_coverage.{md,json}
    python tests/conformance/run_op_db.py --subset --out DIR    # the fixed subset `make test` runs

Cases (OpInfo x dtype) go to worker processes (--jobs, default 2) that import the op database
once and keep pteron loaded; a worker that crashes or runs past --timeout is replaced and the
case it held is recorded as "wrong" (crash) or "timeout", so one bad kernel cannot stop the run
or hide the cases after it. Exit status 1 when any result is wrong or timed out.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import zlib
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

SUBSET_DTYPES = ("float32",)
SUBSET_FRACTION = 12  # the subset: OpInfos whose crc32(name) % 12 == 0 (60 of 702), float32 only
# OpInfos the full run once found wrong, always in the subset so they stay fixed: empty uint8
# indices of another rank (gather, scatter), 3-D convolutions (the portable kernel refused 5-D
# inputs at run time after the compiler accepted them), 0-D permute on Vulkan, addr's NaN sample
# on XNNPACK (x86's clamp turned NaN into -inf).
SUBSET_REGRESSIONS = ("gather", "scatter", "nn.functional.conv3d", "nn.functional.conv_transpose3d",
                      "permute", "addr")
DTYPE_SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "int64": "i64", "int32": "i32",
               "int8": "i8", "uint8": "u8", "bool": "bool", "int16": "i16", "complex64": "c64"}


def _load_ops():
    from torch.testing._internal.common_methods_invocations import op_db

    import op_db_suite

    ops = {}
    for op in op_db:
        ops.setdefault(op_db_suite.case_id(op), op)
    return ops


def _worker(conn, paths):
    import torch

    import op_db_suite
    import pteron_native

    torch.manual_seed(0)
    if hasattr(pteron_native, "set_num_threads"):
        pteron_native.set_num_threads(1)
    ops = _load_ops()
    conn.send("ready")
    while True:
        task = conn.recv()
        if task is None:
            return
        cid, dtype_names = task
        torch.manual_seed(zlib.crc32(cid.encode()))
        started = time.monotonic()
        try:
            result = op_db_suite.run_op(ops[cid], [getattr(torch, d) for d in dtype_names], paths)
        except Exception as e:  # noqa: BLE001 - torch's side (pteron's errors are results already)
            reason = f"suite: {type(e).__name__}: {str(e).strip().splitlines()[0][:200] if str(e).strip() else ''}"
            result = {d: {"skip": reason} for d in dtype_names}
        result["seconds"] = round(time.monotonic() - started, 3)
        conn.send(result)


class _Worker:
    def __init__(self, ctx, paths):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child, paths), daemon=True)
        self.proc.start()
        child.close()
        self.task = None
        self.started = 0.0
        self.ready = False

    def kill(self):
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join()


def select_cases(subset: bool, dtypes: list[str] | None, only: list[str] | None):
    import torch

    import op_db_suite

    ops = _load_ops()
    cases = []
    for cid in sorted(ops):
        if only and cid not in only and ops[cid].name not in only:
            continue
        if (subset and not only and zlib.crc32(cid.encode()) % SUBSET_FRACTION != 0
                and cid not in SUBSET_REGRESSIONS):
            continue
        want = [getattr(torch, d) for d in (dtypes or (SUBSET_DTYPES if subset else
                                                       [str(t).removeprefix("torch.") for t in op_db_suite.FULL_DTYPES]))]
        supported = tuple(str(d).removeprefix("torch.") for d in op_db_suite.dtypes_of(ops[cid], want))
        if supported:
            cases.append((cid, supported))
    return cases


def run(cases, paths, jobs: int, timeout: float, log=print, checkpoint=None):
    ctx = mp.get_context("spawn")
    pending = list(cases)
    results = {}
    workers = [_Worker(ctx, paths) for _ in range(min(jobs, max(1, len(pending))))]
    done = 0
    while pending or any(w.task for w in workers):
        for i, w in enumerate(workers):
            if w.task is None and pending and w.ready:
                w.task = pending.pop(0)
                w.started = time.monotonic()
                w.conn.send(w.task)
        ready = mp.connection.wait([w.conn for w in workers] + [w.proc.sentinel for w in workers], timeout=1.0)
        now = time.monotonic()
        for i, w in enumerate(workers):
            if w.conn in ready:
                try:
                    msg = w.conn.recv()
                except (EOFError, OSError):
                    msg = None
                if msg == "ready":
                    w.ready = True
                    continue
                if msg is not None and w.task is not None:
                    seconds = msg.pop("seconds", None)
                    for dtype, r in msg.items():
                        r["op_seconds"] = seconds
                        results[(w.task[0], dtype)] = r
                    done += 1
                    if done % 50 == 0:
                        log(f"  {done}/{len(cases)} operators")
                        if checkpoint:
                            checkpoint(results, done)
                    w.task = None
                    continue
            dead = not w.proc.is_alive()
            late = w.task is not None and now - w.started > timeout
            if dead or late:
                if w.task is not None:
                    kind = "timeout" if late and not dead else "wrong"
                    why = (f"ran past {timeout:.0f} s" if kind == "timeout"
                           else f"worker died (exit code {w.proc.exitcode}) during the case")
                    for dtype in w.task[1]:
                        results[(w.task[0], dtype)] = {
                            "paths": {p: {"outcome": kind, "reason": why} for p in paths}, "crashed": True}
                    done += 1
                elif dead and not w.ready:
                    raise RuntimeError(f"worker failed to start (exit code {w.proc.exitcode})")
                w.kill()
                workers[i] = _Worker(ctx, paths)
    for w in workers:
        try:
            w.conn.send(None)
        except OSError:
            pass
        w.proc.join(timeout=5)
        w.kill()
    return results


def _cell(per_dtype: dict[str, dict], path: str) -> str:
    """Outcomes of one op on one path across dtypes, grouped: 'pass f32 i64; refused bool: why'."""
    groups = defaultdict(list)
    for dtype, r in per_dtype.items():
        if "skip" in r:
            continue
        p = r["paths"].get(path)
        if p is None:
            continue
        key = p["outcome"] if p["outcome"] == "pass" else f"{p['outcome']}: {p.get('reason', '')[:90]}"
        groups[key].append(DTYPE_SHORT.get(dtype, dtype))
    parts = []
    for key in sorted(groups, key=lambda k: (not k.startswith("pass"), k)):
        outcome, _, why = key.partition(": ")
        parts.append(f"{outcome} {' '.join(groups[key])}" + (f": {why}" if why else ""))
    return "; ".join(parts).replace("|", "\\|")


def _load_list(name):
    out = []
    with open(os.path.join(HERE, name)) as f:
        for line in f:
            line = line.split("#", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if line:
                out.append(line)
    return out


def _left_out():
    reasons = {}
    with open(os.path.join(HERE, "portable_left_out.txt")) as f:
        for line in f:
            if line.strip() and not line.lstrip().startswith("#"):
                # "op: why" split at the first ": ", not the first ":": names such as
                # et_copy::_h2d_copy.out carry a namespace separator.
                op, _, why = line.partition(": ")
                reasons[op.strip()] = why.strip()
    return reasons


def executorch_table(results):
    """ExecuTorch's portable list against pteron's portable kernels and the suite's results."""
    import pteron_native

    portable = {n for n in pteron_native.registered_kernels() if "portable" in pteron_native.kernel_libraries(n)}
    verified, wrong = set(), set()
    for r in results.values():
        p = r.get("paths", {}).get("portable")
        if not p:
            continue
        (verified if p["outcome"] == "pass" else wrong if p["outcome"] == "wrong" else set()).update(
            p.get("kernels", []))
    left_out = _left_out()
    rows = []
    for name in _load_list("executorch_portable_ops.txt"):
        kernel = name if "::" in name else f"aten::{name}"
        if name in left_out:
            status, why = "left out on purpose", left_out[name]
        elif kernel not in portable:
            status, why = "missing", "no portable kernel"
        elif kernel in wrong:
            status, why = "wrong", "in a program the suite found wrong on the portable path"
        elif kernel in verified:
            status, why = "pass", "run by a passing op-database program"
        else:
            status, why = "pass (kernel tests only)", "portable kernel; no op-database sample reached it"
        rows.append({"op": name, "kernel": kernel, "status": status, "why": why})
    return rows


def write_tables(results, paths, out_dir, meta):
    os.makedirs(out_dir, exist_ok=True)
    by_op = defaultdict(dict)
    for (cid, dtype), r in sorted(results.items()):
        by_op[cid][dtype] = r
    et_rows = executorch_table(results)
    per_path = {p: Counter() for p in paths}
    ops_passing = {p: 0 for p in paths}
    skipped = Counter()
    for cid, per_dtype in by_op.items():
        for p in paths:
            outs = [r["paths"][p]["outcome"] for r in per_dtype.values() if "skip" not in r and p in r["paths"]]
            for o in outs:
                per_path[p][o] += 1
            if "pass" in outs:
                ops_passing[p] += 1
        if all("skip" in r for r in per_dtype.values()):
            skipped[next(iter(per_dtype.values()))["skip"].split(":")[0]] += 1
    summary = {
        "cases": len(results),
        "ops": len(by_op),
        "ops_passing_per_path": ops_passing,
        "outcomes_per_path": {p: dict(c) for p, c in per_path.items()},
        "ops_skipped_by_reason": dict(skipped),
        "wrong": sorted(f"{cid} {d} {p}" for (cid, d), r in results.items() for p, x in r.get("paths", {}).items()
                        if x["outcome"] in ("wrong", "timeout")),
        "executorch_portable": dict(Counter(r["status"] for r in et_rows)),
    }
    data = {"meta": meta, "summary": summary,
            "cases": {f"{cid} {d}": r for (cid, d), r in sorted(results.items())},
            "executorch_portable": et_rows}
    with open(os.path.join(out_dir, "op_coverage.json"), "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)

    lines = ["# Operator coverage: PyTorch's op database on pteron", "",
             f"Written by `{meta['command']}` ({meta['date']}, {meta['seconds']:.0f} s, {meta['jobs']} worker(s), "
             f"torch {meta['torch']}). Cases: {summary['cases']} (OpInfo x dtype) over {summary['ops']} OpInfos, "
             f"at most {meta['max_samples']} sample inputs each." +
             ("" if meta.get("operators_done", 0) >= meta.get("operators", 0) else
              f" **Partial run: {meta['operators_done']} of {meta['operators']} OpInfos done.**"), "",
             "Coverage counts do not depend on machine load (only the run's time does); a case "
             "running past its timeout would, and is counted as timeout below.", "",
             "Each cell groups dtypes by outcome: **pass** (every sample matched eager), **refused** (compile-time "
             "refusal, with its reason), **wrong** (mismatch, runtime error or crash: a failing result), "
             "**not delegated** (the delegate kept nothing: its reason), **timeout**. Tolerances: float32 "
             "|diff| <= 1e-5 x max(1, max|eager|) + 1e-4 x |eager| on the kernel paths (1e-4 and 1e-3 on "
             "delegates), float16 1e-3 (2e-3), integers and bool exact; per-op exceptions with torch's reason "
             "(op_db_suite.OP_TOLERANCES): uint8 bilinear/bicubic resizes within 1 (ATen's x86 uint8 path "
             "uses fixed-point weights; bicubic downscaling within 2), float16 grid sampling within 2e-2 "
             "(ATen computes it in float16). "
             "Paths: " +
             ", ".join(f"`{p}` = `{','.join(b)}`" for p, b in paths.items()) + ".", "",
             "| path | OpInfos with a passing dtype | pass | refused | wrong | not delegated | timeout |",
             "|---|---|---|---|---|---|---|"]
    for p in paths:
        c = per_path[p]
        lines.append(f"| {p} | {ops_passing[p]} | {c['pass']} | {c['refused']} | {c['wrong']} | "
                     f"{c['not delegated']} | {c['timeout']} |")
    lines += ["", f"Wrong or timed out: {len(summary['wrong'])}" +
              (" (" + ", ".join(summary["wrong"][:40]) + ")" if summary["wrong"] else ""), "",
              "OpInfos skipped as a whole, by reason: " +
              ", ".join(f"{k} {v}" for k, v in sorted(skipped.items(), key=lambda kv: -kv[1])), "",
              "## ExecuTorch's portable list", "",
              "The 209 entries of ExecuTorch's `kernels/portable/functions.yaml` "
              "(`tests/conformance/executorch_portable_ops.txt`): " +
              ", ".join(f"{k} {v}" for k, v in sorted(summary["executorch_portable"].items())) + ".", "",
              "| ExecuTorch op | status | why |", "|---|---|---|"]
    for r in et_rows:
        lines.append(f"| `{r['op']}` | {r['status']} | {r['why']} |")
    lines += ["", "## Per operator", "", "| OpInfo | aten ops after decomposition | " + " | ".join(paths) + " |",
              "|---|---|" + "---|" * len(paths)]
    for cid, per_dtype in by_op.items():
        skips = [r["skip"] for r in per_dtype.values() if "skip" in r]
        if len(skips) == len(per_dtype):
            lines.append(f"| `{cid}` | skipped: {skips[0][:120].replace('|', '/')} |" + " |" * len(paths))
            continue
        aten = sorted({a for r in per_dtype.values() for a in r.get("aten_ops", [])})
        lines.append(f"| `{cid}` | {' '.join(aten)[:120]} | " + " | ".join(_cell(per_dtype, p) for p in paths) + " |")
    with open(os.path.join(out_dir, "op_coverage.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", action="store_true", help="the fixed subset make test runs")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per OpInfo (all its dtypes)")
    ap.add_argument("--dtypes", help="comma-separated, e.g. float32,int64")
    ap.add_argument("--ops", help="comma-separated OpInfo names (case ids) only")
    ap.add_argument("--paths", help="comma-separated subset of the paths (portable,optimized,xnnpack,vulkan)")
    args = ap.parse_args(argv)

    import torch

    import op_db_suite

    paths = op_db_suite.available_paths()
    if args.paths:
        paths = {p: paths[p] for p in args.paths.split(",") if p in paths}
    started = time.monotonic()
    cases = select_cases(args.subset, args.dtypes.split(",") if args.dtypes else None,
                         args.ops.split(",") if args.ops else None)
    print(f"op_db conformance: {len(cases)} OpInfos, {sum(len(c[1]) for c in cases)} cases, "
          f"paths {', '.join(paths)}, {args.jobs} worker(s)", flush=True)
    def meta(done):
        return {"command": "python tests/conformance/run_op_db.py " + " ".join(argv if argv is not None else sys.argv[1:]),
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "seconds": time.monotonic() - started,
                "jobs": args.jobs, "torch": torch.__version__, "max_samples": op_db_suite.MAX_SAMPLES,
                "subset": args.subset, "operators_done": done, "operators": len(cases)}

    # Tables are rewritten every 50 operators, so an interrupted run leaves what it has (its
    # header says how many operators it covers).
    results = run(cases, paths, args.jobs, args.timeout, log=lambda m: print(m, flush=True),
                  checkpoint=lambda res, done: write_tables(res, paths, args.out, meta(done)))
    summary = write_tables(results, paths, args.out, meta(len(cases)))
    print(json.dumps({k: summary[k] for k in ("cases", "ops_passing_per_path", "outcomes_per_path")}, indent=1))
    print(f"wrong or timed out: {len(summary['wrong'])}")
    for w in summary["wrong"][:50]:
        print("  " + w)
    print(f"written: {os.path.join(args.out, 'op_coverage.md')} ({time.monotonic() - started:.0f} s)")
    return 1 if summary["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
