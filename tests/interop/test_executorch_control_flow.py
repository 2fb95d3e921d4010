"""pteron runs control flow as ExecuTorch writes it (tests/fixtures/executorch/{cond_gate,
scan_rnn,map_rows}.pte, made by tools/fixtures/make_executorch_control_flow_fixture.py):
torch.cond as JumpFalse on a bool predicate tensor and on a constant False past the other
branch, a cond nested in a branch, MoveCalls into the node's outputs; scan and map as loops of
select_copy, the function's instructions, et_copy_index stacking each row's result and prim ops
counting the rows. Call after call (inputs taking every way through the conds), pteron's
outputs equal ExecuTorch's own runtime's within 1e-6 (the same portable arithmetic; a linear's
summation order may differ)."""

import numpy as np
import pytest
import torch
from executorch_fixtures import FIXTURE_DIR

import pteron


@pytest.mark.parametrize("name", ["cond_gate", "scan_rnn", "map_rows"])
def test_executorch_control_flow_program_runs_call_by_call(name):
    arrays = np.load(FIXTURE_DIR / f"{name}_calls.npz")
    calls = sorted({int(k.split("_")[1]) for k in arrays.files if k.startswith("output_")})
    assert len(calls) >= 2
    program = pteron.load(FIXTURE_DIR / f"{name}.pte")
    for _ in range(2):  # what one call left behind (a branch, a counter) changes nothing
        for call in calls:
            args = [torch.from_numpy(arrays[f"input_{call}_{k}"]) for k in range(2)]
            got = program.forward(*args)
            expected = [arrays[k] for k in sorted(arrays.files) if k.startswith(f"output_{call}_")]
            assert len(got) == len(expected)
            for g, e in zip(got, expected):
                torch.testing.assert_close(g, torch.from_numpy(e), atol=1e-6, rtol=0)
