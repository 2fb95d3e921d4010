"""pteron runs bounded dynamic programs ExecuTorch wrote (tests/fixtures/executorch/
dynamic_seq.pte and dynamic_conv.pte, made by tools/fixtures/make_executorch_dynamic_fixture.py:
portable path, ExecuTorch's default memory planning at the upper bound, views emitted as
executorch_prim::et_view). One loaded method runs every recorded size (min, between, max,
min again) and matches ExecuTorch's own runtime within rtol 1e-5, atol 1e-6 (float32, the same
math summed in another order; measured at most 1.2e-7). A size above the bound is refused
with one line, and the method still runs afterwards."""

import subprocess

import numpy as np
import pytest
import torch
from executorch_fixtures import FIXTURE_DIR

import pteron
from pteron_cli import pteron_cli
from tools.fixtures import make_executorch_dynamic_fixture as fixture_script

TOL = dict(rtol=1e-5, atol=1e-6)
# name: (dynamic dim, its upper bound)
PROGRAMS = {"dynamic_seq": (1, 32), "dynamic_conv": (0, 4)}


def recorded(name):
    arrays = np.load(FIXTURE_DIR / f"{name}_sizes.npz")
    n = len([k for k in arrays.files if k.startswith("input_")])
    return [(arrays[f"input_{k}"], arrays[f"output_{k}"]) for k in range(n)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_one_method_runs_every_recorded_size(name):
    sizes = recorded(name)
    dim, bound = PROGRAMS[name]
    assert {x.shape[dim] for x, _ in sizes} >= {bound}, "fixture no longer covers the bound"
    assert len({x.shape for x, _ in sizes}) >= 3
    program = pteron.load(FIXTURE_DIR / f"{name}.pte")
    assert program.method_meta("forward")["inputs"][0]["shape"][dim] == bound
    method = program.load_method("forward")
    for x, want in sizes:
        got = method.execute([x])[0]
        assert got.shape == want.shape, (x.shape, got.shape)
        np.testing.assert_allclose(got, want, **TOL, err_msg=f"{name} {x.shape}")


def test_seq_program_uses_executorch_view():
    names = pteron.load(FIXTURE_DIR / "dynamic_seq.pte").load_method("forward").instruction_names()
    assert "executorch_prim::et_view.default" in names, names


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_size_above_the_bound_is_one_line_error(name, tmp_path):
    dim, bound = PROGRAMS[name]
    (x, want), *_ = recorded(name)
    shape = list(x.shape)
    shape[dim] = bound + 1
    np.savez(tmp_path / "in.npz", input_0=np.zeros(shape, np.float32))
    pte = str(FIXTURE_DIR / f"{name}.pte")
    run = subprocess.run([pteron_cli(), "run", pte, "--inputs", str(tmp_path / "in.npz")],
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert f"size {bound + 1} in dim {dim}" in lines[0] and f"{bound}]" in lines[0], lines[0]
    method = pteron.load(pte).load_method("forward")
    with pytest.raises(RuntimeError, match=f"dim {dim}"):
        method.execute([np.zeros(shape, np.float32)])
    np.testing.assert_allclose(method.execute([x])[0], want, **TOL)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_recorded_sizes_are_the_fixture_models_in_torch_eager(name):
    """The .npz holds what the fixture script's seeded model computes on its seeded inputs in
    this project's torch (guards a stale fixture; rtol 1e-4, atol 1e-5 as the other fixtures)."""
    make, _, _, shapes = fixture_script.CASES[name]
    torch.manual_seed(0)
    model = make().eval()
    torch.manual_seed(1)
    sizes = recorded(name)
    assert [x.shape for x, _ in sizes] == [tuple(s) for s in shapes]
    for x, want in sizes:
        mine = torch.randn(*x.shape)
        assert torch.equal(mine, torch.from_numpy(x)), "the fixture inputs are not the seeded ones"
        with torch.no_grad():
            np.testing.assert_allclose(model(mine).numpy(), want, rtol=1e-4, atol=1e-5)
