"""The Ethos-U delegate inside Cortex-M55 firmware (emulated driver), under QEMU mps3-an547.

ds-cnn compiled with `--backends ethos-u,cortex-m,portable --quantize ethos-u --int8-io` for
ethos-u55-128 puts the int8 network in one Ethos-U region. `pteron firmware --target
cortex-m55-an547` links the Ethos-U delegate (its region runs on the TOSA executor on the M55,
and the device log says EMULATED), counts the delegate's declared load-time memory
(`pteron.method_bytes`) in the method memory it reserves, and the outputs are bit-exact with
`pteron run` on the host for the same program and inputs. Any other delegate (e.g. XNNPACK)
is refused with its id.
"""

import json
import subprocess
from pathlib import Path

import numpy as np
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
TARGET = REPO / "targets" / "cortex-m55-an547.toml"


def pteron(*args):
    r = subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=900,
                       check=False)
    assert r.returncode == 0, r.stderr
    return r


def test_ethos_u_region_runs_in_firmware_bit_exactly(tmp_path):
    from pteron import zoo
    from pteron.tosa import zoo_calibration

    pt2 = zoo.export("ds-cnn", tmp_path / "ds-cnn.pt2")
    calibration = zoo_calibration("ds-cnn")
    np.savez(tmp_path / "cal.npz", input_0=calibration[0])
    pte = tmp_path / "ds-cnn.pte"
    report = json.loads(pteron("compile", pt2, "-o", pte, "--target", "ethos-u55-128", "--backends",
                               "ethos-u,cortex-m,portable", "--quantize", "ethos-u", "--calibration",
                               tmp_path / "cal.npz", "--int8-io", "--json").stdout)
    assert [r["backend"] for r in report["delegated_regions"]] == ["ethos-u"]

    inputs = tmp_path / "in.npz"
    x = np.random.default_rng(7).integers(-128, 128, calibration[0].shape[1:]).astype(np.int8)
    np.savez(inputs, input_0=x)
    host_out = tmp_path / "host.npz"
    pteron("run", pte, "--inputs", inputs, "--outputs", host_out)

    elf, fw_out = tmp_path / "ds-cnn.elf", tmp_path / "fw.npz"
    fw = json.loads(pteron("firmware", pte, "--target", TARGET, "-o", elf, "--run", "--inputs",
                           inputs, "--outputs", fw_out, "--json").stdout)
    expected, got = np.load(host_out)["output_0"], np.load(fw_out)["output_0"]
    assert got.dtype == expected.dtype == np.int8 and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()

    # The delegate's declared load-time memory is reserved (method memory at least that), and
    # the device used no more than was reserved.
    declared = fw["delegates"]["method_bytes"]
    assert fw["delegates"]["ids"] == ["PteronEthosUBackend"] and declared > 0
    assert fw["estimate"]["method"] >= declared
    assert 0 < fw["measured"]["method"] <= fw["estimate"]["method"]
    assert fw["measured"]["ram"] <= fw["estimate"]["ram"]

    # The device labels the region's execution as emulation.
    console = subprocess.run(["qemu-system-arm", "-M", "mps3-an547", "-nographic", "-semihosting",
                              "-kernel", str(elf), "-append", f"{elf}.in.bin"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
                             check=False).stdout
    assert "Ethos-U delegate (ethos-u55-128" in console and "EMULATED" in console, console
    assert "pteron-firmware: ok" in console, console


def test_other_delegates_are_refused(tmp_path):
    from pteron import zoo

    pt2 = zoo.export("digits-cnn", tmp_path / "digits-cnn.pt2")
    pte = tmp_path / "xnnpack.pte"
    pteron("compile", pt2, "-o", pte, "--backends", "xnnpack,portable")
    r = subprocess.run([pteron_cli(), "firmware", str(pte), "--target", str(TARGET), "-o",
                        str(tmp_path / "x.elf")], capture_output=True, text=True, timeout=300,
                       check=False)
    assert r.returncode == 1
    assert "delegate 'PteronXnnpackBackend' cannot run in firmware" in r.stderr, r.stderr
    assert not (tmp_path / "x.elf").exists()
