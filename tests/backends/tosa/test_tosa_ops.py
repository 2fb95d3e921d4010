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

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from pteron import tosa
from pteron.lowering import decompose

torch.manual_seed(0)
REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def ref():
    model = tosa.ReferenceModel()
    yield model
    model.close()


def _export(model, x, path):
    # pteron.export's decompositions: reflection / replication pads stay whole.
    ep = decompose(torch.export.export(model.eval(), (x,)))
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
    ("mul_scalar", Fn(lambda x: x * 0.75), (2, 3, 5), False),
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
    # Negative pads crop (a SLICE after the PAD); reflection and replication, which TOSA's PAD
    # has no mode for, are SLICEs and a CONCAT per padded dim (1-D, 2-D and 3-D, cropping too).
    ("pad_crop", Fn(lambda x: F.pad(x, (-1, 2, 1, -2), value=0.5)), (1, 2, 5, 6), False),
    ("reflect_pad2d", Fn(lambda x: F.pad(x, (1, 2, 3, 1), mode="reflect")), (1, 3, 6, 7), True),
    ("reflect_pad1d", Fn(lambda x: F.pad(x, (2, 1), mode="reflect")), (2, 3, 5), True),
    ("reflect_pad_crop", Fn(lambda x: F.pad(x, (-4, 5, 1, -1), mode="reflect")), (1, 2, 4, 6), True),
    ("replicate_pad2d", Fn(lambda x: F.pad(x, (2, 0, 1, 3), mode="replicate")), (1, 3, 5, 4), True),
    ("replicate_pad3d", Fn(lambda x: F.pad(x, (1, 1, 2, 0, 1, 2), mode="replicate")), (1, 2, 3, 4, 5),
     True),
    ("sigmoid", Fn(lambda x: torch.sigmoid(x)), (2, 3, 4, 4), False),
    ("tanh", Fn(lambda x: torch.tanh(x)), (4, 9), False),
    ("leaky_relu", Fn(lambda x: F.leaky_relu(x, 0.1)), (2, 3, 4, 4), False),
    ("silu", Fn(lambda x: F.silu(x)), (2, 8), False),
    ("gelu", Fn(lambda x: F.gelu(x)), (2, 3, 8), False),  # FP: ERF; INT: TABLE
    ("gelu_tanh", Fn(lambda x: F.gelu(x, approximate="tanh")), (4, 9), False),  # FP: TANH
]


@pytest.mark.parametrize("name,model,shape,exact", CASES, ids=[c[0] for c in CASES])
def test_op_fp_and_int(ref, tmp_path, name, model, shape, exact):
    x = torch.randn(shape)
    path = _export(model, x, tmp_path / f"{name}.pt2")
    _check_fp(ref, model, x, path)
    _check_int(ref, model, x, path, exact=exact)


