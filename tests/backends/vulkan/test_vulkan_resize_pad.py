"""Upsampling and padding on the Vulkan delegate (lavapipe) against PyTorch (issue 17).

Each op is compiled on its own with `VulkanPartitioner()` at a size whose region repays a submit
(>= 65536 output elements), must run in the Vulkan region (the program's graph info says where
every node runs) and match torch eager on the same input: nearest upsampling and every pad
exactly, negative (cropping) pads included (they copy elements; the indices are ATen's),
bilinear within 1e-5 abs (torch's fused source coordinate reproduced exactly; the four-tap sum
rounds in another order), antialiased bilinear within 2e-5 abs (ATen's windows and weights; the
weights' normalising division and the window sums round in another order). A small
segmentation-style net goes through the CLI with `--backends vulkan,portable`; unsupported
variants are refused with their reasons.
"""

import os
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

_LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if os.path.exists(_LAVAPIPE):
    os.environ.setdefault("VK_ICD_FILENAMES", _LAVAPIPE)  # before the device context is made

import pteron  # noqa: E402 (the Vulkan loader reads VK_ICD_FILENAMES when pteron creates it)
from pteron_cli import pteron_cli  # noqa: E402


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _lower(model, x, partitioner=None):
    ep = pteron.export(model.eval(), (x,))
    return pteron.to_edge_transform_and_lower(ep, partitioner=[partitioner or pteron.VulkanPartitioner()])


def _placement(program):
    """(op, runs_on) of every node, from the graph info the compiler stored in the program."""
    info = pteron.get_delegation_info(program).graph_info
    return [(n["op"], n["runs_on"]) for n in info["nodes"]]


def _run_on_vulkan(model, x, op, partitioner=None):
    """Compiles `model`, checks that its one node is `op` in one Vulkan region, runs it."""
    program = _lower(model, x, partitioner)
    assert len(program.report["delegated_regions"]) == 1, program.report["refusals"]
    assert _placement(program) == [(op, "vulkan")], _placement(program)
    with torch.no_grad():
        want = model(x)
    got = program.load().forward(x)[0]
    assert got.shape == want.shape
    return got, want


NEAREST = {
    "scale2": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), (2, 16, 33, 40)),
    "scale_3x2": (lambda x: F.interpolate(x, scale_factor=(3, 2), mode="nearest"), (2, 16, 21, 30)),
    "scale1.7": (lambda x: F.interpolate(x, scale_factor=1.7, mode="nearest"), (2, 16, 33, 40)),
    "scale0.5": (lambda x: F.interpolate(x, scale_factor=0.5, mode="nearest"), (4, 64, 33, 40)),
    "size_up": (lambda x: F.interpolate(x, size=(50, 61), mode="nearest"), (2, 16, 33, 40)),
    "size_down": (lambda x: F.interpolate(x, size=(13, 17), mode="nearest"), (2, 160, 33, 40)),
    "module": (torch.nn.Upsample(scale_factor=3), (1, 16, 20, 25)),
}


@pytest.mark.parametrize("name", NEAREST)
def test_upsample_nearest_vec_matches_torch_exactly(name):
    fn, shape = NEAREST[name]
    got, want = _run_on_vulkan(Fn(fn), torch.randn(*shape), "aten::upsample_nearest2d.vec")
    assert torch.equal(got, want)


BILINEAR = {
    "scale2": (dict(scale_factor=2), (2, 16, 33, 40)),
    "scale1.3": (dict(scale_factor=1.3), (2, 16, 33, 40)),
    "scale_0.6x0.45": (dict(scale_factor=(0.6, 0.45)), (4, 64, 33, 40)),
    "size_up": (dict(size=(50, 61)), (2, 16, 33, 40)),
    "size_70x90": (dict(size=(70, 90)), (1, 16, 33, 40)),
    "size_down": (dict(size=(13, 17)), (2, 160, 33, 40)),
    "one_axis": (dict(size=(33, 97)), (2, 16, 33, 40)),
}


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("name", BILINEAR)
def test_upsample_bilinear_matches_torch(name, align_corners):
    kwargs, shape = BILINEAR[name]
    model = Fn(lambda x: F.interpolate(x, mode="bilinear", align_corners=align_corners, **kwargs))
    got, want = _run_on_vulkan(model, torch.randn(*shape), "aten::upsample_bilinear2d.vec")
    assert float((got - want).abs().max()) <= 1e-5


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("size", [(50, 61), (70, 90), (41, 123), (13, 17)])
def test_bilinear_source_coordinates_are_torchs(size, align_corners):
    """On a +-1 checkerboard every output is a difference of neighbours, so a source coordinate
    off by one ulp (2e-6 at 30) shows as ~4e-6 while the four-tap sum's own rounding stays near
    1e-7: within 5e-7 means the same coordinates as torch, whose CPU build computes
    scale * (dst + 0.5) - 0.5 as one fused multiply-add."""
    h, w = torch.arange(33).view(33, 1), torch.arange(40).view(1, 40)
    board = ((h + w) % 2 * 2 - 1).float().expand(2, 160, 33, 40).contiguous()
    model = Fn(lambda x: F.interpolate(x, size=size, mode="bilinear", align_corners=align_corners))
    got, want = _run_on_vulkan(model, board, "aten::upsample_bilinear2d.vec")
    assert float((got - want).abs().max()) <= 5e-7


