"""Thread control from Python, as PyTorch users expect: pteron.set_num_threads(n) for the process
(the CLI's --threads) and pteron.load(path, threads=n) for one program, which switches only
around its own loads and runs; pteron.set_spin_workers(False) / PTERON_SPIN_WORKERS=0 for workers
that sleep between calls. Results match torch (float32, rtol 1e-4) whatever the setting."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

import pteron


@pytest.fixture(scope="module")
def program_path(tmp_path_factory):
    torch.manual_seed(11)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 12 * 12, 10)).eval()
    x = torch.randn(2, 3, 12, 12)
    path = tmp_path_factory.mktemp("threads") / "model.pte"
    pteron.to_edge_transform_and_lower(pteron.export(model, (x,))).save(path)
    with torch.no_grad():
        return path, x, model(x).numpy()


@pytest.fixture(autouse=True)
def default_threads():
    yield
    pteron.set_num_threads(0)


def test_set_num_threads_is_process_wide(program_path):
    path, x, expected = program_path
    for n in (1, 3):
        pteron.set_num_threads(n)
        assert pteron.get_num_threads() == n
        (out,) = pteron.load(path).forward(x)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    pteron.set_num_threads(0)
    assert pteron.get_num_threads() >= 1  # the default: hardware concurrency capped at 4


def test_per_program_threads_leave_the_process_setting(program_path):
    path, x, expected = program_path
    pteron.set_num_threads(2)
    single = pteron.load(path, threads=1)
    (out,) = single.forward(x)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    assert pteron.get_num_threads() == 2  # restored after the program's load and run


@pytest.mark.parametrize("bad", [-1, 1.5, "2"])
def test_bad_thread_counts_are_refused(program_path, bad):
    path, _, _ = program_path
    with pytest.raises(ValueError, match="threads must be an int >= 0"):
        pteron.load(path, threads=bad)
    with pytest.raises(ValueError, match="threads must be an int >= 0"):
        pteron.set_num_threads(bad)


@pytest.mark.parametrize("spin", [False, True])
def test_sleeping_or_spinning_workers_give_the_same_results(program_path, spin):
    path, x, expected = program_path
    pteron.set_num_threads(2)
    try:
        pteron.set_spin_workers(spin)
        method = pteron.load(path)
        for _ in range(3):  # the later calls find the workers asleep or spinning
            (out,) = method.forward(x)
            np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    finally:
        pteron.set_spin_workers(True)


def test_workers_spin_unless_the_environment_says_0():
    probe = "import pteron_native; print(pteron_native.spin_workers())"
    for env, expected in (({}, "True"), ({"PTERON_SPIN_WORKERS": "0"}, "False"),
                          ({"PTERON_SPIN_WORKERS": "1"}, "True")):
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                             check=True, env={**os.environ, **env}).stdout.strip()
        assert out == expected, env


def test_spin_setting_must_be_a_bool():
    with pytest.raises(ValueError, match="spin must be a bool"):
        pteron.set_spin_workers(1)
