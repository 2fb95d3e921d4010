"""Run-time checks on tensor values (torch._check_tensor_all, transformers'
torch_compilable_check, `torch._check(lengths.max().item() <= n)`): export writes them as
_local_scalar_dense, symbolic arithmetic and _assert_scalar. Checks on integer and bool values are
enforced as torch's exported program enforces them: a call whose values break one fails in one
line naming export's condition, and the program keeps working. Checks pteron cannot evaluate (on
floating values) are left out, and the compile report notes where each was. Results against
PyTorch exactly (x * 2 in float32)."""

import subprocess
import warnings

import numpy as np
import pytest
import torch

import pteron
from pteron_cli import assert_one_line_error, pteron_cli


class Checked(torch.nn.Module):
    """What transformers' deformable-attention models check (spatial shapes against the
    sequence: a bool), XLM / FlauBERT's check of lengths against the sequence (an integer), and
    a lower bound with arithmetic on the value."""

    def forward(self, x, lengths, shapes):
        torch._check_tensor_all((shapes[:, 0] * shapes[:, 1]).sum() == x.shape[1])
        torch._check(lengths.max().item() <= x.shape[1])
        torch._check(lengths.min().item() * 2 - 1 >= 1)
        return x * 2


ARGS = (torch.randn(1, 20), torch.tensor([3, 5]), torch.tensor([[4, 4], [2, 2]]))


def _program(kernels):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = pteron.to_edge_transform_and_lower(pteron.export(Checked(), ARGS), kernels=kernels, progress=False)
    assert not [w for w in caught if "tensor values" in str(w.message)]  # nothing left out
    return program.load()


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_integer_and_bool_value_checks_fail_the_call_as_torch(kernels):
    loaded = _program(kernels)
    x, lengths, shapes = ARGS
    for good in ([1, 20], [20, 20], [3, 5]):
        assert torch.equal(torch.as_tensor(loaded.forward(x, torch.tensor(good), shapes)[0]), x * 2)
    with pytest.raises(RuntimeError, match=r"u\d+ <= 20.*\(sizes 21 and 20\)"):
        loaded.forward(x, torch.tensor([3, 21]), shapes)
    with pytest.raises(RuntimeError, match=r"2\*u\d+ - 1 >= 1|u\d+ >= 1"):
        loaded.forward(x, torch.tensor([0, 5]), shapes)
    with pytest.raises(RuntimeError, match=r"Eq\(u\d+, 1\)|u\d+ >= 1"):
        loaded.forward(x, lengths, torch.tensor([[4, 4], [2, 3]]))  # 22 positions for 20
    # torch's exported program fails the same calls
    ep = pteron.export(Checked(), ARGS)
    with pytest.raises(RuntimeError):
        ep.module()(x, torch.tensor([3, 21]), shapes)
    with pytest.raises(RuntimeError):
        ep.module()(x, lengths, torch.tensor([[4, 4], [2, 3]]))
    assert torch.equal(torch.as_tensor(loaded.forward(*ARGS)[0]), x * 2)  # still usable


def test_a_failed_value_check_is_one_line_from_the_cli(tmp_path):
    pt2, pte = tmp_path / "checked.pt2", tmp_path / "checked.pte"
    torch.export.save(pteron.export(Checked(), ARGS), pt2)
    run = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(pte)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    inputs = (ARGS[0], torch.tensor([3, 21]), ARGS[2])
    np.savez(tmp_path / "in.npz", **{f"input_{i}": t.numpy() for i, t in enumerate(inputs)})
    run = subprocess.run([pteron_cli(), "run", str(pte), "--inputs", str(tmp_path / "in.npz")], capture_output=True, text=True)
    assert_one_line_error(run, "<= 20", "(sizes 21 and 20)")


class CheckedConstants(torch.nn.Module):
    """Checks on buffers only (D-FINE's spatial shapes are such): the compiler folds the tensors
    computing their conditions into constants, and reads the values from those."""

    def __init__(self):
        super().__init__()
        self.register_buffer("shapes", torch.tensor([[4, 4], [2, 2]]))
        self.register_buffer("limit", torch.tensor(20))

    def forward(self, x):
        torch._check_tensor_all((self.shapes[:, 0] * self.shapes[:, 1]).sum() == x.shape[1])
        torch._check((self.limit * 2).item() >= x.shape[1])
        return x * 2


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_value_checks_on_constants(kernels):
    x = torch.randn(1, 20)
    program = pteron.to_edge_transform_and_lower(pteron.export(CheckedConstants(), (x,)), kernels=kernels, progress=False).load()
    assert torch.equal(torch.as_tensor(program.forward(x)[0]), x * 2)


class FloatChecked(torch.nn.Module):
    def forward(self, x):
        torch._check(x.abs().max().item() < 100.0)
        return x * 2


def test_float_value_checks_are_left_out_with_a_note_naming_them():
    x = torch.randn(1, 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        program = pteron.to_edge_transform_and_lower(pteron.export(FloatChecked(), (x,)), progress=False)
    notes = [str(w.message) for w in caught if "tensor values" in str(w.message)]
    assert len(notes) == 1 and notes[0].count("test_value_checks.py:") == 1, notes
    assert "not enforced" in notes[0]
    loaded = program.load()
    assert torch.equal(torch.as_tensor(loaded.forward(x)[0]), x * 2)
    # not enforced: a value past the check runs as any other input
    assert torch.equal(torch.as_tensor(loaded.forward(x * 1000)[0]), x * 2000)


class SliceToValue(torch.nn.Module):
    """x[:n.max().item()] with no torch._check: the slice clamps, so its length is bounded by
    the dim whatever the value (negative counts from the end, as in torch)."""

    def forward(self, x, n):
        k = n.max().item()
        return x[:k] * 2, x[k:].sum(0, keepdim=True)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_slice_by_an_unbounded_value_clamps_as_torch(kernels):
    x = torch.randn(8, 3)
    program = pteron.to_edge_transform_and_lower(
        pteron.export(SliceToValue(), (x, torch.tensor([3]))), kernels=kernels, progress=False
    ).load()
    for n in (3, 0, 8, 100, -2, -100, 5):
        got = program.forward(x, torch.tensor([n]))
        want = SliceToValue()(x, torch.tensor([n]))
        for g, w in zip(got, want):
            torch.testing.assert_close(torch.as_tensor(g), w, rtol=1e-6, atol=1e-6)


def test_a_scalar_that_sets_a_size_is_still_refused():
    class Ranged(torch.nn.Module):
        def forward(self, n):
            return torch.arange(n.max().item())

    ep = pteron.export(Ranged(), (torch.tensor([3]),))
    with pytest.raises(pteron.CompileError, match=r"Tensor.item\(\)\) has no upper bound; torch._check\(u0 <= N\)"):
        pteron.to_edge_transform_and_lower(ep, progress=False)
