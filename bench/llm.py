"""make bench-llm: text generation on this machine's CPUs, same run, same model and prompt (128
prompt tokens, 128 generated, greedy), 2 threads, each system in its own process:

  eager       Hugging Face `generate` with a static cache (PyTorch eager), fp32
  executorch  ExecuTorch 1.5.1's LLM export (export_llama, XNNPACK), fp32 and 8da4w, run by its
              pybindings (.venv-et)
  llama.cpp   llama-cpp-python built from its source distribution (bench/work/llamacpp-venv,
              bench/requirements-llamacpp.txt), the same weights as GGUF: F32, Q8_0, Q4_0
  pteron      `pteron generate --json` on programs from pteron.to_edge_transform_and_lower:
              fp32, quantize="llm-int8", quantize="llm-8da4w"

The model is a Llama-style config (bench/llm_models.py: GQA, RoPE, RMSNorm, SwiGLU) with seeded
random weights; --config llama-1b (or a JSON file of LlamaConfig arguments) runs a bigger one by
hand, its results written beside the default's as llm-<config>.{json,md,png}. --config moe-small
(or MixtralConfig arguments with num_local_experts) measures a Mixtral-style mixture of experts
on pteron and eager (the peers' converters here write Llama checkpoints only). --rounds rounds
alternate the systems' order; each figure is the median over rounds. Each row records the ISA,
the load average, and CPU time next to wall time. A STREAM-style copy
(bench/membw.py) measured in every round gives the memory bandwidth decode is a fraction of.
Results measured at a load above the core count are not written to bench/results; --smoke (a
tiny config, short prompt) checks the script end to end and writes to a scratch folder only.
A peer that cannot be built or run here is listed with the reason, never with a number.

    .venv/bin/python bench/llm.py [--rounds 3] [--config llama-110m] [--systems pteron,eager]
    .venv/bin/python bench/llm.py --smoke          # results in bench/work/llm-smoke/results
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

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "bench"
sys.path.insert(0, str(BENCH))
import llm_models  # noqa: E402
from llm_report import write_markdown  # noqa: E402
from priority import match_autogroup_nice  # noqa: E402

PEERS = BENCH / "llm_peers.py"
# (system, precision, comparable pteron precision for the goals)
SYSTEMS = [("eager", "fp32"), ("executorch", "fp32"), ("executorch", "8da4w"),
           ("llama.cpp", "F32"), ("llama.cpp", "Q8_0"), ("llama.cpp", "Q4_0"),
           ("pteron", "fp32"), ("pteron", "int8"), ("pteron", "8da4w")]


# Why a mixture-of-experts config runs on pteron and eager only.
MOE_NOT_RUN = {
    "executorch": "a mixture of experts: this bench converts Llama checkpoints for export_llama only",
    "llama.cpp": "a mixture of experts: this bench's GGUF writer writes Llama tensors only",
}


def log(msg):
    print(f"bench-llm: {msg}", file=sys.stderr, flush=True)


def child(cmd, env=None, timeout=3600, show=False):
    """Runs one process; returns (its JSON output: the last line, or the whole pretty-printed
    object of `pteron generate --json`, and that process's own accounting from the kernel:
    wall s, user + system CPU s). `show` lets its stderr (progress) through. Peak RSS comes
    from each process itself (VmHWM): the kernel's ru_maxrss of a child starts at the
    driver's own size."""
    import signal
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([str(c) for c in cmd], stdout=out, stderr=None if show else err, text=True,
                                env=env)
        deadline = start + timeout
        while True:  # wait4 rather than wait: it also returns the process's own rusage
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.send_signal(signal.SIGKILL)
                os.wait4(proc.pid, 0)
                raise RuntimeError(f"{' '.join(map(str, cmd[:3]))} ran past {timeout} s")
            time.sleep(0.02)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd[:4]))} failed (exit {proc.returncode}): {stderr.strip()[-1500:]}")
    try:
        text = stdout[stdout.index("{"):] if str(cmd[1]) == "generate" else stdout.strip().splitlines()[-1]
        result = json.loads(text)
    except (ValueError, IndexError):
        raise RuntimeError(f"{' '.join(map(str, cmd[:4]))} printed no JSON: {stdout.strip()[-500:]}") from None
    proc_figures = {"process_wall_s": wall, "process_cpu_s": usage.ru_utime + usage.ru_stime}
    return result, proc_figures


def clean_env(python_path=None):
    env = {**os.environ, "PYTHONPATH": python_path or str(BENCH)}
    env.pop("OMP_NUM_THREADS", None)
    return env


