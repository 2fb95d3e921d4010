"""Cortex-M55 firmware (`pteron firmware`) under QEMU mps3-an547, and budgets before flashing.

- ds-cnn and digits-cnn (fp32), compiled with `--target cortex-m55-an547`, built as firmware
  (selective kernels, program in flash, static arenas) and run under qemu-system-arm: the
  outputs are bit-exact with `pteron run` on the host for the same program and inputs, the
  instruction count per inference is exact (the same on a second run), the measured stack
  high-water mark lies inside the reserved stack, and the measured RAM is within the
  estimate `pteron compile` printed.
- ds-cnn and digits-cnn quantized to INT8 (`--quantize cortex-m --int8-io`): lowered to cortex_m
  kernels only (plus the int8 view), the firmware links just those (selective build) with their
  MVE paths, and its outputs are bit-exact with `pteron run` on the host (scalar reference
  kernels). The MVE convolution's scratch is planned into the arenas (nothing is allocated at run
  time), which is why ds-cnn's MVE build runs in under a quarter of the scalar build's
  instructions. `--trim` rebuilds the image reserving only what a first run used.
- An over-budget model (fp32 and int8) is refused by `pteron compile --target` with exit 1, one
  line naming the RAM figures (and the kernel call that takes the most run-time scratch, measured
  on the target's kernel libraries), and no program file left behind, on every Cortex-M target.
- ds-cnn INT8 on the Cortex-M4 (`--target cortex-m4-an386`, QEMU mps2-an386): the firmware's
  DSP kernels and its scalar build both give `pteron run`'s bits, the DSP build in under a
  quarter of the scalar build's instructions.

The Cortex-M55 and Cortex-M4 libraries are built once in build-m55 and build-m4 (ccache makes
later builds cheap).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pteron_cli import pteron_cli
from squeeze_excite_net import squeeze_excite_net
from upsample_net import upsample_net

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "targets" / "cortex-m55-an547.toml"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"), os.environ.get("PYTHONPATH", "")])}


def pteron(*args, timeout=900):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, check=False)


def export(name: str, path: Path) -> Path:
    result = subprocess.run([sys.executable, "-m", "pteron.zoo", "export", name, "-o", str(path)],
                            env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return path


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("firmware")


@pytest.mark.parametrize("model", ["digits-cnn", "ds-cnn"])
def test_firmware_matches_host_bit_exactly(work, model):
    pt2 = export(model, work / f"{model}.pt2")
    pte = work / f"{model}.pte"
    compiled = pteron("compile", pt2, "-o", pte, "--target", TARGET, "--json")
    assert compiled.returncode == 0, compiled.stderr
    budget = json.loads(compiled.stdout)["budget"]
    assert 0 < budget["ram"] <= budget["ram_budget"]

    rng = np.random.default_rng(7)
    shape = {"digits-cnn": (1, 1, 8, 8), "ds-cnn": (1, 1, 49, 10)}[model]
    inputs = work / f"{model}.in.npz"
    np.savez(inputs, input_0=rng.standard_normal(shape).astype(np.float32))
    host_out = work / f"{model}.host.npz"
    # The firmware links the portable kernels; the host run must use the same ones (it would
    # otherwise prefer the optimized library, which sums in another order).
    host = pteron("run", pte, "--inputs", inputs, "--outputs", host_out, "--kernels", "portable")
    assert host.returncode == 0, host.stderr

    elf = work / f"{model}.elf"
    fw_out = work / f"{model}.fw.npz"
    fw = pteron("firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs,
                "--outputs", fw_out, "--json")
    assert fw.returncode == 0, fw.stderr
    report = json.loads(fw.stdout)
    expected = np.load(host_out)["output_0"]
    got = np.load(fw_out)["output_0"]
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), f"max |diff| {np.abs(got - expected).max()}"

    measured = report["measured"]
    assert 0 < measured["stack_high_water"] < report["estimate"]["stack"]
    assert measured["ram"] <= report["estimate"]["ram"]
    assert measured["scratch"] <= report["estimate"]["scratch"]
    assert measured["instructions"] > 0
    # Only the program's kernels are linked.
    assert 0 < len(report["kernels"]) < 20
    assert all(k.startswith("portable:aten::") for k in report["kernels"])

    # The count is exact: a second run of the same image counts the same instructions.
    again = pteron("firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["measured"]["instructions"] == measured["instructions"]


def test_over_budget_model_is_refused(work):
    pt2 = work / "ds-cnn.pt2"
    if not pt2.exists():
        export("ds-cnn", pt2)
    small = work / "tiny-mcu.toml"
    text = TARGET.read_text().replace("ram = 6815744", "ram = 32768")
    assert text != TARGET.read_text()
    small.write_text(text)
    pte = work / "refused.pte"
    result = pteron("compile", pt2, "-o", pte, "--target", small)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "over budget" in lines[0] and "RAM" in lines[0] and "32.0 KiB" in lines[0]
    assert "arenas" in lines[0] and "stack" in lines[0]
    # The run-time scratch is measured on the target's kernels (portable here, not the host's
    # optimized ones) and the refusal names the call that takes the most of it.
    assert re.search(r"scratch [0-9.]+ KiB for aten::convolution\.out \(instruction \d+\)", lines[0]), lines[0]
    assert not pte.exists()


def compile_int8(work: Path, model: str, target: Path = TARGET):
    pt2 = work / f"{model}.pt2"
    if not pt2.exists():
        export(model, pt2)
    shape = {"digits-cnn": (1, 1, 8, 8), "ds-cnn": (1, 1, 49, 10)}[model]
    calibration = work / f"{model}.cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((8, *shape)).astype(np.float32))
    pte = work / f"{model}.{target.stem}.int8.pte"
    compiled = pteron("compile", pt2, "-o", pte, "--target", target, "--quantize", "cortex-m",
                      "--calibration", calibration, "--int8-io", "--json")
    return pte, compiled, shape


@pytest.mark.parametrize("model", ["digits-cnn", "ds-cnn"])
def test_int8_firmware_matches_host_bit_exactly(work, model):
    pte, compiled, shape = compile_int8(work, model)
    assert compiled.returncode == 0, compiled.stderr
    budget = json.loads(compiled.stdout)["budget"]

    inputs = work / f"{model}.in8.npz"
    np.savez(inputs, input_0=np.random.default_rng(7).integers(-128, 128, shape).astype(np.int8))
    host_out = work / f"{model}.host8.npz"
    host = pteron("run", pte, "--inputs", inputs, "--outputs", host_out)
    assert host.returncode == 0, host.stderr

    elf, fw_out = work / f"{model}.int8.elf", work / f"{model}.fw8.npz"
    fw = pteron("firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs", inputs,
                "--outputs", fw_out, "--json")
    assert fw.returncode == 0, fw.stderr
    report = json.loads(fw.stdout)
    expected, got = np.load(host_out)["output_0"], np.load(fw_out)["output_0"]
    assert got.dtype == expected.dtype == np.int8 and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()

    # Only the program's int8 kernels are linked: cortex_m ones, and the int8 view from portable.
    kernels = report["kernels"]
    assert "cortex_m:cortex_m::quantized_conv2d_nhwc.out" in kernels
    # The convolutions' planned scratch has no instruction (an allocation-only node), so no kernel.
    assert "cortex_m:cortex_m::scratch_buffer.out" not in kernels
    assert all(k.startswith("cortex_m:") or k == "portable:aten::view_copy.out" for k in kernels), kernels
    measured = report["measured"]
    assert measured["scratch"] == 0  # the kernels' scratch is planned into the arenas
    assert measured["arenas"] == budget["arenas"]
    assert measured["ram"] <= budget["ram"]
    assert 0 < measured["stack_high_water"] < budget["stack"]

    if model == "ds-cnn":
        scalar = pteron("firmware", pte, "--target", TARGET, "-o", work / "ds-cnn.scalar.elf", "--run",
                        "--inputs", inputs, "--outputs", work / "ds-cnn.scalar.npz", "--kernel-path", "scalar",
                        "--json")
        assert scalar.returncode == 0, scalar.stderr
        assert np.load(work / "ds-cnn.scalar.npz")["output_0"].tobytes() == expected.tobytes()
        scalar_count = json.loads(scalar.stdout)["measured"]["instructions"]
        assert scalar_count > 4 * measured["instructions"], (scalar_count, measured["instructions"])

        # --trim reserves what a first run used (method memory on the device, stack high water plus
        # a margin): less RAM in the image, and the rebuilt image still runs and gives the same bits.
        trimmed = pteron("firmware", pte, "--target", TARGET, "-o", work / "ds-cnn.trim.elf", "--run", "--trim",
                         "--inputs", inputs, "--outputs", work / "ds-cnn.trim.npz", "--json")
        assert trimmed.returncode == 0, trimmed.stderr
        t = json.loads(trimmed.stdout)
        assert np.load(work / "ds-cnn.trim.npz")["output_0"].tobytes() == expected.tobytes()
        assert t["elf_sizes"]["ram_reserved"] < report["elf_sizes"]["ram_reserved"]
        assert t["measured"]["stack_high_water"] < t["elf_sizes"]["sections"][".stack"]
        # newlib's heap: what the first run's sbrk took (none or a few hundred bytes of stdio
        # state), not the default 1 KiB, and enough for the rebuilt image's own run.
        assert t["measured"]["heap"] <= t["elf_sizes"]["sections"].get(".heap", 0) < 1024


@pytest.mark.parametrize("target", ["cortex-m55-an547", "cortex-m7-an500", "cortex-m4-an386"])
def test_int8_over_budget_model_is_refused(work, target):
    small = work / f"tiny-{target}.toml"
    text = (REPO / "targets" / f"{target}.toml").read_text()
    small.write_text(re.sub(r"(?m)^ram = \d+$", "ram = 24576", text))
    assert small.read_text() != text
    pte, result, _ = compile_int8(work, "ds-cnn", small)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert "over budget" in lines[-1] and "RAM" in lines[-1] and "24.0 KiB" in lines[-1], result.stderr
    assert not pte.exists()


def assert_int8_firmware_matches_host(work, name, model, shape, kernels):
    """`model` quantized by the cortex-m scheme (int8 I/O) runs in firmware, the MVE build and
    the scalar build, with the cortex_m kernels `kernels` among its own and none of the portable
    library's, and gives the host's bytes."""
    import torch

    pt2 = work / f"{name}.pt2"
    ep = torch.export.export(model.eval(), (torch.randn(shape),)).run_decompositions()
    torch.export.save(ep, pt2)
    calibration = work / f"{name}.cal.npz"
    np.savez(calibration, input_0=np.random.default_rng(1).standard_normal((8, *shape)).astype(np.float32))
    pte = work / f"{name}.int8.pte"
    compiled = pteron("compile", pt2, "-o", pte, "--target", TARGET, "--quantize", "cortex-m",
                      "--calibration", calibration, "--int8-io")
    assert compiled.returncode == 0, compiled.stderr
    inputs, host_out = work / f"{name}.in8.npz", work / f"{name}.host8.npz"
    np.savez(inputs, input_0=np.random.default_rng(7).integers(-128, 128, shape).astype(np.int8))
    host = pteron("run", pte, "--inputs", inputs, "--outputs", host_out)
    assert host.returncode == 0, host.stderr
    expected = np.load(host_out)["output_0"]
    for path in ("simd", "scalar"):
        out = work / f"{name}.{path}.npz"
        fw = pteron("firmware", pte, "--target", TARGET, "-o", work / f"{name}.{path}.elf", "--run",
                    "--inputs", inputs, "--outputs", out, "--kernel-path", path, "--json")
        assert fw.returncode == 0, fw.stderr
        linked = json.loads(fw.stdout)["kernels"]
        for kernel in kernels:
            assert f"cortex_m:cortex_m::{kernel}.out" in linked, linked
        assert not any(k.startswith("portable:aten::") for k in linked), linked
        assert np.load(out)["output_0"].tobytes() == expected.tobytes(), path


def test_int8_upsampling_firmware_matches_host_bit_exactly(work):
    """The cortex_m int8 upsample kernels (nearest and bilinear) in firmware: the MVE build and
    the scalar build both give the host's bytes."""
    import torch

    torch.manual_seed(0)
    assert_int8_firmware_matches_host(work, "upsample-net", upsample_net(1), (1, 1, 16, 16),
                                      ["upsample_nearest2d_nhwc", "upsample_bilinear2d_nhwc"])


