"""The fixed subset of the op-database conformance suite (run_op_db.py --subset): 64 OpInfos
chosen by crc32 of their names (deterministic, spread over the alphabet), float32, on the
portable, optimized and XNNPACK paths. Any wrong result (numerics beyond the tolerances in
op_db_suite.py, a runtime error, a crash or a hang) fails; refusals are recorded with their
reason in the tables it writes. About a minute on two cores."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_op_db_subset_has_no_wrong_results(tmp_path):
    cmd = [sys.executable, os.path.join(HERE, "run_op_db.py"), "--subset", "--jobs", "2",
           "--paths", "portable,optimized,xnnpack", "--timeout", "120", "--out", str(tmp_path)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert os.path.exists(tmp_path / "op_coverage.json"), run.stdout[-2000:] + run.stderr[-2000:]
    data = json.loads((tmp_path / "op_coverage.json").read_text())
    summary = data["summary"]
    assert summary["wrong"] == [], "wrong results:\n" + "\n".join(
        f"{k}: {p} {r['paths'][p].get('reason', '')}" for k, r in data["cases"].items()
        for p in r.get("paths", {}) if r["paths"][p]["outcome"] in ("wrong", "timeout"))
    # The suite really ran: operators of the subset pass on the portable kernels, and its
    # table has a row for every entry of ExecuTorch's portable list.
    assert summary["ops_passing_per_path"]["portable"] >= 15, summary
    assert len(data["executorch_portable"]) == 209
    assert run.returncode == 0, run.stdout[-2000:]
