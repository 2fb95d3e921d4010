"""MLPerf Tiny models through the Ethos-U path end to end:

    pteron compile M.pt2 --target ethos-u55-128 --backends ethos-u,portable
        --quantize ethos-u --calibration C.npz --int8-io

puts the int8 model, its final softmax included, in one Ethos-U region (Vela's estimate in the
report), `pteron run` executes the program on the host through the
emulated driver, and the region's output equals, bit for bit, the TOSA reference model run on
the region's TOSA form taken from the program's payload. A float model compiled for ethos-u
keeps every node on the CPU with the reason "not quantized".
"""

import json
import subprocess

import numpy as np
import pytest

from ethos_u_region import assert_region_matches_reference, cli
from pteron_cli import pteron_cli

MODELS = ["ds-cnn", "mobilenet-v1-025"]


@pytest.fixture(scope="module", params=MODELS)
def compiled(request, tmp_path_factory, zoo_pt2):
    from pteron.tosa import zoo_calibration

    name = request.param
    work = tmp_path_factory.mktemp(name)
    pt2 = zoo_pt2(name)
    calibration = zoo_calibration(name)
    np.savez(work / "cal.npz", input_0=calibration[0])
    pte = work / f"{name}.pte"
    report = json.loads(cli("compile", pt2, "-o", pte, "--target", "ethos-u55-128", "--backends",
                            "ethos-u,portable", "--quantize", "ethos-u", "--calibration",
                            work / "cal.npz", "--int8-io", "--json").stdout)
    return name, work, pt2, calibration, pte, report


def test_whole_model_is_one_ethos_u_region_with_vela_estimate(compiled):
    name, _, _, _, _, report = compiled
    regions = report["delegated_regions"]
    assert [r["backend"] for r in regions] == ["ethos-u"], report["refusals"]
    vela = regions[0]["report"]
    assert vela["accelerator"] == "ethos-u55-128" and vela["memory_mode"] == "Shared_Sram"
    assert vela["npu_cycles"] > 0 and vela["macs"] > 1_000_000
    assert vela["off_chip_flash_bytes"] >= vela["weight_bytes"] > 0


def test_emulated_run_is_bit_exact_with_reference_model(compiled, reference):
    name, work, _, calibration, pte, _ = compiled
    x = np.random.default_rng(7).integers(-128, 128, calibration[0].shape[1:]).astype(np.int8)
    np.savez(work / "in.npz", input_0=x)
    r = cli("run", pte, "--inputs", work / "in.npz", "--outputs", work / "out.npz")
    assert "EMULATED" in r.stderr  # the log says no NPU ran it
    assert np.load(work / "out.npz")["output_0"].dtype == np.int8

    data = pte.read_bytes()
    tosa_in = np.ascontiguousarray(x.transpose(0, 2, 3, 1) if x.ndim == 4 else x)  # NHWC
    assert_region_matches_reference(data, work, tosa_in, reference)

    # A program whose payload is damaged fails to load with one line naming the backend.
    bad = bytearray(data)
    at = bad.index(b"PEU1")
    bad[at:at + 4] = b"XXXX"
    (work / "bad.pte").write_bytes(bad)
    r = subprocess.run([pteron_cli(), "run", work / "bad.pte", "--inputs", work / "in.npz"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "PteronEthosUBackend" in r.stderr and "identifier" in r.stderr


def test_float_model_stays_on_cpu_as_not_quantized(tmp_path, zoo_pt2):
    pt2 = zoo_pt2("fc-autoencoder")
    report = json.loads(cli("compile", pt2, "-o", tmp_path / "ae.pte", "--target", "ethos-u55-128",
                            "--backends", "ethos-u,portable", "--json").stdout)
    assert report["delegated_regions"] == []
    assert report["refusals"] and all("not quantized" in r for r in report["refusals"])


def test_heterogeneous_program_says_who_took_what(tmp_path, zoo_pt2):
    """ethos-u, then cortex-m, then portable: the NPU takes the whole int8 model, its final
    softmax included; portable keeps only the input's layout copy the compiler adds at the
    delegate boundary (cortex-m has no kernel for it), and the delegation report gives that
    node's reasons."""
    from pteron.tosa import zoo_calibration

    pt2 = zoo_pt2("ds-cnn")
    np.savez(tmp_path / "cal.npz", input_0=zoo_calibration("ds-cnn")[0])
    pte = tmp_path / "het.pte"
    cli("compile", pt2, "-o", pte, "--target", "ethos-u55-128", "--backends",
        "ethos-u,cortex-m,portable", "--quantize", "ethos-u", "--calibration", tmp_path / "cal.npz",
        "--int8-io")
    info = json.loads(cli("inspect", pte, "--delegation", "--json").stdout)
    assert info["backends"] == ["ethos-u", "cortex-m", "portable"]
    runs_on = {op["op"]: op["runs_on"] for op in info["ops"]}
    assert runs_on["aten::convolution.default"] == {"ethos-u": 9}
    assert runs_on["aten::_softmax.default"] == {"ethos-u": 1}
    cpu = {op: where for op, where in runs_on.items() if "ethos-u" not in where}
    assert cpu == {"dim_order_ops::_clone_dim_order.default": {"portable": 1}}, cpu
    (region,) = info["regions"]["list"]
    assert region["backend"] == "ethos-u" and region["report"]["npu_cycles"] > 0  # Vela's estimate
    text = cli("inspect", pte, "--delegation").stdout
    assert "cortex-m: no kernel for dim_order_ops::_clone_dim_order.out" in text
    assert "ethos-u55-128 (Ethos_U55_High_End_Embedded, Shared_Sram):" in text and "NPU cycles" in text
    np.savez(tmp_path / "in.npz", input_0=np.zeros((1, 1, 49, 10), np.int8))
    assert "EMULATED" in cli("run", pte, "--inputs", tmp_path / "in.npz").stderr


def test_vela_constraint_keeps_node_on_cpu_with_reason(tmp_path):
    """A stride-4 convolution is valid TOSA but breaks Vela's U55 CONV2D stride limit (1..3):
    it stays on the CPU with that reason while the rest of the model still goes to the NPU."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 8, 3, stride=4, padding=1)
            self.b = torch.nn.Conv2d(8, 8, 3, stride=1, padding=1)

        def forward(self, x):
            return torch.relu(self.b(torch.relu(self.a(x))))

    torch.manual_seed(0)
    x = torch.randn(1, 3, 32, 32)
    ep = torch.export.export(Net().eval(), (x,)).run_decompositions()
    torch.export.save(ep, tmp_path / "net.pt2")
    np.savez(tmp_path / "cal.npz", input_0=np.random.default_rng(0).standard_normal((4, 1, 3, 32, 32))
             .astype(np.float32))
    report = json.loads(cli("compile", tmp_path / "net.pt2", "-o", tmp_path / "net.pte", "--target",
                            "ethos-u55-128", "--backends", "ethos-u,portable", "--quantize",
                            "ethos-u", "--calibration", tmp_path / "cal.npz", "--int8-io",
                            "--json").stdout)
    assert any("CONV2D stride must be 1..3" in r for r in report["refusals"]), report["refusals"]
    assert [r["backend"] for r in report["delegated_regions"]] == ["ethos-u"]
    x = np.random.default_rng(1).integers(-128, 128, (1, 3, 32, 32)).astype(np.int8)
    np.savez(tmp_path / "in.npz", input_0=x)
    assert "EMULATED" in cli("run", tmp_path / "net.pte", "--inputs", tmp_path / "in.npz").stderr