def test_int8_activation_tables_in_firmware_match_host_bit_exactly(work):
    """Activations quantized between convolutions (a hardswish, decomposed by export into four
    ops, and a sigmoid) run as cortex_m::quantized_lut tables in firmware: the MVE build and the
    scalar build both give the host's bytes."""
    import torch

    class ActivationNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(1, 8, 3, padding=1)
            self.b = torch.nn.Conv2d(8, 4, 3, padding=1)

        def forward(self, x):
            return torch.sigmoid(self.b(torch.nn.functional.hardswish(self.a(x))))

    torch.manual_seed(0)
    assert_int8_firmware_matches_host(work, "activation-net", ActivationNet(), (1, 1, 12, 12),
                                      ["quantized_lut"])


def test_int8_squeeze_excite_in_firmware_matches_host_bit_exactly(work):
    """A squeeze-excite block (MobileNetV3's and EfficientNet's): its [N, C, 1, 1] channel
    weights times the activation run as cortex_m::quantized_mul broadcast over the NHWC rows, in
    the MVE build and the scalar build alike, with the host's bytes."""
    import torch

    torch.manual_seed(0)
    net = squeeze_excite_net(1, act="relu", gate="hardsigmoid")
    assert_int8_firmware_matches_host(work, "squeeze-excite", net, (1, 1, 12, 12),
                                      ["quantized_mul", "quantized_lut"])


def test_int8_firmware_on_the_cortex_m4_matches_host_bit_exactly(work):
    target = REPO / "targets" / "cortex-m4-an386.toml"
    pte, compiled, shape = compile_int8(work, "ds-cnn", target)
    assert compiled.returncode == 0, compiled.stderr
    inputs = work / "ds-cnn.m4.in8.npz"
    np.savez(inputs, input_0=np.random.default_rng(8).integers(-128, 128, shape).astype(np.int8))
    host_out = work / "ds-cnn.m4.host8.npz"
    assert pteron("run", pte, "--inputs", inputs, "--outputs", host_out).returncode == 0
    expected = np.load(host_out)["output_0"].tobytes()
    counts = {}
    for path in ("simd", "scalar"):
        out = work / f"ds-cnn.m4.{path}.npz"
        fw = pteron("firmware", pte, "--target", target, "-o", work / f"ds-cnn.m4.{path}.elf", "--run",
                    "--inputs", inputs, "--outputs", out, "--kernel-path", path, "--json")
        assert fw.returncode == 0, fw.stderr
        assert np.load(out)["output_0"].tobytes() == expected, path
        counts[path] = json.loads(fw.stdout)["measured"]["instructions"]
    assert counts["scalar"] > 4 * counts["simd"], counts
