"""executorch_prim::et_view.default: out aliases self, resized to `size` (one -1 inferred);
bad sizes and dtypes are one-line errors. The aliasing itself is checked end to end by
tests/interop/test_executorch_dynamic.py (ExecuTorch's dynamic programs read through it)."""

import pytest
import torch
from kernel_harness import run_kernel

OP = "executorch_prim::et_view.default"


@pytest.mark.parametrize("size, shape", [([3, -1], (3, 4)), ([-1, 2, 2], (3, 2, 2)), ([12, 1], (12, 1))])
def test_out_is_resized_to_the_view(size, shape):
    x = torch.randn(2, 6)
    out = torch.empty((12, 4, 4)[: len(size)])  # an upper bound of the view's rank (planned)
    assert run_kernel(OP, [x, size, out], dynamic=[2])[0] == shape


@pytest.mark.parametrize("size, out, message", [
    ([5, -1], torch.empty(12, 4), "cannot infer the -1 dimension"),
    ([-1, -1], torch.empty(12, 4), "only one dimension can be -1"),
    ([3, 5], torch.empty(12, 4), "shape has 15 elements, input has 12"),
    ([3, 4], torch.empty(12, 4, dtype=torch.int32), "et_view.default: out"),
])
def test_bad_view_is_one_line_error(size, out, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel(OP, [torch.randn(2, 6), size, out], dynamic=[2])
