"""The VGF delegate's runtime on lavapipe through Arm's ML emulation layer: a small FP32 conv
net written as TOSA (tosa-tools' serializer, in .venv-arm), converted to .vgf by the ML SDK
model converter, packed into a payload and run by `pteron-vgf` (the registered backend's
init/execute), compared with the same net in PyTorch.

Tolerance (fp32, emulated data graph vs torch eager on the same inputs): max abs error within
1e-5 * (1 + max |reference|) (the emulation layer's conv shaders sum in their own order).

The TOSA fixture comes from make_tosa_fixture.py, not pteron's TOSA lowering, so these tests
check the runtime alone (test_vgf_lowering.py covers torch -> TOSA -> VGF).
"""

import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[3]
BUILD = Path(os.environ.get("PTERON_BUILD", REPO / "build"))


def _arm_venv():
    """The Arm tools venv the build was configured with (a worktree uses the main checkout's)."""
    if "PTERON_ARM_VENV" in os.environ:
        return Path(os.environ["PTERON_ARM_VENV"])
    for line in (BUILD / "CMakeCache.txt").read_text().splitlines():
        if line.startswith("PTERON_ARM_VENV:"):
            return Path(line.split("=", 1)[1])
    return REPO / ".venv-arm"


ARM_VENV = _arm_venv()
TOOL = BUILD / "backends" / "vgf" / "pteron-vgf"
LAYERS = BUILD / "vgf_layers"
LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"


def _env(emulation=True):
    env = {k: v for k, v in os.environ.items() if k not in ("VK_LAYER_PATH", "VK_INSTANCE_LAYERS")}
    if os.path.exists(LAVAPIPE):
        env["VK_ICD_FILENAMES"] = LAVAPIPE
    # Without emulation: the user's own (empty) layer folder, which wins over the layers pteron
    # ships and finds by itself when VK_LAYER_PATH is unset.
    env["VK_LAYER_PATH"] = str(LAYERS) if emulation else tempfile.mkdtemp(prefix="no-vk-layers-")
    return env


def _tool(*args, emulation=True):
    return subprocess.run([str(TOOL), *map(str, args)], env=_env(emulation), capture_output=True,
                          text=True, timeout=120)


@pytest.fixture(scope="module")
def convnet(tmp_path_factory):
    d = tmp_path_factory.mktemp("vgf")
    subprocess.run([str(ARM_VENV / "bin" / "python"), str(Path(__file__).with_name(
        "make_tosa_fixture.py")), str(d)], check=True, timeout=120)
    subprocess.run([str(ARM_VENV / "bin" / "model-converter"), "--input", str(d / "convnet.tosa"),
                    "--output", str(d / "convnet.vgf")], check=True, capture_output=True,
                   timeout=120)
    r = _tool("pack", d / "convnet.vgf", d / "convnet.payload")
    assert r.returncode == 0, r.stderr
    return d


def _reference(weights, x):
    t = {k: torch.from_numpy(weights[k]) for k in weights.files}
    h = torch.from_numpy(x).permute(0, 3, 1, 2)  # NHWC -> NCHW
    h = F.relu(F.conv2d(h, t["w1"].permute(0, 3, 1, 2), t["b1"], padding=1))
    h = F.conv2d(h, t["w2"].permute(0, 3, 1, 2), t["b2"])
    return h.permute(0, 2, 3, 1).numpy()


@pytest.mark.parametrize("seed", [0, 1])
def test_convnet_matches_pytorch(convnet, seed):
    x = np.random.default_rng(seed).standard_normal([1, 8, 8, 3]).astype(np.float32)
    x.tofile(convnet / "x.bin")
    r = _tool("run", convnet / "convnet.payload", convnet / "x.bin", "-o", convnet / "y.bin")
    assert r.returncode == 0, r.stderr
    got = np.fromfile(convnet / "y.bin", np.float32).reshape(1, 8, 8, 4)
    ref = _reference(np.load(convnet / "convnet_weights.npz"), x)
    assert np.abs(got - ref).max() <= 1e-5 * (1 + np.abs(ref).max())


def test_recorded_once_and_replayed(convnet):
    np.ones([1, 8, 8, 3], np.float32).tofile(convnet / "ones.bin")
    r = _tool("run", convnet / "convnet.payload", convnet / "ones.bin", "-o", convnet / "o.bin",
              "--repeat", 3)
    assert r.returncode == 0, r.stderr


def test_missing_extension_is_one_clear_line(convnet):
    np.zeros([1, 8, 8, 3], np.float32).tofile(convnet / "z.bin")
    r = _tool("run", convnet / "convnet.payload", convnet / "z.bin", "-o", convnet / "z_out.bin",
              emulation=False)
    assert r.returncode == 1
    line = r.stderr.strip().splitlines()[-1]
    assert "VK_ARM_data_graph not available" in line
    assert f"VK_LAYER_PATH={LAYERS}" in line


