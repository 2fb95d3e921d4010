"""The VGF partitioner end to end: torch -> pteron IR -> TOSA (backends/tosa, FP profile) ->
.vgf (ML SDK model converter) -> the VGF delegate on lavapipe through Arm's ML emulation layer,
compared with PyTorch; and how it shares a program with other backends.

Tolerance (fp32, emulated data graph vs torch eager on the same inputs): max abs error within
1e-5 * (1 + max |reference|).
"""

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

REPO = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("PTERON_BUILD", REPO / "build"))
_LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if os.path.exists(_LAVAPIPE):
    os.environ.setdefault("VK_ICD_FILENAMES", _LAVAPIPE)  # before the VGF context is made
os.environ.setdefault("VK_LAYER_PATH", str(BUILD / "vgf_layers"))  # the emulation layer

import pteron  # noqa: E402
from pteron import zoo  # noqa: E402

torch.manual_seed(0)
CLI = shutil.which("pteron") or str(BUILD / "tools" / "cli" / "pteron")


class ConvNet(torch.nn.Module):
    """conv 3x3 + relu, conv 1x1, global average pool, linear: one TOSA FP region."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = self.c2(torch.relu(self.c1(x)))
        return self.fc(h.mean(dim=(2, 3)))


class WithErf(torch.nn.Module):
    """A TOSA region, erf (not in the TOSA lowering alone, nor in XNNPACK), then a region too
    small to repay."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(8 * 12 * 12, 64)
        self.fc2 = torch.nn.Linear(64, 4)

    def forward(self, x):
        h = torch.relu(self.c1(x)).flatten(1)
        return self.fc2(torch.erf(self.fc1(h)))


def _check(model, inputs, backends):
    ep = pteron.export(model.eval(), inputs)
    program = pteron.to_edge_transform_and_lower(ep, partitioner=backends)
    with torch.no_grad():
        expected = model(*inputs)
    actual = program.load().forward(*inputs)[0]
    assert actual.shape == expected.shape
    err = float((actual - expected).abs().max())
    assert err <= 1e-5 * (1 + float(expected.abs().max())), err
    return program.report


def test_conv_net_is_one_vgf_region_matching_torch():
    report = _check(ConvNet(), (torch.randn(2, 3, 16, 16),), [pteron.VgfPartitioner()])
    regions = report["delegated_regions"]
    assert [r["backend"] for r in regions] == ["vgf"], report["refusals"]


def test_fc_autoencoder_runs_on_vgf():
    model, inputs = zoo.get("fc-autoencoder")
    report = _check(model, inputs, [pteron.VgfPartitioner()])
    assert [r["backend"] for r in report["delegated_regions"]] == ["vgf"], report["refusals"]
    assert report["delegated_regions"][0]["nodes"] == 19  # 10 linear + 9 relu


class GeluMlp(torch.nn.Module):
    def __init__(self, approximate):
        super().__init__()
        self.approximate = approximate
        self.fc1 = torch.nn.Linear(64, 256)
        self.fc2 = torch.nn.Linear(256, 64)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x), approximate=self.approximate))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_mlp_is_one_vgf_region_matching_torch(approximate):
    """gelu lowers to TOSA FP (ERF, or TANH for approximate='tanh'), so the MLP is one VGF
    region; through the model converter and the emulation layer it matches torch within
    1e-5 of the output's magnitude."""
    report = _check(GeluMlp(approximate), (torch.randn(4, 64),), [pteron.VgfPartitioner()])
    assert [r["backend"] for r in report["delegated_regions"]] == ["vgf"], report["refusals"]
    assert report["delegated_regions"][0]["nodes"] == 3, report


