"""The program a user gets without choosing backends is the host's best CPU program: XNNPACK,
then the optimized kernels, then portable; portable alone is an explicit choice. Checked on
a conv net (XNNPACK claims its convolution and linear) through the CLI and the Python API,
with outputs equal to PyTorch's."""

import json
import subprocess

import numpy as np
import pteron
import pytest
import torch
from pteron_cli import pteron_cli

DEFAULT = ["xnnpack", "cortex-m", "optimized", "portable"]


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).mean((2, 3)))


def compile_json(pt2, pte, *args):
    run = subprocess.run(
        [pteron_cli(), "compile", str(pt2), "-o", str(pte), "--json", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture(scope="module")
def conv_pt2(tmp_path_factory):
    torch.manual_seed(0)
    x = torch.randn(1, 3, 16, 16)
    ep = torch.export.export(ConvNet().eval(), (x,)).run_decompositions()
    path = tmp_path_factory.mktemp("default") / "conv.pt2"
    torch.export.save(ep, path)
    return path, ep, x


def test_the_cli_default_is_the_best_cpu_program(conv_pt2, tmp_path):
    pt2, ep, x = conv_pt2
    report = compile_json(pt2, tmp_path / "default.pte")
    assert report["backends"] == DEFAULT and report["default_backends"] is True
    assert [r["backend"] for r in report["delegated_regions"]] == ["xnnpack"]
    human = subprocess.run(
        [pteron_cli(), "compile", str(pt2), "-o", str(tmp_path / "h.pte")], capture_output=True, text=True, timeout=300
    )
    assert "backends: xnnpack,cortex-m,optimized,portable (the target's default" in human.stdout
    got = pteron.load(tmp_path / "default.pte").forward(x.numpy())[0]
    np.testing.assert_allclose(got, ep.module()(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_portable_is_an_explicit_choice(conv_pt2, tmp_path):
    pt2, _, _ = conv_pt2
    report = compile_json(pt2, tmp_path / "portable.pte", "--backends", "portable")
    assert report["backends"] == ["portable"] and report["default_backends"] is False
    assert report["delegated_regions"] == []


def test_the_python_default_is_the_same(conv_pt2):
    _, ep, x = conv_pt2
    lowered = pteron.to_edge_transform_and_lower(ep)
    assert lowered.report["backends"] == DEFAULT
    portable = pteron.to_edge_transform_and_lower(ep, kernels=("portable",))
    assert portable.report["backends"] == ["portable"]
    xnnpack = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()])
    assert xnnpack.report["backends"] == ["xnnpack"]  # kernels: the target's optimized, portable
