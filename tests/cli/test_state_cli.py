"""The CLI on a stateful program (tests/fuzz/regressions/state-cache-counter.pte: output
cache.sum(0) + count, where each call writes `x` into cache row `pos` and adds 1 to count):
inspect lists the state, run carries it across --iters or resets it with --reset-state."""

import json
import subprocess

import numpy as np
from test_bad_input import REPO, pteron_cli

SEED = REPO / "tests" / "fuzz" / "regressions" / "state-cache-counter.pte"


def run_json(*args) -> dict:
    out = subprocess.run([pteron_cli(), *map(str, args), "--json"], capture_output=True, check=True, timeout=60)
    return json.loads(out.stdout)


def test_inspect_lists_the_state():
    info = run_json("inspect", SEED)
    state = info["methods"][0]["state"]
    assert [s["name"] for s in state] == ["cache", "count"]
    assert {s["memory_id"] for s in state} == {2}


def test_run_carries_state_across_iterations_unless_reset(tmp_path):
    inputs = tmp_path / "in.npz"
    np.savez(inputs, input_0=np.ones((1, 3), np.float32), input_1=np.array([0], np.int64))
    for flags, expected in (([], 1 + 3), (["--reset-state"], 1 + 1)):
        out = tmp_path / "out.npz"
        summary = run_json("run", SEED, "--inputs", inputs, "--iters", 3, "--outputs", out, *flags)
        assert summary["state_tensors"] == 2
        np.testing.assert_array_equal(np.load(out)["output_0"], np.full(3, expected, np.float32))