class PadNet(torch.nn.Module):
    """Every pad TOSA takes: reflection (SLICE + CONCAT), constant (PAD), a crop (SLICE),
    replication, around convolutions without padding of their own."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3)
        self.c2 = torch.nn.Conv2d(8, 8, 3)

    def forward(self, x):
        F = torch.nn.functional
        h = torch.relu(self.c1(F.pad(x, (1, 1, 1, 1), mode="reflect")))
        h = F.pad(h, (2, 1, -1, 2), value=0.25)
        return self.c2(F.pad(h, (1, 2, 2, 1), mode="replicate"))


def test_pads_are_one_vgf_region_matching_torch():
    report = _check(PadNet(), (torch.randn(2, 3, 16, 16),), [pteron.VgfPartitioner()])
    assert [r["backend"] for r in report["delegated_regions"]] == ["vgf"], report["refusals"]


def test_vgf_xnnpack_portable_says_what_moved_where_and_why():
    report = _check(WithErf(), (torch.randn(1, 3, 12, 12),),
                    [pteron.VgfPartitioner(), pteron.XnnpackPartitioner(), "portable"])
    # conv..fc1 on VGF; fc2 alone is too small for a VGF dispatch, so XNNPACK takes it; erf is
    # on neither and stays on the portable kernels with both reasons.
    backends = [r["backend"] for r in report["delegated_regions"]]
    assert backends == ["vgf", "xnnpack"], report
    refusals = "\n".join(report["refusals"])
    assert "erf" in refusals and "vgf: TOSA FP:" in refusals and "xnnpack:" in refusals, refusals


def test_missing_model_converter_gives_the_region_back(monkeypatch):
    monkeypatch.setenv("PTERON_MODEL_CONVERTER", "/no/such/model-converter")
    ep = pteron.export(ConvNet().eval(), (torch.randn(1, 3, 16, 16),))
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VgfPartitioner()])
    assert program.report["delegated_regions"] == []
    refusals = "\n".join(program.report["refusals"])
    assert "PTERON_MODEL_CONVERTER=/no/such/model-converter is not an executable file" in refusals


def _compile_cli(tmp_path, backends):
    model, inputs = ConvNet().eval(), (torch.randn(1, 3, 16, 16),)
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), tmp_path / "net.pt2")
    subprocess.run([CLI, "compile", str(tmp_path / "net.pt2"), "-o", str(tmp_path / "net.pte"),
                    "--backends", backends], check=True, capture_output=True)
    np.savez(tmp_path / "in.npz", input_0=inputs[0].numpy())
    return model, inputs


def test_cli_compiles_and_runs_vgf_xnnpack_portable(tmp_path):
    model, inputs = _compile_cli(tmp_path, "vgf,xnnpack,portable")
    subprocess.run([CLI, "run", str(tmp_path / "net.pte"), "--inputs", str(tmp_path / "in.npz"),
                    "--outputs", str(tmp_path / "out.npz")], check=True, capture_output=True)
    got = np.load(tmp_path / "out.npz")["output_0"]
    with torch.no_grad():
        want = model(*inputs).numpy()
    assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max())


def test_missing_extension_is_reported_by_pteron_run(tmp_path):
    # The user's own VK_LAYER_PATH wins over the layers pteron ships: an empty one has no layer.
    _compile_cli(tmp_path, "vgf,portable")
    (tmp_path / "no-layers").mkdir()
    env = dict(os.environ, VK_LAYER_PATH=str(tmp_path / "no-layers"))
    env.pop("VK_INSTANCE_LAYERS", None)
    run = subprocess.run([CLI, "run", str(tmp_path / "net.pte"), "--random-inputs"], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert ("backend 'PteronVgfBackend' is not available on this device: VK_ARM_data_graph not "
            "available on llvmpipe") in run.stderr, run.stderr


def test_pteron_run_enables_the_shipped_layers_by_itself(tmp_path):
    _compile_cli(tmp_path, "vgf,portable")
    env = {k: v for k, v in os.environ.items() if k not in ("VK_LAYER_PATH", "VK_INSTANCE_LAYERS")}
    env["PTERON_VULKAN_LOG"] = "1"
    run = subprocess.run([CLI, "run", str(tmp_path / "net.pte"), "--random-inputs"], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr.splitlines() if "ML emulation layers pteron ships" in line]
    assert len(said) == 1 and "VK_LAYER_PATH=" in said[0] and said[0].endswith("vgf_layers)"), run.stderr


def test_profile_shows_the_delegate_phases(tmp_path):
    _compile_cli(tmp_path, "vgf,portable")
    run = subprocess.run([CLI, "profile", str(tmp_path / "net.pte"), "-o", str(tmp_path / "trace"),
                          "--iters", "1", "--warmup", "0"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    for phase in ("vgf: copy inputs", "vgf: run data graph", "vgf: copy outputs"):
        assert phase in run.stdout, run.stdout


class ThreeInTwoOut(torch.nn.Module):
    """One region with three inputs and two outputs, every op order-sensitive, so a swapped
    argument shows."""

    def forward(self, x, y, z):
        h = x - y
        return torch.relu(h) * z - y, h - z


def test_region_arguments_keep_their_order():
    model = ThreeInTwoOut().eval()
    inputs = tuple(torch.randn(128, 512) for _ in range(3))
    ep = pteron.export(model, inputs)
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VgfPartitioner()])
    regions = program.report["delegated_regions"]
    assert [(r["inputs"], r["outputs"]) for r in regions] == [(3, 2)], regions
    actual = program.load().forward(*inputs)
    for a, e in zip(actual, model(*inputs)):
        assert float((a - e).abs().max()) <= 1e-5 * (1 + float(e.abs().max()))


def test_tiny_region_is_given_back_with_the_cost_reason():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU()).eval()
    ep = pteron.export(model, (torch.randn(1, 4),))
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VgfPartitioner()])
    assert program.report["delegated_regions"] == []
    assert any("repay a data-graph dispatch" in r for r in program.report["refusals"])
