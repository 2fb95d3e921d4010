"""`pteron profile` and `pteron inspect --trace`: the event tracer's view of a run.

What a user relies on: every instruction of every traced run appears once, the per-op times plus
the time no event covers add up to the wall time, the ETDump and Chrome trace files are written
and readable, `inspect --trace` reproduces the profile from the ETDump, and wrong files fail with
one error line. Timing values themselves are not asserted (machines are noisy); structure is.
"""

import json
import subprocess

import pytest

from test_bad_input import FIXTURES, assert_one_line_error, pteron_cli, run_cli

PROGRAM = FIXTURES / "conv_bn_relu.pte"
ITERS = 4


def run_json(*args) -> dict:
    out = subprocess.run([pteron_cli(), *map(str, args), "--json"], capture_output=True, check=True, timeout=60)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def profiled(tmp_path_factory):
    prefix = tmp_path_factory.mktemp("trace") / "conv"
    summary = run_json("profile", PROGRAM, "--iters", ITERS, "--warmup", 1, "-o", prefix)
    return prefix, summary


def test_profile_accounts_for_every_instruction_and_adds_up(profiled):
    _, s = profiled
    assert s["runs"] == ITERS
    assert s["dropped_events"] == 0
    instructions = run_json("inspect", PROGRAM)["methods"][0]["instructions"]
    assert sum(op["calls"] for op in s["ops"]) == pytest.approx(instructions)
    assert s["covered_ms"] + s["uncovered_ms"] == pytest.approx(s["wall_ms"], rel=1e-6)
    assert 0 <= s["uncovered_ms"] <= s["wall_ms"]
    assert all(op["where"] == "kernel" and op["name"].startswith("aten::") for op in s["ops"])


def test_profile_writes_etdump_and_chrome_trace(profiled):
    prefix, _ = profiled
    etdump = prefix.with_suffix(".etdp").read_bytes()
    assert etdump[8:12] == b"ED00"  # size prefix, root offset, then the identifier
    chrome = json.loads(prefix.with_suffix(".json").read_text())
    complete = [e for e in chrome["traceEvents"] if e["ph"] == "X"]
    assert sum(e["cat"] == "method" for e in complete) == ITERS
    assert all(e["dur"] >= 0 for e in complete)


def test_inspect_trace_reads_the_etdump_back(profiled):
    prefix, s = profiled
    again = run_json("inspect", PROGRAM, "--trace", prefix.with_suffix(".etdp"))
    assert again["runs"] == s["runs"]
    assert [(op["name"], op["calls"]) for op in again["ops"]] == [(op["name"], op["calls"]) for op in s["ops"]]
    assert again["wall_ms"] == pytest.approx(s["wall_ms"], rel=1e-6)


def test_inspect_trace_rejects_other_files(profiled, tmp_path):
    prefix, _ = profiled
    status, err = run_cli("inspect", PROGRAM, "--trace", prefix.with_suffix(".json"))
    assert_one_line_error(status, err, "not an ETDump")
    status, err = run_cli("inspect", FIXTURES / "add.pte", "--trace", prefix.with_suffix(".etdp"))
    assert_one_line_error(status, err, "another program")
    status, err = run_cli("profile", PROGRAM, "--iters", 0, "-o", tmp_path / "x")
    assert_one_line_error(status, err, "--iters")


MIXED = FIXTURES.parent / "explorer" / "transformer_block_xnnpack.pte"  # XNNPACK regions + kernels, graph info


def test_profile_maps_events_to_graph_nodes_and_modules(tmp_path):
    # One traced run: per-run medians are then that run's sums, so the tables must agree exactly.
    s = run_json("profile", MIXED, "--iters", 1, "--warmup", 1, "-o", tmp_path / "mixed")
    where = {w["where"] for w in s["by_where"]}
    assert {"kernels", "PteronXnnpackBackend"} <= where
    # Every traced instruction is charged to a module through the program's debug handles, so the
    # per-module table accounts for exactly the time the per-op table does.
    assert s["by_module"], "no module breakdown although the program carries graph info"
    assert sum(m["total_ms"] for m in s["by_module"]) == pytest.approx(
        sum(w["total_ms"] for w in s["by_where"]), rel=1e-9)
    again = run_json("inspect", MIXED, "--trace", tmp_path / "mixed.etdp")
    assert [m["module"] for m in again["by_module"]] == [m["module"] for m in s["by_module"]]