class Attention(torch.nn.Module):
    """The transformer ops TOSA FP takes: layer norm, split, bmm, div, causal where, softmax."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(16)
        self.qkv = torch.nn.Linear(16, 48)
        self.register_buffer("mask", torch.tril(torch.ones(6, 6, dtype=torch.bool)))
        self.register_buffer("masked", torch.full((1,), -1e4))

    def forward(self, x):
        q, k, v = self.qkv(self.ln(x)).split(16, -1)
        att = torch.bmm(q, k.transpose(1, 2)) / 4.0
        att = torch.where(self.mask, att, self.masked).softmax(-1)
        return torch.bmm(att, v)


FP_CASES = [
    ("attention", Attention(), (2, 6, 16)),
    ("mm", Fn(lambda x: torch.mm(x, x.t())), (5, 7)),
    ("div", Fn(lambda x: x / (torch.sigmoid(x) + 0.5) * 2), (3, 4)),
    ("layer_norm", Fn(lambda x, ln: ln(x), torch.nn.LayerNorm(10)), (2, 3, 10)),
    # Core ATen decomposes these into add/clamp/mul/div, which FP takes one by one (INT would
    # need a quantize between each: refused with reasons).
    ("hardswish", Fn(lambda x: F.hardswish(x)), (2, 8)),
    ("hardsigmoid", Fn(lambda x: F.hardsigmoid(x)), (2, 8)),
]


@pytest.mark.parametrize("name,model,shape", FP_CASES, ids=[c[0] for c in FP_CASES])
def test_transformer_ops_fp(ref, tmp_path, name, model, shape):
    if name == "layer_norm":
        torch.nn.init.uniform_(model.mods[0].weight)
        torch.nn.init.uniform_(model.mods[0].bias)
    x = torch.randn(shape)
    _check_fp(ref, model, x, _export(model, x, tmp_path / f"{name}.pt2"))


SOFTMAX_CASES = [  # (input shape, softmax dim, linear output features)
    ((3, 10), -1, 6),
    ((1, 16), -1, 12),  # ds-cnn's 12 classes
    ((2, 5, 7), 1, 7),  # not the last dim
]


@pytest.mark.parametrize("shape,dim,k", SOFTMAX_CASES, ids=["rows", "ds_cnn_12", "dim1"])
def test_softmax_fp_and_int(ref, tmp_path, shape, dim, k):
    """FP: REDUCE_MAX, SUB, EXP, REDUCE_SUM, RECIPROCAL, MUL within 1e-5 of torch.

    INT (int8 in and out, the ethos-u scheme's softmax parameters): REDUCE_MAX, a 16-bit exp
    from two int8 TABLEs over x - max, an int32 REDUCE_SUM, a Newton-Raphson reciprocal in int32
    MULs and one RESCALE (softmax_tables.cpp, softmax_int). The reference model's int8 output
    against pteron's quantized host graph (portable's float softmax of the dequantized input,
    then quantize): measured bit-exact here; one step is allowed on a small share of elements
    (a real value at a rounding tie). pteron's TOSA executor (pteron-tosa-run) is bit-exact
    with the reference model, and Vela (ethos-u55-128) puts every operator on the NPU."""
    g = torch.Generator().manual_seed(len(shape) * 100 + k)
    model = Fn(lambda x, lin: torch.softmax(lin(x), dim), torch.nn.Linear(shape[-1], k))
    x = torch.randn(shape, generator=g)
    path = _export(model, x, tmp_path / "softmax.pt2")
    _check_fp(ref, model, x, path)

    cal = [np.stack([torch.randn(shape, generator=g).numpy() * 2 for _ in range(8)])]
    xq = np.random.default_rng(3).integers(-128, 128, size=shape, dtype=np.int8)
    r = tosa.lower(path, "INT", "ethos-u", cal, int8_io=True, sample=[xq])
    assert r["ok"] and r["refusals"] == [], (r["reason"], r["refusals"])
    ins = [tosa.host_value(io) for io in r["inputs"]]
    out = ref.run(r["tosa"], ins)[0]
    host = tosa.host_value(r["outputs"][0])
    diff = np.abs(out.astype(np.int32) - host.astype(np.int32))
    assert out.dtype == np.int8 and diff.max() <= 1, diff.max()
    assert (diff > 0).mean() <= 0.05, (diff > 0).mean()

    # pteron's executor runs the same file bit for bit.
    graph = tosa.write(r, tmp_path / "softmax.tosa")
    np.savez(tmp_path / "in.npz", in0=ins[0])
    exe = REPO / "build" / "backends" / "tosa" / "runtime" / "pteron-tosa-run"
    run = subprocess.run([str(exe), str(graph), str(tmp_path / "in.npz"), str(tmp_path / "out.npz")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    got = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(got[list(got)[0]], out)

    run = subprocess.run([str(tosa.arm_python().parent / "vela"), "--accelerator-config",
                          "ethos-u55-128", "--output-dir", str(tmp_path / "vela"), str(graph)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "CPU operators = 0 (0.0%)" in run.stdout, run.stdout


@pytest.mark.parametrize("shape", [(4, 37), (8, 12)])
@pytest.mark.parametrize("spread", [1.0, 8.0])
def test_softmax_int_against_float_and_cortex_m(ref, tmp_path, shape, spread):
    """The INT softmax alone (int8 graph input, calibration of standard deviation `spread`)
    against float softmax of the dequantized input (clipped to the output's int8 range) and
    against pteron's cortex-m int8 softmax (cortex_m::softmax.out, TFLite's fixed-point exp,
    output scale 1/256) on the same input. Measured, in steps of the TOSA output's scale:
    0.42..0.50 from float (correct rounding), 0.63..1.51 from cortex-m (whose own error from
    float is 0.46..1.30 of these steps; its test allows 2/256)."""
    sys.path.append(str(REPO / "tests" / "kernels"))
    from cortex_m_ref import softmax_params
    from kernel_harness import run_kernel

    model = Fn(lambda x: torch.softmax(x, -1))
    path = _export(model, torch.zeros(shape), tmp_path / "softmax.pt2")
    g = torch.Generator().manual_seed(shape[0])
    cal = [np.stack([torch.randn(shape, generator=g).numpy() * spread for _ in range(8)])]
    xq = np.random.default_rng(0).integers(-128, 128, size=shape, dtype=np.int8)
    r = tosa.lower(path, "INT", "ethos-u", cal, int8_io=True, sample=[xq])
    assert r["ok"] and r["refusals"] == [], (r["reason"], r["refusals"])
    out = ref.run(r["tosa"], [tosa.host_value(io) for io in r["inputs"]])[0]
    i, o = r["inputs"][0], r["outputs"][0]
    step = o["scale"]
    got = (out.astype(np.float64) - o["zero_point"]) * step
    x = (torch.from_numpy(xq).double() - i["zero_point"]) * i["scale"]
    expect = np.clip(torch.softmax(x, -1).numpy(), (-128 - o["zero_point"]) * step,
                     (127 - o["zero_point"]) * step)
    assert np.abs(got - expect).max() <= 0.75 * step
    mult, shift, diff_min = softmax_params(i["scale"])
    cm = torch.empty(shape, dtype=torch.int8)
    run_kernel("cortex_m::softmax.out", [torch.from_numpy(xq), -1, i["zero_point"], -128, mult,
                                         shift, diff_min, cm], library="cortex_m")
    assert np.abs(got - (cm.double().numpy() + 128) / 256).max() <= 0.75 * step + 2 / 256


@pytest.mark.parametrize("fn", [F.hardswish, F.hardsigmoid], ids=["hardswish", "hardsigmoid"])
def test_undecomposed_hard_activations(ref, tmp_path, fn):
    """Exported without core-ATen decomposition, hardswish/hardsigmoid arrive whole: FP builds
    them from ADD/CLAMP/MUL, INT is one TABLE."""
    model = Fn(lambda x: fn(x))
    x = torch.randn(2, 3, 5) * 4
    path = tmp_path / "hard.pt2"
    torch.export.save(torch.export.export(model.eval(), (x,)), path)
    _check_fp(ref, model, x, path)
    _check_int(ref, model, x, path)


def test_elu_int_table_fp_refused(ref, tmp_path):
    model = Fn(lambda x: F.elu(x, 0.7))
    x = torch.randn(3, 8)
    path = _export(model, x, tmp_path / "elu.pt2")
    r = tosa.lower(path, "FP")
    assert any("elu in the FP profile" in why for why in r["refusals"]), r["refusals"]
    _check_int(ref, model, x, path)


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
        (Fn(lambda x: torch.erf(x)), (2, 4), "aten::erf"),
        (Fn(lambda x: x.reshape(1, 2, 3, 1, 1, 1, 2)), (12,), "rank 7"),
    ]
    for i, (model, shape, words) in enumerate(cases):
        path = _export(model, torch.randn(shape), tmp_path / f"r{i}.pt2")
        r = tosa.lower(path, "FP")
        assert any(words in why and "TOSA FP" in why for why in r["refusals"]), r["refusals"]


VELA_CASES = ["avg_pool_pad", "sigmoid", "mul", "cat", "permute", "mul_scalar", "pad", "pad_crop",
              "reflect_pad2d", "replicate_pad2d"]


def test_int_forms_compile_with_vela(tmp_path):
    """The INT forms the zoo models do not exercise (int16 average pooling, TABLE, int32 MUL,
    CONCAT with requantised inputs, TRANSPOSE, a lone RESCALE, PAD, SLICE crops, the SLICE +
    CONCAT of reflection and replication pads) compile with Vela (ethos-u55-128)
    with every operator on the NPU: Vela has no CPU fallback for TOSA input."""
    vela = tosa.arm_python().parent / "vela"
    by_name = {c[0]: c for c in CASES}
    for name in VELA_CASES:
        _, model, shape, _ = by_name[name]
        x = torch.randn(shape)
        path = _export(model, x, tmp_path / f"{name}.pt2")
        cal = [np.stack([torch.randn(shape).numpy() for _ in range(4)])]
        r = tosa.lower(path, "INT", "ethos-u", cal, int8_io=True)
        assert r["ok"], r["reason"]
        graph = tosa.write(r, tmp_path / f"{name}.tosa")
        run = subprocess.run([str(vela), "--accelerator-config", "ethos-u55-128", "--output-dir",
                              str(tmp_path / f"vela_{name}"), str(graph)],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, (name, run.stderr)
        assert "CPU operators = 0 (0.0%)" in run.stdout, (name, run.stdout)
