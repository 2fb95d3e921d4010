"""The Vulkan partitioner end to end on lavapipe: which nodes it claims, why it refuses others,
and that programs compiled with `vulkan,portable` compute what PyTorch does.

Tolerance (fp32, Vulkan delegate vs torch eager on the same inputs): max abs error within
1e-4 * (1 + max |reference|) (the shaders sum in 16-wide tiles, torch in its own order; the
device's exp differs from libm by a few ulp).
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

_LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if os.path.exists(_LAVAPIPE):
    os.environ.setdefault("VK_ICD_FILENAMES", _LAVAPIPE)  # before the device context is made

import pteron  # noqa: E402 (the Vulkan loader reads VK_ICD_FILENAMES when pteron creates it)
from pteron import zoo  # noqa: E402
from pteron_cli import pteron_cli  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
torch.manual_seed(0)


def _lower(model, inputs):
    ep = pteron.export(model, inputs)
    return pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VulkanPartitioner()])


def _check(model, inputs, regions=1, tol=1e-4):
    program = _lower(model.eval(), inputs)
    report = program.report
    assert len(report["delegated_regions"]) == regions, report["refusals"]
    assert all(r["backend"] == "vulkan" for r in report["delegated_regions"])
    with torch.no_grad():
        expected = model(*inputs)
    actual = program.load().forward(*inputs)[0]
    assert actual.shape == expected.shape
    err = float((actual - expected).abs().max())
    assert err <= tol * (1 + float(expected.abs().max())), err
    return report


class Mlp(torch.nn.Module):
    """linear+relu, linear+hardtanh, scaled residual, linear, softmax."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 128)
        self.fc3 = torch.nn.Linear(128, 10)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.nn.functional.hardtanh(self.fc2(h)) * 0.5 + h - x.mean()
        return torch.softmax(self.fc3(h), dim=-1)


def test_mlp_matches_torch_with_one_refused_op():
    report = _check(Mlp(), (torch.randn(16, 64),), regions=1)
    refusals = "\n".join(report["refusals"])
    # mean is not in the support table: it stays on the portable kernels, with its reason.
    assert "aten::mean.default is not in the Vulkan support table" in refusals


def test_fc_autoencoder_is_one_region_matching_torch():
    model, inputs = zoo.get("fc-autoencoder")
    report = _check(model, inputs, regions=1)
    assert report["delegated_regions"][0]["nodes"] == 19  # 10 linear + 9 relu


def test_tiny_region_is_given_back_with_the_cost_reason():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    program = _lower(model.eval(), (torch.randn(1, 4),))
    assert program.report["delegated_regions"] == []
    assert any("repay a GPU submit" in r for r in program.report["refusals"])


def test_refuses_non_fp32_and_unsupported_softmax_dim():
    class M(torch.nn.Module):
        def forward(self, x, idx):
            y = torch.softmax(x @ x.transpose(0, 1) * 2.0, dim=0)
            return y, idx + 1

    program = _lower(M().eval(), (torch.randn(64, 64), torch.arange(64)))
    refusals = "\n".join(program.report["refusals"])
    assert "softmax over a dim other than the last" in refusals
    assert "is i64 (the Vulkan delegate runs fp32 only)" in refusals


def test_0d_permute_is_not_refused_for_its_rank_and_runs():
    """A 0-D permute's empty perm is left out of the payload, as flatbuffers leaves out empty
    vectors; the verifier reads it as empty (it failed the delegate at init, then was refused:
    found by the op-database suite). Alone it is too small for the cost rule, which says so;
    vulkan_ops_test runs a 0-D permute payload on the device."""

    class M(torch.nn.Module):
        def forward(self, x, s):
            big = torch.relu(x @ x.transpose(0, 1))
            # Returned as it is: the permute is the graph's output, not a removable no-op.
            return big, s.permute(())

    x, s = torch.randn(64, 64), torch.tensor(3.0)
    program = _lower(M().eval(), (x, s))
    assert "0-D" not in "\n".join(program.report["refusals"])
    _, same = program.load().forward(x, s)
    assert float(same) == 3.0


