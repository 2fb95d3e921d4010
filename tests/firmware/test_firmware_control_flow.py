"""Control flow on the Cortex-M55 (QEMU mps3-an547): a torch.cond whose branch holds a linear, a
while_loop whose trip count the input decides, and a scan (a tanh recurrence with weights),
compiled with `--target cortex-m55-an547` and built as firmware. The bare-metal runtime's
JumpFalse (on a bool tensor and on a constant), the loops' prim ops and et_copy_index give
`pteron run`'s bits on the host for the same program and inputs, for inputs taking each way
through the cond. The budget `pteron compile` estimates runs every instruction once (both
branches, each loop body), so a loop that never ends on its placeholder inputs does not stall
it, and the measured scratch stays within it."""

import json

import numpy as np
import pytest
import torch
from control_flow_models import Doubling, Elman, Gate
from test_firmware import TARGET, pteron

import pteron as pteron_api


rng = np.random.default_rng(5)
X = rng.standard_normal((2, 8)).astype(np.float32)
CASES = {
    "cond": (Gate(), [[np.abs(X), X], [-np.abs(X), X]]),
    "while_loop": (Doubling(), [[np.full(4, 0.3, np.float32)], [np.full(4, 60.0, np.float32)]]),
    "scan": (Elman(), [[rng.standard_normal((6, 2, 3)).astype(np.float32), rng.standard_normal((2, 8)).astype(np.float32)]]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_control_flow_firmware_matches_host_bit_exactly(tmp_path, case):
    model, calls = CASES[case]
    pt2, pte, elf = tmp_path / f"{case}.pt2", tmp_path / f"{case}.pte", tmp_path / f"{case}.elf"
    torch.export.save(pteron_api.export(model.eval(), tuple(torch.from_numpy(a) for a in calls[0])), pt2)
    compiled = pteron("compile", pt2, "-o", pte, "--target", TARGET, "--json")
    assert compiled.returncode == 0, compiled.stderr
    for i, arrays in enumerate(calls):
        inputs = tmp_path / f"in{i}.npz"
        np.savez(inputs, **{f"input_{k}": a for k, a in enumerate(arrays)})
        host_out, fw_out = tmp_path / f"host{i}.npz", tmp_path / f"fw{i}.npz"
        host = pteron("run", pte, "--inputs", inputs, "--outputs", host_out, "--kernels", "portable")
        assert host.returncode == 0, host.stderr
        fw = pteron("firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs, "--outputs", fw_out, "--json")
        assert fw.returncode == 0, fw.stderr
        report = json.loads(fw.stdout)
        assert report["measured"]["scratch"] <= report["estimate"]["scratch"]
        expected, got = np.load(host_out), np.load(fw_out)
        assert sorted(expected.files) == sorted(got.files)
        for name in expected.files:
            assert got[name].tobytes() == expected[name].tobytes(), (case, i, name)
