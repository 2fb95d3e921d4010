"""Whole int8 programs on the int8 kernel library's host paths (kernels/cortex_m/host): a
residual CNN quantized by `pteron compile --quantize xnnpack` and compiled for
`cortex-m,optimized,portable` gives the same bytes on 2 threads with this CPU's best host path,
with the AVX2 paths and with the scalar reference (PTERON_ISA=baseline, 1 thread). Its
convolutions are large enough to run on the thread pool. Compiled for a Cortex-M target, the
memory planner places a convolution's output a few rows before its dying input
(kernels/cortex_m/in_place.h), which the threaded paths must not read after overwriting (they
read a copy of such an input); compiled for the host (threaded_kernels in targets/host.toml), it
does not overlap them at all."""

import json
import os
import subprocess

import numpy as np
import pytest
import torch
from pteron_cli import pteron_cli


class ResidualCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.stem = torch.nn.Conv2d(3, 32, 3, padding=1)
        self.a = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.b = torch.nn.Conv2d(32, 32, 3, padding=1)
        self.dw = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
        self.pw = torch.nn.Conv2d(32, 48, 1)
        self.fc = torch.nn.Linear(48, 10)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = torch.relu(x + self.b(torch.relu(self.a(x))))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.pw(torch.relu(self.dw(x))))
        return self.fc(x.mean((2, 3)))


TARGETS = {"host": "cortex-m,optimized,portable", "cortex-m55-an547": "cortex-m,portable"}


@pytest.fixture(scope="module", params=sorted(TARGETS))
def program(request, tmp_path_factory):
    target = request.param
    work = tmp_path_factory.mktemp(f"cm-host-{target}")
    x = torch.randn(1, 3, 40, 40)
    ep = torch.export.export(ResidualCnn().eval(), (x,)).run_decompositions()
    torch.export.save(ep, work / "net.pt2")
    rng = np.random.default_rng(5)
    np.savez(work / "cal.npz", input_0=rng.standard_normal((8, 1, 3, 40, 40)).astype(np.float32))
    np.savez(work / "in.npz", input_0=rng.standard_normal((1, 3, 40, 40)).astype(np.float32))
    pte = work / "net.pte"
    run = subprocess.run([pteron_cli(), "compile", work / "net.pt2", "-o", pte, "--quantize", "xnnpack",
                          "--calibration", work / "cal.npz", "--target", target, "--backends", TARGETS[target],
                          "--json"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    in_place = json.loads(run.stdout)["memory"]["in_place_outputs"]
    # The residual add writes over its dying operand on both; only the Cortex-M plan puts the
    # convolutions' outputs over their inputs.
    assert in_place == 1 if target == "host" else in_place > 1, in_place
    return work, pte


def run_program(work, pte, isa, threads):
    out = work / f"out-{isa}-{threads}.npz"
    env = {"PTERON_ISA": isa} if isa else {}
    run = subprocess.run([pteron_cli(), "run", pte, "--inputs", work / "in.npz", "--outputs", out,
                          "--threads", str(threads)], env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return np.load(out)["output_0"]


def test_every_host_path_gives_the_scalar_reference_bytes(program):
    work, pte = program
    inspect = subprocess.run([pteron_cli(), "inspect", pte], capture_output=True, text=True, check=True)
    assert "cortex_m::quantized_conv2d_nhwc.out" in inspect.stdout
    reference = run_program(work, pte, "baseline", 1)
    for isa in (None, "avx2"):
        for _ in range(3):  # a race shows up in some runs only
            np.testing.assert_array_equal(run_program(work, pte, isa, 2), reference)