def test_cli_compiles_and_runs_vulkan_portable(tmp_path):
    cli = pteron_cli()
    model, inputs = Mlp().eval(), (torch.randn(4, 64),)
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), tmp_path / "mlp.pt2")
    subprocess.run([cli, "compile", str(tmp_path / "mlp.pt2"), "-o", str(tmp_path / "mlp.pte"),
                    "--backends", "vulkan,portable"], check=True, capture_output=True)
    np.savez(tmp_path / "in.npz", input_0=inputs[0].numpy())
    subprocess.run([cli, "run", str(tmp_path / "mlp.pte"), "--inputs", str(tmp_path / "in.npz"),
                    "--outputs", str(tmp_path / "out.npz")], check=True, capture_output=True)
    got = np.load(tmp_path / "out.npz")["output_0"]
    with torch.no_grad():
        want = model(*inputs).numpy()
    assert np.abs(got - want).max() <= 1e-4 * (1 + np.abs(want).max())


@pytest.mark.parametrize("batch", [1, 33])
def test_linear_relu_batches(batch):
    model = torch.nn.Sequential(torch.nn.Linear(256, 300), torch.nn.ReLU(), torch.nn.Linear(300, 5))
    _check(model, (torch.randn(batch, 256),), regions=1)


def test_missing_device_is_reported_by_pteron_run(tmp_path):
    cli = pteron_cli()
    model, inputs = zoo.get("fc-autoencoder")
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), tmp_path / "ae.pt2")
    subprocess.run([cli, "compile", str(tmp_path / "ae.pt2"), "-o", str(tmp_path / "ae.pte"),
                    "--backends", "vulkan,portable"], check=True, capture_output=True)
    env = dict(os.environ, VK_ICD_FILENAMES=str(tmp_path / "no_such_icd.json"))
    run = subprocess.run([cli, "run", str(tmp_path / "ae.pte"), "--random-inputs"], env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "backend 'PteronVulkanBackend' is not available on this device: Vulkan:" in run.stderr


class SmallCnn(torch.nn.Module):
    """3x3 conv + relu6, depthwise 3x3 stride 2, 1x1 pointwise, residual-free."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(16)
        self.dw = torch.nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16)
        self.pw = torch.nn.Conv2d(16, 24, 1)

    def forward(self, x):
        y = torch.nn.functional.relu6(self.bn(self.conv(x)))
        return self.pw(torch.relu(self.dw(y)))


def test_cnn_with_depthwise_and_pointwise_matches_torch():
    model = SmallCnn().eval()
    with torch.no_grad():  # non-trivial folded batch norm
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    _check(model, (torch.randn(2, 3, 16, 16),), regions=1)


class NormBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.LayerNorm(96)
        self.fc = torch.nn.Linear(96, 96)

    def forward(self, x):
        return torch.softmax(self.fc(self.norm(x)), dim=-1) + x


def test_layer_norm_block_matches_torch():
    _check(NormBlock().eval(), (torch.randn(3, 20, 96),), regions=1)


class XnnpackVulkanMix(torch.nn.Module):
    """Linear layers XNNPACK takes first, and a layer norm (not in this XNNPACK) for Vulkan."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(256, 1024)
        self.norm = torch.nn.LayerNorm(1024)
        self.b = torch.nn.Linear(1024, 256)

    def forward(self, x):
        return self.b(torch.relu(self.norm(self.a(x))))


def test_mixed_xnnpack_and_vulkan_regions_match_torch():
    model, inputs = XnnpackVulkanMix().eval(), (torch.randn(64, 256),)
    ep = pteron.export(model, inputs)
    program = pteron.to_edge_transform_and_lower(
        ep, partitioner=[pteron.XnnpackPartitioner(), pteron.VulkanPartitioner()], kernels=("portable",))
    backends = [r["backend"] for r in program.report["delegated_regions"]]
    assert sorted(set(backends)) == ["vulkan", "xnnpack"], backends
    with torch.no_grad():
        expected = model(*inputs)
    actual = program.load().forward(*inputs)[0]
    assert float((actual - expected).abs().max()) <= 1e-4 * (1 + float(expected.abs().max()))


class Attention(torch.nn.Module):
    """Single-head attention on 2-D tokens: permute (transpose), mm, scale, softmax, mm."""

    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(64, 192)

    def forward(self, x):
        q, k, v = self.qkv(x).split(64, dim=-1)
        return torch.softmax(q @ k.transpose(0, 1) * 0.125, dim=-1) @ v


def test_attention_with_transpose_matches_torch():
    report = _check(Attention().eval(), (torch.randn(48, 64),), regions=2)
    assert any("split" in r or "slice" in r for r in report["refusals"]), report["refusals"]


def test_profile_times_every_dispatch_and_maps_it_to_its_graph_node(tmp_path):
    """`pteron profile` of a Vulkan program: one event per dispatch from the device's
    timestamps, each carrying a debug id that names a node of the region (graph info), nested
    in the delegate call, together no longer than it. relu6 after a conv folds into the conv's
    dispatch, so no clamp runs on its own."""
    import json

    cli = pteron_cli()
    model, inputs = SmallCnn().eval(), (torch.randn(1, 3, 16, 16),)
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), tmp_path / "cnn.pt2")
    pte = tmp_path / "cnn.pte"
    subprocess.run([cli, "compile", str(tmp_path / "cnn.pt2"), "-o", str(pte), "--backends",
                    "vulkan,portable"], check=True, capture_output=True)
    iters = 2
    out = subprocess.run([cli, "profile", str(pte), "--iters", str(iters), "--warmup", "0", "-o",
                          str(tmp_path / "trace"), "--json"], check=True, capture_output=True)
    summary = json.loads(out.stdout)
    assert summary["dropped_events"] == 0
    info = pteron.get_delegation_info(str(pte)).graph_info
    (region,) = info["regions"]
    ops = [info["nodes"][i]["op"] for i in region["nodes"]]

    events = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
              if e["ph"] == "X"]
    calls = [e for e in events if e["cat"] == "delegate call"]
    assert len(calls) == iters
    dispatches = [e for e in events if e["cat"] == "delegate node" and "delegate_debug_id" in e["args"]]
    per_run = len(dispatches) // iters
    assert per_run == 3 and len(dispatches) == iters * per_run  # conv+relu6, dw+relu, pw
    for call in calls:
        inside = [e for e in dispatches if e["args"]["run"] == call["args"]["run"]]
        assert len(inside) == per_run
        for e in inside:
            assert call["ts"] <= e["ts"] and e["ts"] + e["dur"] <= call["ts"] + call["dur"] + 1e-3
        assert sum(e["dur"] for e in inside) <= call["dur"]
        names = [e["name"] for e in inside]
        assert names == ["vulkan: conv2d", "vulkan: conv2d depthwise", "vulkan: conv2d 1x1"], names
        mapped = [ops[e["args"]["delegate_debug_id"]] for e in inside]
        assert all(op.startswith("aten::convolution") for op in mapped), mapped
    assert not any("clamp" in e["name"] for e in events)

    # `inspect --trace` reads the same per-dispatch rows back from the ETDump, and nothing from
    # inside the delegate (phases included) counts as a kernel.
    out = subprocess.run([cli, "inspect", str(pte), "--trace", str(tmp_path / "trace.etdp"),
                          "--json"], check=True, capture_output=True)
    again = json.loads(out.stdout)
    rows = lambda s: sorted((r["name"], r["calls"]) for r in s["inside_delegates"])  # noqa: E731
    assert rows(again) == rows(summary)
    assert [op["where"] for op in again["ops"]] == ["delegate"]
    assert again["covered_ms"] <= again["wall_ms"]  # inner events are not counted twice

