"""`make demo` step: the Vulkan GPU path (on lavapipe here) with its CPU fallback plan.

Compiles the demo model for `vulkan,portable` carrying a `forward:cpu` plan
(`--fallback xnnpack,portable`), shows the delegation, runs it on the Vulkan device and checks
it against PyTorch, then runs the same file with no Vulkan driver (VK_ICD_FILENAMES pointing
nowhere) to show the runtime picking the CPU plan at load time.
"""

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def _run(cmd, env):
    print("  $ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    t = time.perf_counter()
    done = subprocess.run(cmd, text=True, capture_output=True, env=env)
    seconds = time.perf_counter() - t
    out = (done.stdout + done.stderr).rstrip()
    if out:
        print("\n".join("    " + line for line in out.splitlines()), flush=True)
    if done.returncode != 0:
        sys.exit(f"demo: command failed with exit code {done.returncode}")
    return seconds


def vulkan_step(model: str, work: Path, pt2: Path, inputs_npz: Path, expected: list) -> None:
    pte, out = work / f"{model}-vulkan.pte", work / "outputs-vulkan.npz"
    env = dict(os.environ)
    if os.path.exists(LAVAPIPE):
        env.setdefault("VK_ICD_FILENAMES", LAVAPIPE)
    _run(["pteron", "compile", str(pt2), "-o", str(pte), "--backends", "vulkan,portable",
          "--fallback", "xnnpack,portable"], env)
    _run(["pteron", "inspect", str(pte), "--delegation"], env)
    seconds = _run(["pteron", "run", str(pte), "--inputs", str(inputs_npz), "--outputs", str(out)],
                   env)
    got = np.load(out)
    for i, e in enumerate(expected):
        err = float(np.abs(got[f"output_{i}"] - e.numpy()).max())
        tol = 1e-4 * (1 + float(e.abs().max()))
        print(f"  Vulkan output {i}: max |pteron - torch| = {err:.3g} (tolerance {tol:.3g}), "
              f"load + run {seconds:.1f} s on {env.get('VK_ICD_FILENAMES', 'the default device')}")
        if err > tol:
            sys.exit("demo: FAILED - the Vulkan program differs from PyTorch beyond tolerance")
    print("  the same file on a machine without a Vulkan driver runs its CPU plan:")
    _run(["pteron", "run", str(pte), "--inputs", str(inputs_npz), "--iters", "3"],
         dict(os.environ, VK_ICD_FILENAMES=str(work / "no-vulkan-driver.json")))
