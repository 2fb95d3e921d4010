"""The ExecuTorch fixtures are what the manifest says they are, and they agree with this
project's torch: the .pte files are intact ET12 programs with a consistent extended header and
128-byte-aligned segments, the .npz files hold the manifest's shapes and dtypes, and
ExecuTorch 1.5.1's outputs equal torch 2.13 eager on the same seeded models/interop.py models
(rtol 1e-4, atol 1e-5 x output scale: portable kernels sum in another order)."""

import hashlib

import pytest
import torch
from executorch_fixtures import MANIFEST, NAMES, load_fixture

from models import interop


def test_manifest_lists_every_interop_model():
    assert NAMES == list(interop.FIXTURES)
    assert MANIFEST["executorch"] == "1.5.1"


@pytest.mark.parametrize("name", NAMES)
def test_pte_is_the_manifest_file(name):
    path, _, _, entry = load_fixture(name)
    data = path.read_bytes()
    assert len(data) == entry["file_size"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]


@pytest.mark.parametrize("name", NAMES)
def test_pte_header_and_segment_layout(name):
    path, _, _, entry = load_fixture(name)
    data = path.read_bytes()
    assert data[4:8] == b"ET12"
    if data[8:12] != b"eh00":
        # No extended header: no segment data follows the flatbuffer.
        assert entry["segment_base_offset"] == 0
        assert all(s["size"] == 0 for s in entry["segments"])
        return
    header_len = int.from_bytes(data[12:16], "little")
    program_size = int.from_bytes(data[16:24], "little")
    base = int.from_bytes(data[24:32], "little")
    segment_bytes = int.from_bytes(data[32:40], "little")
    assert header_len == 32
    assert base == entry["segment_base_offset"] == -(-program_size // 128) * 128
    assert base + segment_bytes == len(data)
    last = max(s["offset"] + s["size"] for s in entry["segments"])
    assert last == segment_bytes
    assert all(s["offset"] % 128 == 0 for s in entry["segments"])


@pytest.mark.parametrize("name", NAMES)
def test_npz_matches_manifest_shapes_and_dtypes(name):
    _, inputs, outputs, entry = load_fixture(name)
    for tensors, specs in ((inputs, entry["inputs"]), (outputs, entry["outputs"])):
        assert [list(t.shape) for t in tensors] == [s["shape"] for s in specs]
        assert [str(t.dtype).removeprefix("torch.") for t in tensors] == [s["dtype"] for s in specs]


@pytest.mark.parametrize("name", NAMES)
def test_executorch_outputs_equal_torch_eager(name):
    _, inputs, outputs, _ = load_fixture(name)
    model, own_inputs = interop.build(name)
    for mine, theirs in zip(own_inputs, inputs):
        assert torch.equal(mine, theirs), "models/interop.py no longer builds the fixture inputs"
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(expected) == len(outputs)
    for got, want in zip(outputs, expected):
        assert got.dtype == want.dtype
        scale = want.float().abs().max().item() or 1.0
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5 * scale)