# ---- Preparing each system's program ------------------------------------------------------

def prepare_weights_and_pteron(a, work, with_pteron):
    """The weights for every peer and pteron's programs, in a child process: this driver stays
    small (no torch, no model) while the systems are measured."""
    env = clean_env(os.pathsep.join([str(BENCH), str(REPO / "python"), str(Path(a.build) / "python")]))
    out, _ = child([sys.executable, PEERS, "prepare", a.config, work, a.prompt_tokens, a.new_tokens, a.group,
                    int(a.reuse), int(with_pteron)], env=env, show=True)
    return {prec: Path(path) for prec, path in out["pteron"].items()}


def prepare_executorch(a, work, reuse):
    """{precision: .pte} or a reason string."""
    if not Path(a.et_python).exists():
        return f"no ExecuTorch venv at {a.et_python} (make venv-et)"
    paths = {}
    for precision in ("fp32", "8da4w"):
        pte = work / f"executorch-{precision}.pte"
        if not (reuse and pte.exists()):
            log(f"exporting ExecuTorch {precision} (export_llama, XNNPACK)")
            try:
                child([a.et_python, PEERS, "et-export", work / "meta", pte, precision,
                       a.prompt_tokens + 1, a.prompt_tokens + a.new_tokens, a.group], env=clean_env())
            except RuntimeError as e:
                return f"ExecuTorch's export failed: {e}"
        paths[precision] = pte
    return paths


