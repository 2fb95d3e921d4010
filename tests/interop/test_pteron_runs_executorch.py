"""pteron runs the programs ExecuTorch 1.5.1 wrote (tests/fixtures/executorch/) and gets the
outputs ExecuTorch's own runtime got, both through the Python API (`pteron.load(pte).forward`)
and through the CLI (`pteron run --inputs in.npz --outputs out.npz`).

Tolerances: outputs that are integer or float16, and float32 outputs that are pure data movement
or one correctly rounded IEEE operation per element (copies, clamp, x + y, x * c + d, dtype
conversions: listed in EXACT) must be bit-identical. Other float32 outputs (sums, matmuls,
convolutions, softmax, layer norm: the summation order is the kernels' own) must agree within
1e-5 relative, i.e. |got - want| <= 1e-5 * |want| + 1e-5 * max|want|; the second term keeps
elements near zero from demanding more absolute precision than the output's scale allows.
"""

import subprocess
from pathlib import Path

import numpy as np
import pteron
import pytest
import torch
from executorch_fixtures import FIXTURE_DIR, NAMES, load_fixture
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
RTOL = 1e-5

# Outputs (fixture -> output indices) that must match bit for bit whatever their dtype.
EXACT = {
    "add": {0},  # x + y
    # x*2.5+1, x.to(int32), clamp, channels-last clone, full + i, x.to(float16), arange + x
    "scalar_args": {2, 3, 4, 5, 6, 7, 8},
}


def assert_matches_executorch(name: str, got: list, want: list) -> None:
    assert len(got) == len(want), f"{name}: {len(got)} outputs, ExecuTorch has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        where = f"{name} output {i}"
        assert g.dtype == w.dtype, f"{where}: dtype {g.dtype}, ExecuTorch {w.dtype}"
        assert g.shape == w.shape, f"{where}: shape {tuple(g.shape)}, ExecuTorch {tuple(w.shape)}"
        if i in EXACT.get(name, ()) or not w.is_floating_point() or w.dtype == torch.float16:
            assert torch.equal(g, w), f"{where}: not bit-identical to ExecuTorch"
            continue
        scale = w.abs().max().item() or 1.0
        torch.testing.assert_close(g, w, rtol=RTOL, atol=RTOL * scale,
                                   msg=lambda m, where=where: f"{where}: {m}")


@pytest.mark.parametrize("name", NAMES)
def test_python_api_matches_executorch(name):
    path, inputs, outputs, _ = load_fixture(name)
    got = pteron.load(path).forward(*inputs)
    assert all(isinstance(g, torch.Tensor) for g in got), "torch inputs must give torch outputs"
    assert_matches_executorch(name, [g.contiguous() for g in got], outputs)


@pytest.mark.parametrize("name", NAMES)
def test_python_api_from_bytes_with_numpy_inputs(name):
    path, inputs, outputs, _ = load_fixture(name)
    got = pteron.load(path.read_bytes()).forward(*[x.numpy() for x in inputs])
    assert all(isinstance(g, np.ndarray) for g in got), "numpy inputs must give numpy outputs"
    assert_matches_executorch(name, [torch.from_numpy(np.ascontiguousarray(g)) for g in got],
                              outputs)


@pytest.mark.parametrize("name", NAMES)
def test_cli_run_matches_executorch(name, tmp_path):
    path, _, outputs, _ = load_fixture(name)
    out = tmp_path / "out.npz"
    # The fixture .npz holds input_0.. (what the CLI reads) next to ExecuTorch's output_0..
    command = [pteron_cli(), "run", str(path), "--inputs", str(FIXTURE_DIR / f"{name}.npz"),
               "--outputs", str(out)]
    proc = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    arrays = np.load(out)
    assert set(arrays.files) == {f"output_{i}" for i in range(len(outputs))}
    got = [torch.from_numpy(arrays[f"output_{i}"]) for i in range(len(outputs))]
    assert_matches_executorch(name, got, outputs)
