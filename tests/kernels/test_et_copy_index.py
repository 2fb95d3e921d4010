"""executorch_prim::et_copy_index.tensor(copy_to, copy_from, index): copy_from becomes row `index`
of copy_to, as ExecuTorch's and pteron's map / scan loops stack each iteration's result (growing
a shorter bounded copy_to is checked end to end by tests/interop/test_executorch_control_flow.py,
restarting it at index 0 by tests/compiler/test_loops.py).
Rows land exactly where torch's indexing puts them; bad shapes, dtypes and indices are one-line
errors."""

import pytest
import torch
from kernel_harness import run_kernel

OP = "executorch_prim::et_copy_index.tensor"


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_each_row_lands_where_torch_indexes_it(dtype):
    rows = (torch.randn(4, 2, 3) * 10).to(dtype)
    stacked = torch.zeros(4, 2, 3, dtype=dtype)
    for index in (2, 0, 3, 1):
        run_kernel(OP, [stacked, rows[index].clone(), index])
    assert torch.equal(stacked, rows)


def test_index_zero_restarts_a_bounded_copy_to():
    # Index 0 starts a loop: a bounded copy_to shrinks to that one row (a loop over fewer rows than
    # the call before it leaves its own count; end to end in tests/compiler/test_loops.py); a later
    # index within its size keeps it.
    stacked = torch.zeros(5, 2)
    assert run_kernel(OP, [stacked, torch.full((2,), 7.0), 0], dynamic=(0,))[0] == (1, 2)
    assert run_kernel(OP, [stacked, torch.full((2,), 9.0), 2], dynamic=(0,))[0] == (5, 2)
    assert torch.equal(stacked[[0, 2]], torch.tensor([[7.0, 7.0], [9.0, 9.0]]))


@pytest.mark.parametrize("copy_to, copy_from, index, message", [
    (torch.zeros(4, 3), torch.zeros(3), 4, "static tensor cannot change shape"),
    (torch.zeros(4, 3), torch.zeros(3), -1, "index -1"),
    (torch.zeros(4, 3), torch.zeros(2, 3), 0, "copy_to has 2 dims, copy_from 2"),
    (torch.zeros(4, 3), torch.zeros(5), 0, "a row of copy_to has size 3 at dim 0, copy_from 5"),
    (torch.zeros(4, 3), torch.zeros(3, dtype=torch.int32), 0, "copy_to is float32, copy_from int32"),
])
def test_bad_arguments_are_one_line_errors(copy_to, copy_from, index, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel(OP, [copy_to, copy_from, index])