def prepare_llamacpp(a, work, reuse):
    """{precision: .gguf} or a reason string."""
    py = Path(a.llamacpp_python)
    if not py.exists():
        return f"no llama.cpp venv at {py.parent.parent} (make bench-llm-venv builds llama-cpp-python from source)"
    probe = subprocess.run([str(py), "-c", "import llama_cpp, gguf"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"llama-cpp-python / gguf do not import in {py}: {probe.stderr.strip().splitlines()[-1]}"
    paths = {p: work / f"model-{p.lower()}.gguf" for p in ("F32", "Q8_0", "Q4_0")}
    if not (reuse and all(p.exists() for p in paths.values())):
        log("writing GGUF (F32) and quantizing it with llama.cpp (Q8_0, Q4_0)")
        try:
            info, _ = child([py, PEERS, "gguf-write", work / "weights.npz", a.config, work, a.threads],
                            env=clean_env())
        except RuntimeError as e:
            return f"writing GGUF failed: {e}"
        (work / "gguf.json").write_text(json.dumps(info, indent=2))
    return paths


def pteron_inspect(pteron, pte):
    j = json.loads(subprocess.run([str(pteron), "inspect", str(pte), "--json"], capture_output=True,
                                  text=True, check=True).stdout)
    forward = next(m for m in j["methods"] if m["name"] == "forward")
    return {"constant_bytes": j["constant_bytes"], "planned_bytes": forward["planned_bytes"]}


# ---- Measuring ----------------------------------------------------------------------------

def runner(system, precision, path, a, pteron, prompt):
    ids = ",".join(map(str, prompt))
    if system == "pteron":
        return [pteron, "generate", path, "--prompt-ids", ids, "-n", a.new_tokens, "--threads", a.threads,
                "--warmup", a.warmup, "--json"]
    if system == "eager":
        return [sys.executable, PEERS, "eager-run", a.config, ids, a.new_tokens, a.threads, a.warmup]
    if system == "executorch":
        return [a.et_python, PEERS, "et-run", path, ids, a.new_tokens, a.threads, a.warmup]
    return [a.llamacpp_python, PEERS, "llamacpp-run", path, ids, a.new_tokens, a.threads, a.warmup]


def measure(cmd):
    """One run: the system's own figures plus the wall and CPU time of its process."""
    fig, proc = child(cmd, env=clean_env())
    fig.update(proc)
    fig.setdefault("load_average_1m", os.getloadavg()[0])
    return fig


def stream_copy(a):
    out = subprocess.run([sys.executable, str(BENCH / "membw.py"), "--threads", str(a.threads)],
                         capture_output=True, text=True, check=True, env=clean_env())
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(runs, key):
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def summarize(runs, eager_tokens):
    keys = ("prefill_tokens_per_s", "decode_tokens_per_s", "time_to_first_token_ms", "prefill_ms",
            "decode_ms", "prefill_cpu_ms", "decode_cpu_ms", "peak_rss_bytes", "process_wall_s",
            "process_cpu_s", "generation_cpu_s", "generation_wall_s", "rss_before_load_bytes")
    row = {k: median_of(runs, k) for k in keys}
    row["max_load_average_1m"] = max(r["load_average_1m"] for r in runs)
    row["isa"] = runs[0].get("isa")
    row["tokens"] = runs[0]["tokens"]
    row["decode_tokens_per_s_rounds"] = [r.get("decode_tokens_per_s") for r in runs]
    if eager_tokens is not None:
        same = 0
        for x, y in zip(row["tokens"], eager_tokens):
            if x != y:
                break
            same += 1
        row["tokens_matching_eager"] = same
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", "--model", default=None,
                   help=f"one of {', '.join(llm_models.CONFIGS)} or a JSON file of LlamaConfig arguments "
                   "(default llama-110m; smoke with --smoke)")
    p.add_argument("--smoke", action="store_true", help="tiny config, 16 + 16 tokens, 1 round, scratch results")
    p.add_argument("--prompt-tokens", type=int, default=None)
    p.add_argument("--new-tokens", type=int, default=None)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=None)
    p.add_argument("--warmup", type=int, default=1, help="untimed generations (prompt + 4 tokens) in each system's process first")
    p.add_argument("--group", type=int, default=32, help="int4 group size (8da4w; Q4_0 is 32)")
    p.add_argument("--systems", default="eager,executorch,llama.cpp,pteron")
    p.add_argument("--build", default=str(REPO / "build"))
    p.add_argument("--work", default=None)
    p.add_argument("--results", default=None)
    p.add_argument("--reuse", action="store_true", help="keep programs already in --work")
    p.add_argument("--et-python", default=str(REPO / ".venv-et" / "bin" / "python"))
    p.add_argument("--llamacpp-python", default=str(BENCH / "work" / "llamacpp-venv" / "bin" / "python"))
    a = p.parse_args()
    a.config = a.config or ("smoke" if a.smoke else "llama-110m")
    a.prompt_tokens = a.prompt_tokens or (16 if a.smoke else 128)
    a.new_tokens = a.new_tokens or (16 if a.smoke else 128)
    a.rounds = a.rounds or (1 if a.smoke else 3)
    name, kw = llm_models.resolve_config(a.config)
    work = Path(a.work or BENCH / "work" / ("llm-smoke" if a.smoke else f"llm-{name}"))
    results = Path(a.results or (work / "results" if a.smoke else BENCH / "results"))
    published = results.resolve() == (BENCH / "results").resolve()
    if a.smoke and published:
        raise SystemExit("--smoke figures are not for bench/results: give --results elsewhere or drop --smoke")
    wanted = set(a.systems.split(","))
    unknown = wanted - {s for s, _ in SYSTEMS}
    if unknown:
        raise SystemExit(f"--systems: unknown {', '.join(sorted(unknown))} (eager, executorch, llama.cpp, pteron)")
    if a.prompt_tokens < 2 or a.new_tokens < 2:
        raise SystemExit("--prompt-tokens and --new-tokens must be at least 2")
    pteron = Path(a.build) / "tools" / "cli" / "pteron"
    if "pteron" in wanted and not pteron.exists():
        raise SystemExit(f"no pteron CLI at {pteron} (make build, or --build)")
    priority = match_autogroup_nice()
    work.mkdir(parents=True, exist_ok=True)

    import numpy as np

    prompt = [int(x) for x in np.random.default_rng(1).integers(3, kw["vocab_size"], a.prompt_tokens)]
    log(f"{name}: {llm_models.parameter_count(kw) / 1e6:.1f}M parameters, {a.prompt_tokens} prompt + "
        f"{a.new_tokens} new tokens, {a.threads} threads, {a.rounds} round(s)")
    programs, missing = {}, {}
    try:
        for prec, path in prepare_weights_and_pteron(a, work, "pteron" in wanted).items():
            programs[("pteron", prec)] = path
    except RuntimeError as e:
        raise SystemExit(f"preparing the weights and pteron's programs failed: {e}") from None
    if "eager" in wanted:
        programs[("eager", "fp32")] = None
    for system, prepare in (("executorch", prepare_executorch), ("llama.cpp", prepare_llamacpp)):
        if system not in wanted:
            continue
        got = MOE_NOT_RUN[system] if llm_models.is_moe(kw) else prepare(a, work, a.reuse)
        if isinstance(got, str):
            log(f"{system} left out: {got}")
            missing[system] = got
        else:
            for prec, path in got.items():
                programs[(system, prec)] = path
    systems = [s for s in SYSTEMS if s in programs]
    if not systems:
        raise SystemExit("nothing to measure: " + "; ".join(f"{k}: {v}" for k, v in missing.items()))

    runs = {s: [] for s in systems}
    failed = {}
    copies = []
    for r in range(a.rounds):
        copies.append(stream_copy(a))
        order = systems[r % len(systems):] + systems[:r % len(systems)]  # rotate who goes first
        for s in order:
            if s in failed:
                continue
            try:
                fig = measure(runner(*s, programs[s], a, pteron, prompt))
            except RuntimeError as e:
                failed[s] = str(e)
                log(f"{s[0]} {s[1]} failed: {e}")
                continue
            runs[s].append(fig)
            log(f"round {r + 1}: {s[0]} {s[1]}: prefill {fig['prefill_tokens_per_s']:.1f} tok/s, decode "
                f"{fig['decode_tokens_per_s']:.1f} tok/s (load {fig['load_average_1m']:.1f})")

    eager = runs.get(("eager", "fp32"))
    eager_tokens = eager[0]["tokens"] if eager else None
    stream = {"gb_per_s": statistics.median(c["gb_per_s"] for c in copies),
              "gb_per_cpu_s": statistics.median(c["gb_per_cpu_s"] for c in copies), "rounds": copies}
    rows = []
    kv_pos = a.prompt_tokens + a.new_tokens / 2  # the mean position a decode step reads up to
    for s in systems:
        if not runs[s]:
            continue
        row = {"system": s[0], "precision": s[1], **summarize(runs[s], eager_tokens)}
        path = programs[s]
        if path is not None:
            row["file_bytes"] = Path(path).stat().st_size
            weights = row["file_bytes"] * llm_models.decode_streamed_share(kw)
        else:
            weights = llm_models.parameter_count(kw) * 4 * llm_models.decode_streamed_share(kw)
        if s[0] == "pteron":
            row.update(pteron_inspect(pteron, path))
            row["rss_goal_bytes"] = 1.2 * (row["constant_bytes"] + row["planned_bytes"])
        kv = llm_models.kv_cache_bytes_per_position(kw, 2 if s[0] == "llama.cpp" else 4) * kv_pos
        row["decode_bytes_per_token"] = weights + kv
        if row["decode_tokens_per_s"]:
            gbs = row["decode_tokens_per_s"] * row["decode_bytes_per_token"] / 1e9
            row["decode_gb_per_s"] = gbs
            row["decode_bandwidth_fraction"] = gbs / stream["gb_per_s"]
        rows.append(row)

    cores = os.cpu_count() or 1
    loads = [r["max_load_average_1m"] for r in rows] + [c["load_average_1m"] for c in copies]
    max_load = max(loads)
    doc = {"config": name, "llama_config": kw, "parameters": llm_models.parameter_count(kw),
           "prompt_tokens": a.prompt_tokens, "new_tokens": a.new_tokens, "threads": a.threads,
           "rounds": a.rounds, "warmup": a.warmup, "group_size": a.group, "smoke": a.smoke,
           "priority": priority, "machine": platform.processor() or platform.machine(), "cores": cores,
           "max_load_average_1m": max_load, "stream_copy": stream, "rows": rows,
           "not_run": {**missing, **{f"{s[0]} {s[1]}": e for s, e in failed.items()}},
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    # The default model's results are llm.*; another configuration's sit beside them (llm-llama-1b.*).
    stem = "llm" if name == "llama-110m" else f"llm-{name}"
    if published and max_load > cores:
        scratch = work / "results"
        scratch.mkdir(parents=True, exist_ok=True)
        (scratch / f"{stem}.json").write_text(json.dumps(doc, indent=2) + "\n")
        write_markdown(doc, scratch / f"{stem}.md")
        raise SystemExit(f"load average reached {max_load:.1f} on {cores} cores: not publishing to "
                         f"bench/results (figures kept in {scratch}/{stem}.{{json,md}}; rerun on a quieter machine)")
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{stem}.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(write_markdown(doc, results / f"{stem}.md"))
    chart = subprocess.run([a.et_python, str(BENCH / "llm_report.py"), results / f"{stem}.json",
                            results / f"{stem}.png"],
                           capture_output=True, text=True) if Path(a.et_python).exists() else None
    if chart is None or chart.returncode != 0:
        log("no chart (matplotlib lives in .venv-et): " + (chart.stderr.strip()[-300:] if chart else "no .venv-et"))


if __name__ == "__main__":
    main()
