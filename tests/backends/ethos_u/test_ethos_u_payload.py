"""The Ethos-U backend's own pieces: Vela compiles TOSA graphs for each Ethos-U target
(targets/ethos-u*.toml, pteron's targets/vela/pteron_vela.ini), the payload carries the command
stream, weights, scratch sizes, I/O placement, the TOSA form and Vela's estimate, and the
registered backend (emulated driver) runs it bit-exact with the TOSA reference model.

Graphs come from tests/backends/tosa/tosa_op_cases.py (tosa-tools' serializer + reference model
in .venv-arm). Bad payloads and a missing Vela fail with one line naming what is wrong.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "backends" / "tosa"))
from test_tosa_executor import arm_python  # noqa: E402

TARGETS = ["ethos-u55-128", "ethos-u55-256", "ethos-u85-256"]
CASES = ["mini_network", "conv2d_int8", "avg_pool_int8"]


def tool() -> str:
    exe = REPO / "build" / "backends" / "ethos_u" / "pteron-ethos-u"
    assert exe.exists(), f"build pteron-ethos-u first (ninja -C build): {exe}"
    return str(exe)


def call(*args, env=None):
    return subprocess.run([tool(), *map(str, args)], capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    out = tmp_path_factory.mktemp("ethos_u_cases")
    subprocess.run([arm_python(), str(REPO / "tests/backends/tosa/tosa_op_cases.py"), str(out), *CASES],
                   check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def compiled(cases):
    """(case, target) -> (payload path, report) for the combinations the tests use."""
    done = {}
    for case, target in [("mini_network", t) for t in TARGETS] + [
            ("conv2d_int8", "ethos-u55-128"), ("avg_pool_int8", "ethos-u85-256")]:
        peu = cases / f"{case}-{target}.peu"
        r = call("compile", cases / case / "graph.tosa", "--target", target, "-o", peu)
        assert r.returncode == 0, r.stderr
        done[(case, target)] = (peu, json.loads(r.stdout))
    return done


@pytest.mark.parametrize("target", TARGETS)
def test_vela_report_names_the_system_and_its_estimate(compiled, target):
    _, rep = compiled[("mini_network", target)]
    assert rep["accelerator"] == target
    assert rep["vela_version"] == "5.2.0"
    assert rep["npu_ops"] > 0 and rep["cpu_ops"] == 0
    assert rep["npu_cycles"] > 0 and rep["macs"] > 10000
    assert rep["command_stream_bytes"] > 0 and rep["weight_bytes"] > 0
    if target.startswith("ethos-u85"):
        # Dedicated_Sram_384KB: the arena lives in DRAM, the SRAM is the NPU's own cache.
        assert rep["memory_mode"] == "Dedicated_Sram_384KB"
        assert rep["dram_bytes"] > 0 and rep["fast_scratch_bytes"] > 0
    else:
        # Shared_Sram: the arena in SRAM, the weights read from flash.
        assert rep["memory_mode"] == "Shared_Sram"
        assert rep["sram_bytes"] >= rep["scratch_bytes"] > 0
        assert rep["off_chip_flash_bytes"] >= rep["weight_bytes"]


def test_wider_npu_is_estimated_faster(compiled):
    assert compiled[("mini_network", "ethos-u55-256")][1]["npu_cycles"] < \
        compiled[("mini_network", "ethos-u55-128")][1]["npu_cycles"]


@pytest.mark.parametrize("case,target", [("mini_network", t) for t in TARGETS] +
                         [("conv2d_int8", "ethos-u55-128"), ("avg_pool_int8", "ethos-u85-256")])
def test_emulated_delegate_is_bit_exact_with_reference(cases, compiled, case, target, tmp_path):
    peu, _ = compiled[(case, target)]
    r = call("run", peu, cases / case / "inputs.npz", tmp_path / "out.npz")
    assert r.returncode == 0, r.stderr
    assert "EMULATED" in r.stderr  # the log says no NPU ran it
    expected, got = np.load(cases / case / "expected.npz"), np.load(tmp_path / "out.npz")
    for key in expected:
        np.testing.assert_array_equal(got[key], expected[key])


def one_line_error(r, *needles):
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_malformed_payloads_are_refused_with_one_line(cases, compiled, tmp_path):
    peu, _ = compiled[("mini_network", "ethos-u55-128")]
    good = peu.read_bytes()
    inputs = cases / "mini_network" / "inputs.npz"
    bad = tmp_path / "bad.peu"
    bad.write_bytes(good[: len(good) // 3])
    one_line_error(call("run", bad, inputs, tmp_path / "o.npz"), "Ethos-U payload")
    bad.write_bytes(good[:4] + b"XXXX" + good[8:])
    one_line_error(call("run", bad, inputs, tmp_path / "o.npz"), "identifier")
    bad.write_bytes(b"\0" * 6)
    one_line_error(call("run", bad, inputs, tmp_path / "o.npz"), "too short")


def test_missing_vela_is_one_line_naming_it(cases, tmp_path):
    env = dict(os.environ, PTERON_VELA="/nonexistent/vela")
    r = call("compile", cases / "mini_network" / "graph.tosa", "--target", "ethos-u55-128", "-o",
             tmp_path / "x.peu", env=env)
    one_line_error(r, "/nonexistent/vela", "PTERON_VELA")


def test_target_without_npu_is_refused(cases, tmp_path):
    r = call("compile", cases / "mini_network" / "graph.tosa", "--target", "host", "-o",
             tmp_path / "x.peu")
    one_line_error(r, "[npu]", "host")
