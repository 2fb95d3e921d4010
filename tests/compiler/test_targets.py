"""Target files choose backends and kernel libraries: `--target cortex-a76` (Raspberry Pi 5)
compiles with the XNNPACK delegate and the optimized kernels, and the program says so."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
import pt2_models  # noqa: E402
from test_bad_input import pteron_cli  # noqa: E402


@pytest.fixture(scope="module")
def convnet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pt2")
    module, inputs = pt2_models.build()["convnet"]
    import torch

    torch.export.save(pt2_models.export(module, inputs), folder / "convnet.pt2")
    return folder / "convnet.pt2"


def test_cortex_a76_target_uses_xnnpack_and_optimized_kernels(convnet, tmp_path):
    pte = tmp_path / "convnet.pte"
    out = subprocess.run([pteron_cli(), "compile", convnet, "-o", pte, "--target", "cortex-a76", "--json"],
                         capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["target"] == "cortex-a76"
    assert [r["backend"] for r in report["delegated_regions"]] == ["xnnpack"]
    info = json.loads(subprocess.run([pteron_cli(), "inspect", pte, "--delegation", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    text = json.dumps(info)
    assert "xnnpack" in text and "optimized" in text
    run = subprocess.run([pteron_cli(), "run", pte, "--random-inputs"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
