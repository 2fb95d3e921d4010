"""Padding through the Ethos-U path end to end: a net with reflection, replication, constant and
cropping pads around convolutions, quantized with the ethos-u scheme, is one Ethos-U region
(TOSA PAD for constant pads, SLICE + CONCAT for the modes TOSA's PAD lacks, SLICE for crops;
Vela puts every operator on the NPU), and the region's emulated run equals, bit for bit, the
TOSA reference model run on the region's TOSA form taken from the program's payload.
"""

import json

import numpy as np
import torch
import torch.nn.functional as F

from ethos_u_region import assert_region_matches_reference, cli


class PadNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3)
        self.c2 = torch.nn.Conv2d(8, 8, 3)

    def forward(self, x):
        h = torch.relu(self.c1(F.pad(x, (1, 1, 1, 1), mode="reflect")))
        h = F.pad(h, (2, 1, -1, 2))
        return self.c2(F.pad(h, (1, 2, 2, 1), mode="replicate"))


def test_pads_are_one_ethos_u_region_bit_exact_with_the_reference_model(tmp_path, reference):
    import pteron

    torch.manual_seed(0)
    shape = (1, 3, 16, 16)
    ep = pteron.export(PadNet().eval(), (torch.randn(shape),))
    torch.export.save(ep, tmp_path / "pad.pt2")
    np.savez(tmp_path / "cal.npz", input_0=np.random.default_rng(1).standard_normal((8, *shape)).astype(np.float32))
    pte = tmp_path / "pad.pte"
    report = json.loads(cli("compile", tmp_path / "pad.pt2", "-o", pte, "--target", "ethos-u55-128",
                            "--backends", "ethos-u,portable", "--quantize", "ethos-u", "--calibration",
                            tmp_path / "cal.npz", "--int8-io", "--json").stdout)
    assert [r["backend"] for r in report["delegated_regions"]] == ["ethos-u"], report["refusals"]
    info = json.loads(cli("inspect", pte, "--delegation", "--json").stdout)
    runs_on = {op["op"]: op["runs_on"] for op in info["ops"]}
    for op in ("aten::reflection_pad2d.default", "aten::replication_pad2d.default",
               "aten::constant_pad_nd.default"):
        assert "ethos-u" in runs_on[op], runs_on

    x = np.random.default_rng(7).integers(-128, 128, (1, 16, 16, 3)).astype(np.int8)  # NHWC
    assert_region_matches_reference(pte.read_bytes(), tmp_path, x, reference)
