"""Loops: torch's while_loop (a trip count the data decides), scan (a carry over the rows of its
inputs, each row's results stacked) and map (scan without a carry). Export writes each loop's
functions as subgraphs of a higher-order node; pteron compiles each as a model of its own and
emits the loop with JumpFalse instructions: the node's outputs hold the carried values, a
while_loop's condition runs on them and its body's results are copied back; a scan copies each
row into a buffer, runs its function and stacks the results with et_copy_index. Results against
PyTorch's eager loops (float32 within 1e-5 absolute and relative; integer counters exactly),
for while_loops that stop after zero, one and many iterations."""

import subprocess

import numpy as np
import pytest
import torch
from torch._higher_order_ops import while_loop
from torch._higher_order_ops.map import map as map_rows
from torch._higher_order_ops.scan import scan

import pteron
from control_flow_models import Doubling
from pteron_cli import pteron_cli

TOL = 1e-5


class Recurrence(torch.nn.Module):
    """h = tanh(W h + x) for `steps` iterations (an int tensor input): weights reach the body as
    additional inputs, constants of the body."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.cell = torch.nn.Linear(16, 16)

    def forward(self, x, steps):
        i = torch.zeros((), dtype=torch.int64)
        h = torch.zeros_like(x)

        def body(i, h):
            return i + 1, torch.tanh(self.cell(h) + x)

        _, h = while_loop(lambda i, h: i < steps, body, (i, h))  # x, steps: additional inputs
        return h


class BranchInLoop(torch.nn.Module):
    """A torch.cond inside the body: Collatz steps until 1, counting them."""

    def forward(self, v):
        n = torch.zeros((), dtype=torch.int64)

        def step(n, v):
            nxt = torch.cond(v % 2 == 0, lambda v: v // 2, lambda v: 3 * v + 1, (v,))
            return n + 1, nxt

        return while_loop(lambda n, v: v != 1, step, (n, v))


def _eager(model, args):
    out = model(*args)
    return out if isinstance(out, tuple) else (out,)


def _check(loaded, model, calls):
    for args in calls:
        expected = _eager(model, args)
        got = loaded.forward(*args)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            torch.testing.assert_close(torch.as_tensor(g), e, atol=TOL, rtol=TOL)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_loop_whose_trip_count_the_values_decide(kernels):
    model = Doubling()
    calls = [(torch.full((4,), k),) for k in (1.0, 0.3, 15.0, 200.0, -7.0)]
    assert {int(model(*c)[0]) for c in calls} >= {0, 1, 5}  # zero, one and many iterations
    program = pteron.to_edge_transform_and_lower(pteron.export(model, calls[0]), kernels=kernels, progress=False)
    _check(program.load(), model, calls)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_recurrence_with_weights_in_the_body(kernels):
    model = Recurrence().eval()
    x = torch.randn(2, 16)
    calls = [(x, torch.tensor(n)) for n in (0, 1, 5, 12)]
    program = pteron.to_edge_transform_and_lower(pteron.export(model, calls[2]), kernels=kernels, progress=False)
    loaded = program.load()
    _check(loaded, model, calls)
    _check(loaded, model, calls[::-1])  # the loop state starts from the inputs every call


def test_a_cond_inside_the_loop_body():
    model = BranchInLoop()
    calls = [(torch.tensor(v),) for v in (1, 2, 6, 27, 97)]
    assert [int(model(*c)[0]) for c in calls] == [0, 1, 8, 111, 118]
    program = pteron.to_edge_transform_and_lower(pteron.export(model, calls[2]), kernels=["portable"], progress=False)
    _check(program.load(), model, calls)


def test_compile_and_run_from_the_cli(tmp_path):
    model = Doubling()
    x = torch.full((4,), 0.3)
    pt2, pte = tmp_path / "doubling.pt2", tmp_path / "doubling.pte"
    torch.export.save(pteron.export(model, (x,)), pt2)
    run = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(pte)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    np.savez(tmp_path / "in.npz", input_0=x.numpy())
    out = tmp_path / "out.npz"
    run = subprocess.run(
        [pteron_cli(), "run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    count, doubled = _eager(model, (x,))
    assert int(np.load(out)["output_0"]) == int(count) == 7
    np.testing.assert_allclose(np.load(out)["output_1"], doubled.numpy(), atol=TOL, rtol=TOL)


class CumulativeSum(torch.nn.Module):
    """A scan whose carry is the running sum and whose stacked result is twice it."""

    def forward(self, xs):
        def step(total, x):
            total = total + x
            return total, total * 2

        return scan(step, torch.zeros(4), xs)


class GatedElman(torch.nn.Module):
    """A tanh recurrence over the time axis with weights in the step (constants of the subgraph)
    and two inputs scanned together; returns the last state and every step's output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.cell = torch.nn.Linear(8, 8)
        self.inp = torch.nn.Linear(3, 8)

    def forward(self, xs, gates, h0):
        def step(h, row):
            x, g = row
            h = torch.tanh(self.cell(h) + self.inp(x)) * g
            return h, h.sum(-1)

        return scan(step, h0, (xs, gates))


