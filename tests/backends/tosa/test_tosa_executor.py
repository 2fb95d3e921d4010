"""The TOSA executor (backends/tosa/runtime) against the TOSA reference model.

Each case in tosa_op_cases.py is a TOSA graph built with tosa-tools' serializer and run by the
reference model in .venv-arm; pteron-tosa-run runs the same file. Integer outputs must match
bit for bit; float outputs within 1e-5 relative (the executor's summation order is its own).
Malformed graphs are refused with one error line naming what is wrong.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tosa_op_cases import CASES, FLOAT_CASES

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent


def arm_python() -> str:
    """.venv-arm's python: $PTERON_ARM_VENV, this checkout's, or the main checkout's."""
    candidates = [os.environ.get("PTERON_ARM_VENV", ""), REPO / ".venv-arm"]
    common = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
                            cwd=REPO, capture_output=True, text=True).stdout.strip()
    if common:
        candidates.append(Path(common).parent / ".venv-arm")
    for c in candidates:
        if c and (Path(c) / "bin" / "python").exists():
            return str(Path(c) / "bin" / "python")
    raise AssertionError("no .venv-arm with tosa-tools: run `make venv-arm` or set PTERON_ARM_VENV")


def tosa_run() -> str:
    exe = REPO / "build" / "backends" / "tosa" / "runtime" / "pteron-tosa-run"
    assert exe.exists(), f"build pteron-tosa-run first (ninja -C build): {exe}"
    return str(exe)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    out = tmp_path_factory.mktemp("tosa_cases")
    subprocess.run([arm_python(), str(HERE / "tosa_op_cases.py"), str(out)], check=True,
                   capture_output=True, timeout=300)
    return out


def run_graph(graph, inputs, outputs):
    return subprocess.run([tosa_run(), str(graph), str(inputs), str(outputs)], capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_reference_model(cases, name):
    d = cases / name
    r = run_graph(d / "graph.tosa", d / "inputs.npz", d / "got.npz")
    assert r.returncode == 0, r.stderr
    expected, got = np.load(d / "expected.npz"), np.load(d / "got.npz")
    assert list(expected) == list(got)
    for key in expected:
        e, g = expected[key], got[key]
        assert e.shape == g.shape and e.dtype == g.dtype, (key, e.shape, g.shape, e.dtype, g.dtype)
        if name in FLOAT_CASES and e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_array_equal(g, e)


def test_planner_shares_bytes_between_dead_intermediates(cases):
    d = cases / "mini_network"
    r = run_graph(d / "graph.tosa", d / "inputs.npz", d / "got.npz")
    stats = __import__("json").loads(r.stdout)
    # Planned use is below the no-reuse bound memory_required() reports.
    assert stats["planned_bytes"] < stats["memory_required"]


def one_line_error(r, *needles):
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_malformed_graphs_are_refused_with_one_line(cases, tmp_path):
    d = cases / "conv2d_int8"
    good = (d / "graph.tosa").read_bytes()
    truncated = tmp_path / "truncated.tosa"
    truncated.write_bytes(good[: len(good) // 2])
    one_line_error(run_graph(truncated, d / "inputs.npz", tmp_path / "o.npz"), "TOSA graph")
    wrong_id = tmp_path / "wrong_id.tosa"
    wrong_id.write_bytes(good[:4] + b"XXXX" + good[8:])
    one_line_error(run_graph(wrong_id, d / "inputs.npz", tmp_path / "o.npz"), "identifier")
    empty = tmp_path / "empty.tosa"
    empty.write_bytes(b"")
    one_line_error(run_graph(empty, d / "inputs.npz", tmp_path / "o.npz"), "too short")


def test_wrong_input_size_is_refused(cases, tmp_path):
    d = cases / "matmul_int8"
    np.savez(tmp_path / "bad.npz", in0=np.zeros((2, 5, 6), np.int8), in1=np.zeros((2, 7, 3), np.int8))
    one_line_error(run_graph(d / "graph.tosa", tmp_path / "bad.npz", tmp_path / "o.npz"), "input 0")
