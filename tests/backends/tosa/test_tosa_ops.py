"""Every op the TOSA lowering takes, run on the TOSA reference model (tosa-tools, .venv-arm).

FP profile: the reference model's fp32 results against torch eager, within 1e-5 (absolute plus
relative to the output's magnitude): TOSA sums in another order than torch, nothing more.

INT profile (graphs quantized with the ethos-u scheme, int8 inputs and outputs): the reference
model's int8 results against pteron's own quantized graph on the host kernels (the Q/DQ graph
as written: float op, then quantize). Data movement (view, permute, pad, max pool, cat of
equal parameters) is bit-exact. Arithmetic is within 1 int8 step: TOSA accumulates in int32 and
requantises once with a 32-bit multiplier and shift (RESCALE, single rounding), the host
computes the op in float and rounds; the two differ only where the real result lies within
rounding noise of a half step. Average pools requantise twice (AVG_POOL2D's own division, then
RESCALE to the output scale), also within 1 step. The share of elements off by one is checked
to stay small, so a systematic error (a wrong zero point or scale) cannot hide in the tolerance.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from pteron import tosa

torch.manual_seed(0)


@pytest.fixture(scope="module")
def ref():
    model = tosa.ReferenceModel()
    yield model
    model.close()


def _export(model, x, path):
    ep = torch.export.export(model.eval(), (x,)).run_decompositions()
    torch.export.save(ep, path)
    return path


def _check_fp(ref, model, x, path):
    r = tosa.lower(path, "FP", sample=[x.numpy()])
    assert r["ok"], r["reason"]
    assert r["refusals"] == [], r["refusals"]
    ins = [tosa.host_value(io) for io in r["inputs"]]
    out = ref.run(r["tosa"], ins)[0]
    with torch.no_grad():
        expected = model(x).numpy()
    io = r["outputs"][0]
    expected = np.ascontiguousarray(expected.transpose(io["dim_order"]))
    assert out.shape == expected.shape
    err = np.abs(out - expected).max()
    assert err <= 1e-5 * (1 + np.abs(expected).max()), err
    return r


def _check_int(ref, model, x, path, exact=False, calibration=None):
    g = torch.Generator().manual_seed(1)
    cal = calibration or [np.stack([torch.randn(x.shape, generator=g).numpy() for _ in range(8)])]
    rng = np.random.default_rng(0)
    xq = rng.integers(-128, 128, size=x.shape, dtype=np.int8)
    r = tosa.lower(path, "INT", "ethos-u", cal, int8_io=True, sample=[xq])
    assert r["ok"], r["reason"]
    assert r["refusals"] == [], r["refusals"]
    assert all(io["dtype"] == "int8" and io["quantized"] for io in r["inputs"] + r["outputs"])
    ins = [tosa.host_value(io) for io in r["inputs"]]
    out = ref.run(r["tosa"], ins)[0]
    expected = tosa.host_value(r["outputs"][0])
    assert out.shape == expected.shape and out.dtype == np.int8
    diff = np.abs(out.astype(np.int32) - expected.astype(np.int32))
    if exact:
        assert diff.max() == 0
    else:
        assert diff.max() <= 1, diff.max()
        assert (diff > 0).mean() <= 0.05, (diff > 0).mean()
    return r


class Fn(torch.nn.Module):
    def __init__(self, fn, *mods):
        super().__init__()
        self.fn = fn
        self.mods = torch.nn.ModuleList(mods)

    def forward(self, x):
        return self.fn(x, *self.mods)


def _conv(*a, **k):
    return Fn(lambda x, c: c(x), torch.nn.Conv2d(*a, **k))


# (name, module, input shape, INT bit-exact)
CASES = [
    ("conv3x3", _conv(3, 8, 3, padding=1), (1, 3, 9, 9), False),
    ("conv_stride2_odd", _conv(4, 6, 3, stride=2, padding=1), (2, 4, 10, 7), False),
    ("conv1x1_stride2", _conv(8, 4, 1, stride=2), (1, 8, 6, 6), False),
    ("conv_no_bias_rect", _conv(3, 5, (3, 1), padding=(1, 0), bias=False), (1, 3, 7, 5), False),
    ("conv_dilated", _conv(3, 4, 3, dilation=2, padding=2), (1, 3, 9, 9), False),
    ("depthwise", _conv(6, 6, 3, padding=1, groups=6), (1, 6, 8, 8), False),
    ("depthwise_mult2_s2", _conv(4, 8, 3, stride=2, groups=4), (1, 4, 9, 9), False),
    ("conv_relu", Fn(lambda x, c: F.relu(c(x)), torch.nn.Conv2d(3, 8, 3)), (1, 3, 8, 8), False),
    ("conv_relu6", Fn(lambda x, c: F.relu6(c(x)), torch.nn.Conv2d(3, 8, 3)), (1, 3, 8, 8), False),
    ("linear", Fn(lambda x, lin: lin(x), torch.nn.Linear(16, 10)), (3, 16), False),
    ("linear_3d", Fn(lambda x, lin: lin(x), torch.nn.Linear(8, 6)), (2, 5, 8), False),
    ("linear_relu", Fn(lambda x, lin: F.relu(lin(x)), torch.nn.Linear(12, 7)), (2, 12), False),
    ("add", Fn(lambda x: x + F.relu(x)), (1, 4, 5, 5), False),
    ("add_broadcast", Fn(lambda x: x + x.mean((2, 3), keepdim=True)), (1, 4, 5, 5), False),
    ("add_relu", Fn(lambda x: F.relu(x + torch.sigmoid(x))), (2, 6), False),
    ("mul", Fn(lambda x: x * torch.tanh(x)), (1, 3, 4, 4), False),
    ("relu", Fn(lambda x: F.relu(x)), (1, 3, 4, 4), True),
    ("hardtanh", Fn(lambda x: F.hardtanh(x, -0.5, 0.75)), (2, 10), True),
    ("max_pool", Fn(lambda x: F.max_pool2d(x, 2)), (1, 3, 8, 8), True),
    ("max_pool_3s2p1", Fn(lambda x: F.max_pool2d(x, 3, 2, 1)), (1, 4, 9, 9), True),
    ("max_pool_ceil", Fn(lambda x: F.max_pool2d(x, 2, ceil_mode=True)), (1, 2, 7, 7), True),
    ("avg_pool", Fn(lambda x: F.avg_pool2d(x, 2)), (1, 3, 8, 8), False),
    ("avg_pool_pad", Fn(lambda x: F.avg_pool2d(x, 3, 1, 1)), (1, 3, 6, 6), False),
    ("avg_pool_pad_excl",
     Fn(lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)), (1, 3, 7, 7), False),
    ("adaptive_avg_pool", Fn(lambda x: F.adaptive_avg_pool2d(x, 1)), (2, 5, 4, 6), False),
    ("mean_hw", Fn(lambda x: x.mean((-1, -2))), (1, 8, 5, 5), False),
    ("flatten", Fn(lambda x: F.relu(x).flatten(1)), (2, 3, 4, 4), True),
    ("view", Fn(lambda x: x.view(2, 12, 4)), (2, 3, 2, 4, 2), True),
    ("permute", Fn(lambda x: F.relu(x).permute(0, 2, 3, 1)), (1, 3, 4, 5), True),
    ("transpose", Fn(lambda x: x.transpose(1, 2)), (2, 3, 5), True),
    ("cat", Fn(lambda x: torch.cat([F.max_pool2d(x, 1), x], 1)), (1, 3, 4, 4), True),
    ("pad", Fn(lambda x: F.pad(x, (1, 2, 0, 1))), (1, 2, 4, 4), False),
    ("sigmoid", Fn(lambda x: torch.sigmoid(x)), (2, 3, 4, 4), False),
    ("tanh", Fn(lambda x: torch.tanh(x)), (4, 9), False),
]


@pytest.mark.parametrize("name,model,shape,exact", CASES, ids=[c[0] for c in CASES])
def test_op_fp_and_int(ref, tmp_path, name, model, shape, exact):
    x = torch.randn(shape)
    path = _export(model, x, tmp_path / f"{name}.pt2")
    _check_fp(ref, model, x, path)
    _check_int(ref, model, x, path, exact=exact)


def test_softmax_fp_and_int_refusal(ref, tmp_path):
    model = Fn(lambda x, lin: torch.softmax(lin(x), -1), torch.nn.Linear(10, 6))
    x = torch.randn(3, 10)
    path = _export(model, x, tmp_path / "softmax.pt2")
    _check_fp(ref, model, x, path)
    cal = [np.stack([torch.randn(3, 10).numpy() for _ in range(4)])]
    r = tosa.lower(path, "INT", "ethos-u", cal, int8_io=True)
    assert r["ok"], r["reason"]
    assert any("_softmax" in why and "INT profile" in why and "EXP" in why
               for why in r["refusals"]), r["refusals"]


def test_batch_norm_fp(ref, tmp_path):
    bn = torch.nn.BatchNorm2d(4)
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 1.5)
    model = Fn(lambda x, b: b(x), bn)
    _check_fp(ref, model, torch.randn(2, 4, 3, 3),
              _export(model, torch.randn(2, 4, 3, 3), tmp_path / "bn.pt2"))


def test_refusals_name_the_constraint(tmp_path):
    """Ops TOSA 1.0 cannot take say why, naming the op and the constraint."""
    cases = [
        (_conv(4, 6, 3, groups=2), (1, 4, 6, 6), "grouped convolution with 2 groups"),
        (Fn(lambda x: x.mean(1)), (2, 5, 4), "mean"),
        (Fn(lambda x: torch.nn.functional.gelu(x)), (2, 4), "aten::gelu"),
        (Fn(lambda x: x.reshape(1, 2, 3, 1, 1, 1, 2)), (12,), "rank 7"),
    ]
    for i, (model, shape, words) in enumerate(cases):
        path = _export(model, torch.randn(shape), tmp_path / f"r{i}.pt2")
        r = tosa.lower(path, "FP")
        assert any(words in why and "TOSA FP" in why for why in r["refusals"]), r["refusals"]
