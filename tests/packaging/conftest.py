"""Shared set-up of the packaging tests: an install of this checkout's build (cmake --install)
into a temporary prefix outside the checkout, a small model exported with torch, and its
reference output."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "build"


def clean_env(**extra) -> dict:
    """The environment without anything that points back into the checkout (PTERON_* paths,
    PYTHONPATH, VK_LAYER_PATH), so installed tools must find their own files; host compiles
    without the cost model's calibration (as every test's, tests/conftest.py) unless `extra`
    says otherwise."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PTERON_") and k not in ("PYTHONPATH", "VK_LAYER_PATH", "VK_INSTANCE_LAYERS")}
    env["PTERON_CALIBRATION"] = "off"
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def install_prefix(tmp_path_factory) -> Path:
    prefix = tmp_path_factory.mktemp("pteron-install")
    subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(prefix)], check=True,
                   capture_output=True)
    return prefix


@pytest.fixture(scope="session")
def small_model(tmp_path_factory):
    """(model.pt2, input .npy file, torch's output) of a linear + relu + conv-free model."""
    import torch

    folder = tmp_path_factory.mktemp("packaging-model")

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(32, 64)
            self.fc2 = torch.nn.Linear(64, 10)

        def forward(self, x):
            return torch.softmax(self.fc2(torch.relu(self.fc1(x))), dim=-1)

    torch.manual_seed(7)
    model = Model().eval()
    x = torch.randn(4, 32)
    ep = torch.export.export(model, (x,)).run_decompositions()
    pt2 = folder / "model.pt2"
    torch.export.save(ep, pt2)
    np.savez(folder / "in.npz", x.numpy())
    x.numpy().astype(np.float32).tofile(folder / "in0.bin")
    with torch.no_grad():
        expected = model(x).numpy()
    return pt2, folder, expected