class ScaleRows(torch.nn.Module):
    def forward(self, xs, y):
        return map_rows(lambda x, y: x * y + 1, xs, y)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_scan_matches_torch(kernels):
    for model, calls in [
        (CumulativeSum(), [(torch.randn(5, 4),), (torch.randn(5, 4),)]),
        (GatedElman().eval(), [(torch.randn(6, 2, 3), torch.rand(6, 2, 1), torch.randn(2, 8)) for _ in range(2)]),
        (ScaleRows(), [(torch.randn(5, 4), torch.randn(4)) for _ in range(2)]),
    ]:
        program = pteron.to_edge_transform_and_lower(pteron.export(model, calls[0]), kernels=kernels, progress=False)
        _check(program.load(), model, calls)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_scan_over_a_dynamic_number_of_rows(kernels):
    # Calls longer, shorter and longer again: each call's stacked results have as many rows as its
    # input (none left from a longer call before it), and the carry starts from init each call.
    t = torch.export.Dim("t", min=1, max=16)
    for model, args, shapes, lengths in [
        (CumulativeSum(), lambda n: (torch.randn(n, 4),), {"xs": {0: t}}, [5, 1, 16, 3, 9]),
        (
            GatedElman().eval(),
            lambda n: (torch.randn(n, 2, 3), torch.rand(n, 2, 1), torch.randn(2, 8)),
            {"xs": {0: t}, "gates": {0: t}, "h0": None},
            [6, 2, 11, 1],
        ),
        (ScaleRows(), lambda n: (torch.randn(n, 4), torch.randn(4)), {"xs": {0: t}, "y": None}, [5, 16, 2]),
    ]:
        ep = pteron.export(model, args(5), dynamic_shapes=shapes)
        loaded = pteron.to_edge_transform_and_lower(ep, kernels=kernels, progress=False).load()
        calls = [args(n) for n in lengths]
        _check(loaded, model, calls)
        assert [loaded.forward(*c)[-1].shape[0] for c in calls] == lengths


def test_a_dynamic_scan_refuses_zero_rows_and_rows_beyond_its_bound():
    ep = pteron.export(CumulativeSum(), (torch.randn(5, 4),), dynamic_shapes={"xs": {0: torch.export.Dim("t", max=16)}})
    loaded = pteron.to_edge_transform_and_lower(ep, progress=False).load()
    torch.testing.assert_close(torch.as_tensor(loaded.forward(torch.ones(3, 4))[1]), torch.ones(3, 4).cumsum(0) * 2)
    with pytest.raises(RuntimeError, match="scan over zero rows"):
        loaded.forward(torch.ones(0, 4))
    with pytest.raises(RuntimeError, match="16"):
        loaded.forward(torch.ones(17, 4))
    # The program is still usable after a refused call.
    torch.testing.assert_close(torch.as_tensor(loaded.forward(torch.ones(2, 4))[0]), torch.full((4,), 2.0))