ANTIALIAS = {
    "down_0.5": (dict(scale_factor=0.5), (2, 32, 64, 80)),
    "down_size": (dict(size=(20, 25)), (2, 160, 33, 40)),
    "down_0.3x0.7": (dict(scale_factor=(0.3, 0.7)), (2, 64, 64, 48)),
    "up_size": (dict(size=(50, 61)), (2, 16, 33, 40)),
    "one_axis": (dict(size=(33, 17)), (2, 64, 33, 40)),
}


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("name", ANTIALIAS)
def test_upsample_bilinear_antialias_matches_torch(name, align_corners):
    kwargs, shape = ANTIALIAS[name]
    model = Fn(lambda x: F.interpolate(x, mode="bilinear", antialias=True,
                                       align_corners=align_corners, **kwargs))
    got, want = _run_on_vulkan(model, torch.randn(*shape), "aten::_upsample_bilinear2d_aa.default")
    assert float((got - want).abs().max()) <= 2e-5


def test_nn_upsample_bilinear_module_matches_torch():
    model = torch.nn.Upsample(scale_factor=2, mode="bilinear")
    got, want = _run_on_vulkan(model, torch.randn(1, 16, 40, 40), "aten::upsample_bilinear2d.vec")
    assert float((got - want).abs().max()) <= 1e-5


PADS = {
    "constant_2d": (lambda x: F.pad(x, (1, 2, 3, 4), value=0.5), (2, 24, 33, 40),
                    "aten::constant_pad_nd.default"),
    "constant_last_dim": (lambda x: F.pad(x, (3, 5), value=-2), (2, 24, 33, 40),
                          "aten::constant_pad_nd.default"),
    "constant_on_2d_tensor": (lambda x: F.pad(x, (1, 1, 2, 2)), (300, 250),
                              "aten::constant_pad_nd.default"),
    "constant_on_1d_tensor": (lambda x: F.pad(x, (5, 7), value=3.25), (70000,),
                              "aten::constant_pad_nd.default"),
    "constant_trailing_zeros": (lambda x: F.pad(x, (1, 1, 1, 1, 0, 0)), (2, 24, 33, 40),
                                "aten::constant_pad_nd.default"),
    "constant_inf": (lambda x: F.pad(x, (2, 0, 0, 2), value=float("-inf")), (2, 24, 33, 40),
                     "aten::constant_pad_nd.default"),
    "zero_pad_module": (torch.nn.ZeroPad2d(2), (2, 24, 33, 40), "aten::constant_pad_nd.default"),
    "reflect": (lambda x: F.pad(x, (1, 2, 3, 4), mode="reflect"), (2, 24, 33, 40),
                "aten::reflection_pad2d.default"),
    "reflect_3d_tensor": (lambda x: F.pad(x, (5, 6, 7, 8), mode="reflect"), (32, 33, 40),
                          "aten::reflection_pad2d.default"),
    "reflect_widest": (lambda x: F.pad(x, (39, 39, 32, 32), mode="reflect"), (2, 8, 33, 40),
                       "aten::reflection_pad2d.default"),
    "reflect_1d": (lambda x: F.pad(x, (3, 4), mode="reflect"), (64, 33, 40),
                   "aten::reflection_pad1d.default"),
    "replicate": (lambda x: F.pad(x, (1, 2, 3, 4), mode="replicate"), (2, 24, 33, 40),
                  "aten::replication_pad2d.default"),
    "replicate_past_the_dim": (lambda x: F.pad(x, (45, 0, 0, 40), mode="replicate"), (2, 8, 33, 40),
                               "aten::replication_pad2d.default"),
    "replication_module": (torch.nn.ReplicationPad2d(3), (40, 33, 40),
                           "aten::replication_pad2d.default"),
    "constant_crop": (lambda x: F.pad(x, (-1, 2, -3, 0), value=0.5), (2, 48, 33, 40),
                      "aten::constant_pad_nd.default"),
    "constant_crop_only": (lambda x: F.pad(x, (-4, -5, -6, -2)), (2, 48, 33, 40),
                           "aten::constant_pad_nd.default"),
    "constant_crop_last_dim": (lambda x: F.pad(x, (-7, 3)), (70000,),
                               "aten::constant_pad_nd.default"),
    "reflect_crop": (lambda x: F.pad(x, (-2, 5, 3, -1), mode="reflect"), (2, 24, 33, 40),
                     "aten::reflection_pad2d.default"),
    "replicate_crop": (lambda x: F.pad(x, (4, -3, -2, 6), mode="replicate"), (2, 24, 33, 40),
                       "aten::replication_pad2d.default"),
}


