"""Data-dependent output sizes end to end (torch's unbacked SymInts): nonzero, masked_select,
x[mask] and argwhere export with a length u0 that only running the model tells. pteron plans
their outputs at the upper bound (range_constraints' max, else the input's numel) as
DYNAMIC_BOUND tensors the kernels resize, reads u0 at run time from the output right after its
node (for later view / zeros arguments), and drops export's guards the bound implies. Checked
through `pteron compile` + `pteron run` and one loaded method rerun with results of every
length, empty and full included, against PyTorch (integers exactly, float32 within 1e-6)."""

import subprocess

import numpy as np
import pytest
import torch

import pteron
from pteron_cli import pteron_cli


class Nonzero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x)


class MaskedSelect(torch.nn.Module):
    """masked_select with a broadcast mask, then a view and a sum over the selection."""

    def forward(self, x, m):
        y = torch.masked_select(x, m)
        return y.view(-1, 1) * 2.0, y.sum()


class BoolIndex(torch.nn.Module):
    def forward(self, x):
        return x[x > 0]


class LengthOnly(torch.nn.Module):
    """Only nonzero's length is used: zeros(u0, 3), so u0 is read from an output no node reads."""

    def forward(self, x):
        return torch.zeros(torch.nonzero(x).shape[0], 3) + 1.0


class Argwhere(torch.nn.Module):
    def forward(self, x):
        i = torch.argwhere(x > 0.5)
        return i[:, 1] + 1, i.float().mean(0)


def cli(*args):
    return subprocess.run([pteron_cli(), *args], capture_output=True, text=True)


def _export(model, args, tmp_path, name):
    pt2 = tmp_path / f"{name}.pt2"
    torch.export.save(pteron.export(model, args), pt2)
    return pt2


def _compare(got, want):
    got = torch.as_tensor(np.asarray(got))
    assert tuple(got.shape) == tuple(want.shape), (got.shape, want.shape)
    if want.is_floating_point():
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    else:
        assert torch.equal(got, want)


def _masks(shape):
    """Inputs giving every kind of length: none selected, all selected, some."""
    g = torch.Generator().manual_seed(0)
    return [torch.zeros(shape), torch.ones(shape), (torch.rand(shape, generator=g) > 0.6).float(),
            torch.randn(shape, generator=g)]


@pytest.mark.parametrize("backends", ["portable", "xnnpack,optimized,portable"])
def test_nonzero_compiles_with_the_cli_and_runs_every_length(backends, tmp_path):
    pt2 = _export(Nonzero(), (torch.randn(3, 4),), tmp_path, "nonzero")
    pte = tmp_path / "nonzero.pte"
    run = cli("compile", str(pt2), "-o", str(pte), "--backends", backends)
    assert run.returncode == 0, run.stderr
    for i, x in enumerate(_masks((3, 4))):
        np.savez(tmp_path / "in.npz", input_0=x.numpy())
        out = tmp_path / f"out{i}.npz"
        run = cli("run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs", str(out))
        assert run.returncode == 0, run.stderr
        _compare(np.load(out)["output_0"], torch.nonzero(x))


def test_program_plans_the_output_at_its_bound(tmp_path):
    pt2 = _export(Nonzero(), (torch.randn(3, 4),), tmp_path, "nonzero")
    pte = tmp_path / "nonzero.pte"
    assert cli("compile", str(pt2), "-o", str(pte), "--backends", "portable").returncode == 0
    meta = pteron.load(pte).method_meta("forward")
    assert meta["outputs"][0]["shape"] == [12, 2], meta["outputs"]


@pytest.mark.parametrize("model, make_args", [
    (MaskedSelect(), lambda x: (x, torch.rand(1, 5) > 0.5)),
    (BoolIndex(), lambda x: (x,)),
    (LengthOnly(), lambda x: (x,)),
    (Argwhere(), lambda x: (x,)),
], ids=["masked_select_view_sum", "bool_index", "length_only", "argwhere"])
def test_one_loaded_method_runs_every_length(model, make_args, tmp_path):
    pt2 = _export(model, make_args(torch.randn(4, 5)), tmp_path, "m")
    program = pteron.to_edge_transform_and_lower(str(pt2), kernels=["portable"])
    method = program.load().load_method("forward")
    for x in _masks((4, 5)) + [torch.randn(4, 5)]:
        args = make_args(x)
        want = model(*args)
        want = want if isinstance(want, tuple) else (want,)
        got = method.execute([a.numpy() for a in args])
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _compare(g, w)


def test_a_guard_the_bound_does_not_imply_is_refused_in_one_line(tmp_path):
    class AtLeastTwo(torch.nn.Module):
        def forward(self, x):
            i = torch.nonzero(x)
            torch._check(i.shape[0] >= 2)
            return i

    pt2 = _export(AtLeastTwo(), (torch.ones(3, 4),), tmp_path, "guard")
    run = cli("compile", str(pt2), "-o", str(tmp_path / "g.pte"), "--backends", "portable")
    assert run.returncode == 1, run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "run-time check on sizes" in lines[0], run.stderr


def test_an_unbounded_data_dependent_size_is_refused_in_one_line(tmp_path):
    class FromValue(torch.nn.Module):
        def forward(self, n):
            k = n.item()
            torch._check_is_size(k)
            return torch.ones(k) * 2.0

    try:
        pt2 = _export(FromValue(), (torch.tensor(3),), tmp_path, "unbounded")
    except Exception as e:  # noqa: BLE001 - torch's export decides what it accepts
        pytest.skip(f"torch does not export it: {e}")
    run = cli("compile", str(pt2), "-o", str(tmp_path / "u.pte"), "--backends", "portable")
    assert run.returncode == 1, run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
