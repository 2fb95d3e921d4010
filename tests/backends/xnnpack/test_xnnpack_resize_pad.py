"""Resize (upsample) and pads on XNNPACK against PyTorch (issue 17).

upsample_nearest2d by integer factors runs as a depthwise deconvolution with a kernel of ones
(Debian's 2022 XNNPACK has no nearest resize): each output is one input times 1.0, so the
upsample itself is exact; it is checked bit for bit against torch's nearest upsample of the
same program's own convolution output. upsample_bilinear2d (XNNPACK's resize_bilinear_2d,
align_corners both ways) and constant_pad_nd (static_constant_pad) come with convolutions
around them, so each graph is one XNNPACK region; no portable kernel is needed.

Tolerance (fp32, whole graph against torch eager): max abs error within 1e-5 * (1 + max
|reference|), as the other XNNPACK lowering tests (convolutions reorder sums).
"""

import pteron
import pytest
import torch
import torch.nn.functional as F

torch.manual_seed(0)


class ConvThen(torch.nn.Module):
    """conv -> fn -> conv: the region has convolutions, so it repays its boundary."""

    def __init__(self, fn, tail=True):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 5, 3, padding=1)
        self.b = torch.nn.Conv2d(5, 4, 1) if tail else None
        self.fn = fn

    def forward(self, x):
        y = self.fn(self.a(x))
        return self.b(y) if self.b is not None else y


def _lower(model, x):
    ep = pteron.export(model.eval(), (x,))
    return pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()])


def _check(model, x):
    program = _lower(model, x)
    report = program.report
    assert len(report["delegated_regions"]) == 1, report["refusals"]
    kept = [str(r) for r in report["refusals"] if "upsample" in str(r) or "pad" in str(r)]
    assert not kept, kept
    with torch.no_grad():
        want = model(x)
    got = program.load().forward(x)[0]
    assert got.shape == want.shape
    err = float((got - want).abs().max())
    assert err <= 1e-5 * (1 + float(want.abs().max())), err
    return program


NEAREST = {
    "scale2": lambda y: F.interpolate(y, scale_factor=2, mode="nearest"),
    "scale3": lambda y: F.interpolate(y, scale_factor=3, mode="nearest"),
    "scale_2x3": lambda y: F.interpolate(y, scale_factor=(2, 3), mode="nearest"),
    "size_4x": lambda y: F.interpolate(y, size=(28, 20), mode="nearest"),
    "upsample_module": torch.nn.Upsample(scale_factor=2),
}


@pytest.mark.parametrize("case", sorted(NEAREST))
def test_nearest_upsample_matches_torch(case):
    _check(ConvThen(NEAREST[case]), torch.randn(2, 3, 7, 5))


@pytest.mark.parametrize("case", ["scale3", "scale_2x3"])
def test_nearest_upsample_is_an_exact_copy(case):
    """The delegate's upsample of its own conv output equals torch's nearest upsample of that
    output bit for bit: the deconvolution of ones adds nothing."""
    x = torch.randn(1, 3, 6, 9)
    conv_only = ConvThen(lambda y: y, tail=False).eval()
    upsampled = ConvThen(NEAREST[case], tail=False).eval()
    upsampled.a.load_state_dict(conv_only.a.state_dict())
    y = _lower(conv_only, x).load().forward(x)[0]
    z = _check(upsampled, x).load().forward(x)[0]
    assert torch.equal(z, NEAREST[case](y))


BILINEAR = {
    "scale2": lambda y: F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False),
    "scale2_align": lambda y: F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=True),
    "size": lambda y: F.interpolate(y, size=(11, 13), mode="bilinear", align_corners=False),
    "size_align_down": lambda y: F.interpolate(y, size=(5, 3), mode="bilinear", align_corners=True),
}


@pytest.mark.parametrize("case", sorted(BILINEAR))
def test_bilinear_upsample_matches_torch(case):
    _check(ConvThen(BILINEAR[case]), torch.randn(1, 3, 8, 6))


PADS = {
    "hw": lambda y: F.pad(y, (1, 2, 3, 0)),
    "value": lambda y: F.pad(y, (2, 2, 1, 1), value=-0.75),
    "channels": lambda y: F.pad(y, (0, 0, 0, 0, 1, 2), value=0.5),
    "then_upsample": lambda y: F.interpolate(F.pad(y, (1, 0, 0, 1), value=0.25), scale_factor=2),
}


@pytest.mark.parametrize("case", sorted(PADS))
def test_constant_pad_matches_torch(case):
    # Padding channels changes their count: no 5-channel conv after it.
    _check(ConvThen(PADS[case], tail=case != "channels"), torch.randn(1, 3, 5, 7))


def test_unet_style_decoder_is_one_region():
    """Encoder (conv, pool), decoder (nearest and bilinear upsample, pad, skip add): every node
    on XNNPACK, the whole graph one region."""

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.e2 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.d1 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.out = torch.nn.Conv2d(8, 2, 1)

        def forward(self, x):
            a = torch.relu(self.e1(x))
            b = torch.relu(self.e2(F.max_pool2d(a, 2)))
            u = F.interpolate(b, scale_factor=2, mode="nearest")
            v = F.interpolate(torch.relu(self.d1(u + a)), scale_factor=2, mode="bilinear")
            return self.out(F.pad(v, (1, 1, 1, 1)))

    _check(Tiny(), torch.randn(1, 3, 16, 12))


def test_nearest_by_a_non_integer_factor_is_refused_with_its_reason():
    model = ConvThen(lambda y: F.interpolate(y, size=(10, 7), mode="nearest"))
    ep = pteron.export(model.eval(), (torch.randn(1, 3, 7, 5),))
    try:
        report = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()]).report
        refusals = " ".join(str(r) for r in report["refusals"])
    except pteron.CompileError as e:  # the portable upsample kernel may be missing
        refusals = str(e)
        report = None
    if report is not None:
        assert "non-integer factor" in refusals, refusals
    else:
        assert "upsample_nearest2d" in refusals, refusals