@pytest.mark.parametrize("name", PADS)
def test_pad_matches_torch_exactly(name):
    fn, shape, op = PADS[name]
    got, want = _run_on_vulkan(Fn(fn), torch.randn(*shape), op)
    assert torch.equal(got, want)


class SegNet(torch.nn.Module):
    """A segmentation-style head: reflect pad -> conv (no padding) -> relu -> bilinear x2 ->
    conv -> constant pad."""

    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Conv2d(3, 16, 3, stride=2)
        self.head = torch.nn.Conv2d(16, 5, 3, padding=1)

    def forward(self, x):
        y = torch.relu(self.enc(F.pad(x, (1, 1, 1, 1), mode="reflect")))
        y = F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)
        return F.pad(self.head(y), (0, 1, 0, 1), value=-1.0)


def test_segmentation_net_through_the_cli_matches_torch(tmp_path):
    torch.manual_seed(0)
    model, x = SegNet().eval(), torch.randn(1, 3, 64, 64)
    cli = pteron_cli()
    ep = pteron.export(model, (x,))
    torch.export.save(ep, tmp_path / "seg.pt2")
    pte = tmp_path / "seg.pte"
    subprocess.run([cli, "compile", str(tmp_path / "seg.pt2"), "-o", str(pte), "--backends",
                    "vulkan,portable"], check=True, capture_output=True)
    placement = [(n["op"], n["runs_on"])
                 for n in pteron.get_delegation_info(str(pte)).graph_info["nodes"]]
    ops = [op for op, _ in placement]
    for op in ("aten::reflection_pad2d.default", "aten::upsample_bilinear2d.vec",
               "aten::constant_pad_nd.default"):
        assert op in ops, ops
    assert all(where == "vulkan" for _, where in placement), placement  # one Vulkan region
    np.savez(tmp_path / "in.npz", input_0=x.numpy())
    subprocess.run([cli, "run", str(pte), "--inputs", str(tmp_path / "in.npz"), "--outputs",
                    str(tmp_path / "out.npz")], check=True, capture_output=True)
    got = np.load(tmp_path / "out.npz")["output_0"]
    with torch.no_grad():
        want = model(x).numpy()
    assert got.shape == want.shape
    # The convolutions sum in another order than torch: 1e-5 relative to the output's size.
    assert np.abs(got - want).max() <= 1e-5 * (1 + np.abs(want).max())


def test_segmentation_net_fp16_matches_torch():
    """The same ops in an fp16 region (`vulkan:fp16=on`): the README's fp16 tolerance."""
    torch.manual_seed(0)
    model, x = SegNet().eval(), torch.randn(1, 3, 64, 64)
    program = _lower(model, x, pteron.VulkanPartitioner(fp16=True))
    assert all(where == "vulkan:fp16=on" for _, where in _placement(program)), _placement(program)
    with torch.no_grad():
        want = model(x)
    got = program.load().forward(x)[0]
    assert float((got - want).abs().max()) <= 3e-2 * (1 + float(want.abs().max()))


def _refusals(model, x, **export):
    ep = pteron.export(model.eval(), (x,), **export)
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.VulkanPartitioner()])
    return program, "\n".join(program.report["refusals"])


@pytest.mark.parametrize("fn,shape,reason", [
    (lambda x: F.pad(x, (1, 1, 1, 1, 1, 1)), (2, 24, 33, 40),
     "pads more than the last 2 dims (the Vulkan delegate pads the last 1 or 2)"),
    (lambda x: F.pad(x, (1, 1, 1, 1, 1, 1), mode="reflect"), (2, 8, 9, 33, 40),
     "reflection padding of 3 dims (the Vulkan delegate pads the last 1 or 2)"),
])
def test_unsupported_variants_are_refused_with_their_reason_and_still_run(fn, shape, reason):
    model, x = Fn(fn), torch.randn(*shape)
    program, refusals = _refusals(model, x)
    assert reason in refusals, refusals
    assert program.report["delegated_regions"] == []
    with torch.no_grad():
        want = model(x)
    got = program.load().forward(x)[0]  # on the portable kernels
    assert torch.allclose(got, want, atol=1e-5)


def test_dynamic_shapes_are_refused_with_the_reason():
    """The delegate resizes the transformer and CNN ops at execute (test_vulkan_dynamic.py), not
    upsampling or padding: a dynamic batch keeps them on the kernels, saying so."""
    model = Fn(lambda x: F.pad(F.interpolate(x, scale_factor=2, mode="nearest"), (1, 1)))
    batch = torch.export.Dim("batch", min=2, max=8)
    _, refusals = _refusals(model, torch.randn(2, 16, 33, 40), dynamic_shapes=({0: batch},))
    for op in ("aten::upsample_nearest2d.vec", "aten::constant_pad_nd.default"):
        assert "batch-dynamic conv/pool at execute, not " + op in refusals, refusals
