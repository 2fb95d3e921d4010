"""pteron::linear_relu (the optimized library's linear with a fused ReLU) against
torch.relu(torch.nn.functional.linear(...)), and the compiler pass that makes it.

The kernel takes the SGEMM (tiles, the row-vector dot-product path, K past one block, 1 and 2
threads) and the empty-K path, and keeps NaN like torch.relu. Errors name the op.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) (sums of K products in another order), as for
the optimized linear.
"""

import math

import pteron
import pytest
import torch
from kernel_harness import assert_close, run_kernel

OP = "pteron::linear_relu.out"


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def expected(x, w, b):
    return torch.relu(torch.nn.functional.linear(x, w, b))


@pytest.mark.parametrize("lead,k,n,bias", [
    ((128,), 768, 300, True),  # several tasks per thread, K in three blocks
    ((1,), 200, 700, True),  # row vector: dot products
    ((1,), 33, 9, False),
    ((2, 3, 5), 17, 29, True),  # partial register tiles
    ((4,), 0, 6, True),  # empty K: relu(bias)
])
def test_matches_torch(threads, lead, k, n, bias):
    x, w = rand(*lead, k, seed=1), rand(n, k, seed=2)
    b = rand(n, seed=3) if bias else None
    out = torch.full((*lead, n), float("nan"))
    run_kernel(OP, [x, w, b, out], library="optimized")
    assert_close(out, expected(x, w, b), atol=1e-4 * math.sqrt(max(k, 1)), rtol=1e-4,
                 what=f"linear_relu {lead} {k} {n}")
    assert (out >= 0).all()


def test_nan_stays():
    x, w, b = rand(6, 10, seed=4), rand(5, 10, seed=5), rand(5, seed=6)
    x[2, 3] = float("nan")
    out = torch.empty(6, 5)
    run_kernel(OP, [x, w, b, out], library="optimized")
    assert out[2].isnan().all() and not out[[0, 1, 3, 4, 5]].isnan().any()


def test_bad_inputs_name_the_op():
    with pytest.raises(RuntimeError, match="linear_relu"):
        run_kernel(OP, [rand(3, 4), rand(5, 7), None, torch.empty(3, 5)], library="optimized")
    with pytest.raises(RuntimeError, match="linear_relu"):
        run_kernel(OP, [rand(3, 4), rand(5, 4), None, torch.empty(3, 6)], library="optimized")
    with pytest.raises(RuntimeError, match="linear_relu"):
        run_kernel(OP, [rand(3, 4).double(), rand(5, 4).double(), None,
                        torch.empty(3, 5, dtype=torch.float64)], library="optimized")


class Mlp(torch.nn.Module):
    def __init__(self, leak_hidden=False):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Linear(16, 40), torch.nn.Linear(40, 8)
        self.leak_hidden = leak_hidden

    def forward(self, x):
        h = self.fc1(x)
        y = self.fc2(torch.relu(h))
        return (y, h * 2.0) if self.leak_hidden else y


@pytest.mark.parametrize("kernels,fused", [(("optimized", "portable"), 1), (("portable",), 0)])
def test_pass_fuses_only_with_the_optimized_library(kernels, fused):
    model, x = Mlp().eval(), rand(5, 16, seed=8)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(OP) == fused and ops.count("aten::relu.out") == 1 - fused
    torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-5, rtol=1e-5)


def test_linear_also_read_elsewhere_is_not_fused():
    model, x = Mlp(leak_hidden=True).eval(), rand(5, 16, seed=9)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert OP not in ops and "aten::relu.out" in ops
    outs = lowered.load().forward(x)
    with torch.no_grad():
        y, s = model(x)
    torch.testing.assert_close(outs[0], y, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(outs[1], s, atol=1e-5, rtol=1e-5)
