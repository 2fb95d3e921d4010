"""pteron runs a stateful program ExecuTorch wrote (tests/fixtures/executorch/
state_cache_counter.pte, made by tools/fixtures/make_executorch_state_fixture.py): mutable
buffers planned with share_mutable_buffers (memory id 2), initialised from
mutable_data_segments, named by extra_tensor_info. Call by call, pteron's outputs equal
ExecuTorch's own runtime's (exactly: sums of a few small integers), reset() starts over."""

import numpy as np
import torch
from executorch_fixtures import FIXTURE_DIR

import pteron

PTE = FIXTURE_DIR / "state_cache_counter.pte"
CALLS = FIXTURE_DIR / "state_cache_counter_calls.npz"


def test_executorch_stateful_program_runs_call_by_call():
    arrays = np.load(CALLS)
    n = len([k for k in arrays.files if k.startswith("output_")])
    program = pteron.load(PTE)
    assert program.load_method("forward").num_state_tensors == 2
    for attempt in range(2):
        for call in range(n):
            x = torch.from_numpy(arrays[f"x_{call}"])
            pos = torch.from_numpy(arrays[f"pos_{call}"])
            got = program.forward(x, pos)[0]
            assert torch.equal(got, torch.from_numpy(arrays[f"output_{call}"])), (attempt, call)
        program.reset()


def test_executorch_program_writing_into_its_inputs_runs_as_executorch_runs_it():
    # ExecuTorch writes the new values into the inputs with aten::copy_ and returns them as the
    # first outputs (input_mutation.pte, from the same script): pteron's outputs equal its
    # runtime's, and the method's inputs hold the written values.
    arrays = np.load(FIXTURE_DIR / "input_mutation_calls.npz")
    method = pteron.load(FIXTURE_DIR / "input_mutation.pte").load_method("forward")
    assert "aten::copy_" in method.instruction_names()
    calls = len({k.split("_")[1] for k in arrays.files if k.startswith("output_")})
    assert calls == 4
    for call in range(calls):
        inputs = [arrays[f"input_{call}_{i}"].copy() for i in range(4)]
        got = method(*inputs)
        for k, out in enumerate(got):
            np.testing.assert_array_equal(out, arrays[f"output_{call}_{k}"])
        np.testing.assert_array_equal(method.input(1), arrays[f"output_{call}_0"])  # the cache
        np.testing.assert_array_equal(method.input(3), arrays[f"output_{call}_1"])  # x * 2
