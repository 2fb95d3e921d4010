"""`pteron compile --tune`: the candidate backend lists of the host target (its default list, its
kernel libraries alone and, for an int8 program, the int8 kernel library in front of them) are
compiled, timed on this machine, and the fastest is the program written; the report names every
candidate with its measured median and the one kept. Outputs equal PyTorch's whichever was kept
(float32, atol 1e-4). Bad uses are one-line errors that leave no file behind."""

import json
import subprocess

import numpy as np
import pteron
import pytest
import torch
from pteron_cli import assert_one_line_error, pteron_cli


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc(torch.nn.functional.relu6(self.dw(torch.relu(self.conv(x)))).mean((2, 3)))


@pytest.fixture(scope="module")
def conv_pt2(tmp_path_factory):
    torch.manual_seed(0)
    x = torch.randn(1, 3, 24, 24)
    model = ConvNet().eval()
    ep = torch.export.export(model, (x,)).run_decompositions()
    path = tmp_path_factory.mktemp("tune") / "conv.pt2"
    torch.export.save(ep, path)
    with torch.no_grad():
        return path, x, model(x)


def cli(*args):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_tune_keeps_the_fastest_candidate_and_reports_all(conv_pt2, tmp_path):
    pt2, x, expected = conv_pt2
    pte = tmp_path / "tuned.pte"
    run = cli("compile", pt2, "-o", pte, "--tune", "--threads", 1, "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    tune = report["tune"]
    candidates = [c["backends"] for c in tune["candidates"]]
    assert candidates == ["xnnpack,cortex-m,optimized,portable", "cortex-m,optimized,portable"], \
        candidates
    for c in tune["candidates"]:
        assert c["median_ms"] > 0 and len(c["round_medians_ms"]) == tune["rounds"] == 3
        assert c["iterations"] >= 3
    fastest = min(tune["candidates"], key=lambda c: c["median_ms"])["backends"]
    assert tune["chosen"] == fastest == ",".join(report["backends"])
    assert tune["threads"] == 1
    # Only the kept program is left, and it is the chosen list's program.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tuned.pte"]
    delegation = json.loads(cli("inspect", pte, "--delegation", "--json").stdout)
    assert (delegation["regions"]["count"] > 0) == fastest.startswith("xnnpack")
    out = pteron.load(str(pte)).forward(x)[0]
    np.testing.assert_allclose(out.numpy(), expected.numpy(), atol=1e-4)


def test_tune_tries_the_int8_kernels_for_an_int8_program(conv_pt2, tmp_path):
    """--quantize xnnpack: the host's kernel libraries include the int8 one (cortex-m, whose
    convolutions run on the host's 8-bit dot products), so the candidate without XNNPACK runs the
    int8 ops on it; the kept program gives the same bytes as its list compiled directly (the same
    int8 arithmetic, deterministic). A list without the int8 library gets it as a third."""
    pt2, x, _ = conv_pt2
    calibration = tmp_path / "cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((8, 1, 3, 24, 24))
             .astype(np.float32))
    pte = tmp_path / "tuned.pte"
    run = cli("compile", pt2, "-o", pte, "--quantize", "xnnpack", "--calibration", calibration,
              "--tune", "--threads", 1, "--json")
    assert run.returncode == 0, run.stderr
    tune = json.loads(run.stdout)["tune"]
    candidates = [c["backends"] for c in tune["candidates"]]
    assert candidates == ["xnnpack,cortex-m,optimized,portable", "cortex-m,optimized,portable"], \
        candidates
    assert tune["chosen"] == min(tune["candidates"], key=lambda c: c["median_ms"])["backends"]
    direct = tmp_path / "direct.pte"
    again = cli("compile", pt2, "-o", direct, "--quantize", "xnnpack", "--calibration", calibration,
                "--backends", tune["chosen"])
    assert again.returncode == 0, again.stderr
    kept, plain = pteron.load(str(pte)).forward(x)[0], pteron.load(str(direct)).forward(x)[0]
    np.testing.assert_array_equal(np.asarray(kept), np.asarray(plain))
    listed = cli("compile", pt2, "-o", tmp_path / "listed.pte", "--quantize", "xnnpack",
                 "--calibration", calibration, "--backends", "xnnpack,optimized,portable", "--tune",
                 "--threads", 1, "--json")
    assert listed.returncode == 0, listed.stderr
    assert [c["backends"] for c in json.loads(listed.stdout)["tune"]["candidates"]] == [
        "xnnpack,optimized,portable", "optimized,portable", "cortex-m,optimized,portable"]


def test_an_int8_program_on_the_default_backends_points_to_tune(conv_pt2, tmp_path):
    """Without a calibration of the machine (conftest: PTERON_CALIBRATION=off) the default host
    program of an int8 model is XNNPACK's; the report says that `pteron tune` would let the
    default choose and that --tune times the candidates. Not with --tune, nor with --backends."""
    pt2, _, _ = conv_pt2
    calibration = tmp_path / "cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((8, 1, 3, 24, 24))
             .astype(np.float32))
    hint = "without a calibration of this machine"
    plain = cli("compile", pt2, "-o", tmp_path / "a.pte", "--quantize", "xnnpack", "--calibration",
                calibration, "--json")
    assert plain.returncode == 0, plain.stderr
    assert any(hint in note for note in json.loads(plain.stdout)["notes"])
    for extra in (["--backends", "xnnpack,portable"], ["--tune", "--threads", "1"]):
        chosen = cli("compile", pt2, "-o", tmp_path / "b.pte", "--quantize", "xnnpack",
                     "--calibration", calibration, "--json", *extra)
        assert chosen.returncode == 0, chosen.stderr
        assert not any(hint in note for note in json.loads(chosen.stdout)["notes"]), extra
    floating = cli("compile", pt2, "-o", tmp_path / "c.pte", "--json")
    assert not any(hint in note for note in json.loads(floating.stdout)["notes"])


def test_tune_without_a_delegate_has_one_candidate(conv_pt2, tmp_path):
    pt2, _, _ = conv_pt2
    run = cli("compile", pt2, "-o", tmp_path / "p.pte", "--tune", "--backends", "optimized,portable",
              "--json")
    assert run.returncode == 0, run.stderr
    tune = json.loads(run.stdout)["tune"]
    assert [c["backends"] for c in tune["candidates"]] == ["optimized,portable"]
    assert tune["chosen"] == "optimized,portable"


def test_tune_needs_the_host_target(conv_pt2, tmp_path):
    pt2, _, _ = conv_pt2
    run = cli("compile", pt2, "-o", tmp_path / "m.pte", "--tune", "--target", "cortex-m55-an547")
    assert_one_line_error(run, "--tune", "host target", "cortex-m55-an547")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args,fragment", [
    (["--threads", "2"], "--threads is for --tune"),
    (["--tune", "--threads", "-1"], "--threads -1 is out of range"),
])
def test_bad_thread_options(conv_pt2, tmp_path, args, fragment):
    pt2, _, _ = conv_pt2
    run = cli("compile", pt2, "-o", tmp_path / "t.pte", *args)
    assert_one_line_error(run, fragment)
    assert list(tmp_path.iterdir()) == []
