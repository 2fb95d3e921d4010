"""`make demo`'s VGF step: the same model for Arm's ML SDK for Vulkan.

pteron compile --backends vgf,xnnpack,portable lowers what the TOSA FP profile takes to TOSA,
converts it to .vgf with the ML SDK model converter and leaves the rest to XNNPACK and the
portable kernels; pteron run executes the VGF regions through VK_ARM_data_graph, here on
lavapipe through Arm's ML emulation layer (backends/vgf/README.md).
"""

import os
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def vgf_step(sh, pt2: Path, work: Path, inputs_npz: Path, expected, model_name: str) -> None:
    """Compile `pt2` for vgf,xnnpack,portable, show where each node went, run it and compare
    with PyTorch's `expected` outputs (fp32, tolerance 1e-4 * (1 + max |ref|))."""
    if os.path.exists(LAVAPIPE):
        os.environ.setdefault("VK_ICD_FILENAMES", LAVAPIPE)
    os.environ.setdefault("VK_LAYER_PATH", str(REPO / "build" / "vgf_layers"))
    print(f"  VK_ICD_FILENAMES={os.environ.get('VK_ICD_FILENAMES', '')} "
          f"VK_LAYER_PATH={os.environ['VK_LAYER_PATH']} (lavapipe + ML emulation layer)")
    pte, out = work / f"{model_name}-vgf.pte", work / "outputs-vgf.npz"
    sh(["pteron", "compile", str(pt2), "-o", str(pte), "--backends", "vgf,xnnpack,portable"])
    sh(["pteron", "inspect", str(pte), "--delegation"])
    sh(["pteron", "run", str(pte), "--inputs", str(inputs_npz), "--outputs", str(out)])
    got = np.load(out)
    for i, e in enumerate(expected):
        a = got[f"output_{i}"]
        err = float(np.abs(a - e.numpy()).max())
        tol = 1e-4 * (1 + float(e.abs().max()))
        print(f"  output {i}: max |vgf - torch| = {err:.3g} (tolerance {tol:.3g})")
        if err > tol:
            raise SystemExit("demo: FAILED - the VGF program differs from PyTorch beyond tolerance")
    print(f"  {pte} matches PyTorch")