def _corrupt(convnet, name, edit):
    data = bytearray((convnet / "convnet.payload").read_bytes())
    data = edit(data)
    (convnet / name).write_bytes(bytes(data))
    np.zeros([1, 8, 8, 3], np.float32).tofile(convnet / "z.bin")
    return _tool("run", convnet / name, convnet / "z.bin", "-o", convnet / "bad_out.bin")


def _poke(offset, value):
    def edit(data):
        data[offset:offset + len(value)] = value
        return data
    return edit


def _vgf_offset(convnet):
    return int.from_bytes((convnet / "convnet.payload").read_bytes()[16:24], "little")


def _fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


IO = 40  # the I/O table follows the 40-byte header; entries are 72 bytes


@pytest.mark.parametrize("case,edit,message", [
    ("truncated header", lambda d: d[:20], "too short"),
    ("bad magic", _poke(0, b"XXXX"), "bad magic"),
    ("bad version", _poke(4, (9).to_bytes(4, "little")), "version 9"),
    ("too many inputs", _poke(8, (1000).to_bytes(4, "little")), "inputs"),
    ("vgf past the end", _poke(24, (1 << 40).to_bytes(8, "little")), "not inside"),
    ("truncated vgf", lambda d: d[:-200], "not inside"),
    ("negative dim", _poke(IO + 8, (-3).to_bytes(8, "little", signed=True)), "dim 0 is -3"),
    ("wrong input shape", _poke(IO + 8 + 8, (9).to_bytes(8, "little")), "does not match"),
    ("repeated dim order", _poke(IO + 56, bytes([0, 1, 1, 3])), "invalid dim order"),
    ("vgf index out of range", _poke(IO + 72 + 64, (1).to_bytes(4, "little")), "names VGF output 1"),
    ("checksum", _poke(32, (12345).to_bytes(8, "little")), "fail their checksum"),
])
def test_malformed_payload_rejected(convnet, case, edit, message):
    r = _corrupt(convnet, case.replace(" ", "_"), edit)
    assert r.returncode == 1, (case, r.returncode, r.stderr)
    assert message in r.stderr, (case, r.stderr)


def test_garbage_vgf_with_a_valid_checksum_rejected(convnet):
    def scramble(data):
        off = _vgf_offset(convnet)
        data[off:off + 4] = b"NOPE"  # the VGF magic
        data[32:40] = _fnv1a64(data[off:]).to_bytes(8, "little")
        return data
    r = _corrupt(convnet, "garbage_vgf", scramble)
    assert r.returncode == 1, r.stderr
    assert "VGF: invalid header" in r.stderr


def test_random_vgf_corruption_is_caught_before_the_driver(convnet):
    # The driver (Arm's emulation layer) crashes on corrupt SPIR-V; the checksum stops it first.
    rng = np.random.default_rng(3)
    off = _vgf_offset(convnet)
    size = len((convnet / "convnet.payload").read_bytes()) - off
    for i in range(4):
        def flip(data):
            for p in rng.integers(off, off + size, 4):
                data[p] ^= 0x55
            return data
        r = _corrupt(convnet, f"flip{i}", flip)
        assert r.returncode == 1 and "fail their checksum" in r.stderr, r.stderr


def test_corrupt_vgf_never_crashes_the_decoder(convnet):
    # pteron-vgf pack decodes the .vgf with the VGF library and our checks, no Vulkan.
    vgf = (convnet / "convnet.vgf").read_bytes()
    rng = np.random.default_rng(11)
    for i in range(30):
        data = bytearray(vgf)
        for p in rng.integers(0, len(data), int(rng.integers(1, 8))):
            data[p] = int(rng.integers(0, 256))
        if i % 3 == 0:
            data = data[:int(rng.integers(0, len(data)))]
        (convnet / "fuzz.vgf").write_bytes(bytes(data))
        r = _tool("pack", convnet / "fuzz.vgf", convnet / "fuzz.payload")
        assert r.returncode in (0, 1), (i, r.returncode, r.stderr)


def test_convert_runs_the_model_converter(convnet):
    r = _tool("convert", convnet / "convnet.tosa", convnet / "converted.payload")
    assert r.returncode == 0, r.stderr
    assert (convnet / "converted.payload").read_bytes() == (convnet / "convnet.payload").read_bytes()


def test_missing_model_converter_is_one_line(convnet, monkeypatch):
    monkeypatch.setenv("PTERON_MODEL_CONVERTER", str(convnet / "no-such-converter"))
    r = _tool("convert", convnet / "convnet.tosa", convnet / "never.payload")
    assert r.returncode == 1
    assert r.stderr.strip() == (f"pteron-vgf: VGF: PTERON_MODEL_CONVERTER={convnet}/no-such-converter"
                                " is not an executable file")


def test_converter_failure_is_reported(convnet):
    (convnet / "bad.tosa").write_bytes((convnet / "convnet.tosa").read_bytes()[:100])
    r = _tool("convert", convnet / "bad.tosa", convnet / "never.payload")
    assert r.returncode == 1
    assert "VGF: model-converter failed: ERROR: TOSA graph failed flatbuffer verification" in r.stderr
