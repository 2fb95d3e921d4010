"""Access to the ExecuTorch-written fixtures in tests/fixtures/executorch/ (see FORMAT_NOTES.md
there): the .pte path, ExecuTorch's inputs and outputs as torch tensors, and the manifest entry.
Interop tests (pteron loading and running ExecuTorch's programs) build on this."""

import json
from pathlib import Path

import numpy as np
import torch

FIXTURE_DIR = Path(__file__).resolve().parents[1] / "fixtures" / "executorch"
MANIFEST = json.loads((FIXTURE_DIR / "manifest.json").read_text())
NAMES = list(MANIFEST["programs"])


def load_fixture(name: str):
    """(pte path, inputs tuple, ExecuTorch's outputs list, manifest entry)."""
    entry = MANIFEST["programs"][name]
    arrays = np.load(FIXTURE_DIR / f"{name}.npz")
    inputs = tuple(torch.from_numpy(arrays[f"input_{i}"]) for i in range(len(entry["inputs"])))
    outputs = [torch.from_numpy(arrays[f"output_{i}"]) for i in range(len(entry["outputs"]))]
    return FIXTURE_DIR / entry["file"], inputs, outputs, entry
