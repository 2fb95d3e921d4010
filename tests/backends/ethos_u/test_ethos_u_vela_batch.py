"""One Vela process per program, not one per Ethos-U region (backends/ethos_u/aot/vela.cpp).

A quantized net whose linear layers are split by a CPU-only op (abs: no TOSA lowering) has one
Ethos-U region per layer. Compiled with PTERON_VELA and PTERON_VELA_PYTHON pointing at wrapper
scripts that log every start before running the real program, it starts one Python process for
all regions (Vela's main() once per region inside it; no `vela` process, not even for
`--version`), and the program is byte for byte the one a Vela process per region gives (what a
vela program without a known Python falls back to).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "backends" / "tosa"))
sys.path.insert(0, str(REPO / "tests" / "cli"))
from test_bad_input import pteron_cli  # noqa: E402
from test_tosa_executor import arm_python  # noqa: E402

LAYERS = 6


def many_region_model(tmp_path: Path) -> tuple[Path, Path]:
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.ModuleList(torch.nn.Linear(32, 32) for _ in range(LAYERS))

        def forward(self, x):
            for fc in self.fc:
                x = torch.abs(fc(x))
            return x

    torch.manual_seed(0)
    ep = torch.export.export(Net().eval(), (torch.randn(1, 32),)).run_decompositions()
    torch.export.save(ep, tmp_path / "net.pt2")
    np.savez(tmp_path / "cal.npz",
             input_0=np.random.default_rng(0).standard_normal((4, 1, 32)).astype(np.float32))
    return tmp_path / "net.pt2", tmp_path / "cal.npz"


def wrapper(path: Path, log: Path, word: str, program: str) -> str:
    path.write_text(f'#!/bin/sh\necho {word} >> "{log}"\nexec "{program}" "$@"\n')
    path.chmod(0o755)
    return str(path)


def test_many_regions_compile_in_one_vela_process(tmp_path):
    pt2, cal = many_region_model(tmp_path)
    python = arm_python()
    log = tmp_path / "starts.log"
    env = {k: v for k, v in os.environ.items() if k != "PTERON_VELA_PYTHON"}
    env["PTERON_VELA"] = wrapper(tmp_path / "vela.sh", log, "vela", str(Path(python).parent / "vela"))

    def compile_with(extra_env: dict, out: Path) -> tuple[dict, list[str]]:
        log.write_text("")
        r = subprocess.run([pteron_cli(), "compile", pt2, "-o", out, "--target", "ethos-u55-128",
                            "--backends", "ethos-u,cortex-m,portable", "--quantize", "ethos-u",
                            "--calibration", cal, "--int8-io", "--json"],
                           capture_output=True, text=True, timeout=600, env={**env, **extra_env})
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout), log.read_text().split()

    # The vela wrapper is a shell script: no Python to batch with, one process per region.
    report, starts = compile_with({}, tmp_path / "per_region.pte")
    regions = report["delegated_regions"]
    assert len(regions) == LAYERS and all(r["backend"] == "ethos-u" for r in regions)
    assert starts == ["vela"] * (LAYERS + 1)  # each region, and `vela --version` once

    batched, starts = compile_with(
        {"PTERON_VELA_PYTHON": wrapper(tmp_path / "python.sh", log, "python", python)},
        tmp_path / "batched.pte")
    assert starts == ["python"]
    assert [r["report"] for r in batched["delegated_regions"]] == [r["report"] for r in regions]
    assert (tmp_path / "batched.pte").read_bytes() == (tmp_path / "per_region.pte").read_bytes()
