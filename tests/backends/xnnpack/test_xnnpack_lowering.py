"""The XNNPACK partitioner: which nodes it claims, why it refuses others, and that delegated
programs compute what PyTorch does.

Tolerance (fp32, XNNPACK vs torch eager on the same inputs): max abs error within
1e-5 * (1 + max |reference|) per op (XNNPACK reorders sums in convolutions and reductions and
uses its own sigmoid/elu/softmax approximations, all well inside 1e-5 relative); the zoo models
within 1e-4 * (1 + max |reference|), as their portable-kernel tests.
"""

import subprocess
from pathlib import Path

import pteron
import pteron_native
import pytest
import torch
import torch.nn.functional as F
from pteron import zoo

REPO = Path(__file__).resolve().parents[3]
torch.manual_seed(0)


def _lower(model, inputs, partitioner=None):
    ep = pteron.export(model, inputs)
    parts = [pteron.XnnpackPartitioner()] if partitioner is None else partitioner
    # XNNPACK's cost rule weighs its regions against the kernel library after it: with portable
    # it claims every op it supports, which is what these tests exercise (the default program,
    # with the optimized library next, gives back small linears and elementwise ops).
    return pteron.to_edge_transform_and_lower(ep, partitioner=parts, kernels=("portable",))


def _check(model, inputs, tol=1e-5, regions=1):
    model = model.eval()
    program = _lower(model, inputs)
    report = program.report
    assert len(report["delegated_regions"]) == regions, report["refusals"]
    with torch.no_grad():
        expected = model(*inputs)
    actual = program.load().forward(*inputs)[0]
    assert actual.shape == expected.shape
    err = float((actual - expected).abs().max())
    assert err <= tol * (1 + float(expected.abs().max())), err
    return report


class Conv1x1Then(torch.nn.Module):
    """A 1x1 convolution (so the region repays its boundary) followed by `fn` on NCHW."""

    def __init__(self, fn, channels=6):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, channels, 1)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.conv(x))


class LinearThen(torch.nn.Module):
    def __init__(self, fn, features=12):
        super().__init__()
        self.fc = torch.nn.Linear(8, features)
        self.fn = fn

    def forward(self, x):
        return self.fn(self.fc(x))


C6 = torch.randn(6, 1, 1)
# Shape-preserving ops on a conv output, summed so that one program checks them all.
ELEMENTWISE = [
    torch.relu,
    F.relu6,
    lambda y: F.hardtanh(y, -0.5, 0.25),
    lambda y: torch.clamp(y, min=-0.1),
    torch.sigmoid,
    F.hardswish,
    F.hardsigmoid,  # no XNNPACK op: a multiply and a clamped add
    lambda y: F.leaky_relu(y, 0.2),
    lambda y: F.elu(y, 0.7),
    lambda y: -torch.abs(y),
    lambda y: torch.floor(y * 3) + torch.ceil(y * 2),
    lambda y: torch.sqrt(y * y + 1) + y**2,
    lambda y: torch.add(y, 0.5, alpha=2.0) - 1.5,
    lambda y: y * 3 / 7,
    lambda y: y * C6 + C6 - C6 / 2,  # constants broadcast over channels (permuted to NHWC)
    lambda y: y * y.mean((2, 3), keepdim=True),  # [N, C, 1, 1] activation broadcast
    lambda y: torch.maximum(y, y * 0.5) + torch.minimum(y, -y),
    lambda y: torch.softmax(y, dim=1),  # channels are innermost in NHWC
]
# Shape-changing ops, chained.
POOL_CHAINS = {
    "pools_pad_upsample": lambda y: F.avg_pool2d(
        F.max_pool2d(
            F.interpolate(F.avg_pool2d(F.pad(F.max_pool2d(y, 3, 2, 1), (1, 2, 0, 1), value=0.5), 3, 1, 1,
                                       count_include_pad=False),
                          scale_factor=2, mode="bilinear", align_corners=False),
            2, 2, ceil_mode=True),
        2).mean((2, 3), keepdim=True),
    "upsample_align_adaptive_pool": lambda y: F.adaptive_avg_pool2d(
        F.interpolate(y, size=(9, 12), mode="bilinear", align_corners=True), 1).flatten(1)
    + y.mean((-1, -2)),
}


def test_elementwise_ops_after_conv_match_torch():
    _check(Conv1x1Then(lambda y: sum(fn(y) for fn in ELEMENTWISE)), (torch.randn(1, 3, 7, 6),))


@pytest.mark.parametrize("chain", sorted(POOL_CHAINS))
def test_pool_pad_resize_chains_match_torch(chain):
    _check(Conv1x1Then(POOL_CHAINS[chain]), (torch.randn(1, 3, 13, 11),))


def test_convolutions_match_torch():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(),  # relu fused into the conv
        torch.nn.Conv2d(8, 8, 3, groups=2),  # grouped
        torch.nn.Conv2d(8, 8, 3, groups=8, padding=1), torch.nn.ReLU6(),  # depthwise
        torch.nn.Conv2d(8, 16, (1, 5), groups=8),  # depthwise with multiplier 2
        torch.nn.Conv2d(16, 8, 3, stride=2, padding=(0, 2), dilation=(2, 1), bias=False),
    )
    _check(model, (torch.randn(2, 4, 15, 16),))


def test_flatten_into_linear_stays_in_the_region():
    # NHWC flattening order is absorbed by permuting the linear's weight columns.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 5, 3), torch.nn.Flatten(), torch.nn.Linear(5 * 4 * 3, 7))
    report = _check(model, (torch.randn(1, 3, 6, 5),))
    assert report["refusals"] == []


def test_linear_then_ops_match_torch():
    def ops(y):
        return (torch.relu(y) + (y + torch.arange(12.0)) + torch.softmax(y, -1)
                + y.reshape(-1, 3, 4).sigmoid().reshape(-1, 12) + (y - y.sigmoid()) / (y.abs() + 1))

    _check(LinearThen(ops), (torch.randn(5, 8),))


def test_linear_on_3d_input_and_mm_with_constant_weight():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(8, 16)
            self.w = torch.nn.Parameter(torch.randn(16, 4))

        def forward(self, x):
            return torch.relu(self.fc(x)) @ self.w

    _check(M(), (torch.randn(2, 5, 8),))


def test_unsupported_op_in_the_middle_makes_two_regions():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.b = torch.nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return torch.relu(self.b(torch.cos(torch.relu(self.a(x)))))

    report = _check(M(), (torch.randn(1, 3, 8, 8),), regions=2)
    assert any("aten::cos" in r and "xnnpack:" in r for r in report["refusals"]), report["refusals"]


def _refusals(model, inputs):
    program = _lower(model.eval(), inputs)
    return program, program.report["refusals"]


def test_refusals_name_the_reason():
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x, w):
            y = self.conv(x)
            s = torch.softmax(y, dim=-1)  # innermost in NCHW, not in NHWC
            p = F.avg_pool2d(y, 3, 1, 1)  # count_include_pad=True with padding
            t = y.permute(0, 2, 3, 1)  # no transpose in this XNNPACK
            m = y.flatten(1)[:, :4] @ w  # weight computed at run time
            return s, p, t, m

    model = M().eval()
    inputs = (torch.randn(1, 3, 4, 4), torch.randn(4, 2))
    program, refusals = _refusals(model, inputs)
    text = "\n".join(refusals)
    assert "softmax over dim 3" in text and "NHWC" in text
    assert "count_include_pad=True" in text
    assert "no transpose" in text
    assert "would need a transpose in NHWC" in text  # flatten of [1, 8, 4, 4]
    assert "not a constant" in text
    assert len(program.report["delegated_regions"]) == 1  # the conv still is
    with torch.no_grad():
        expected = model(*inputs)
    for a, e in zip(program.load().forward(*inputs), expected):
        assert float((a - e).abs().max()) <= 1e-5 * (1 + float(e.abs().max()))


def test_cost_rule_gives_back_cheap_elementwise_regions():
    class M(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x * 2 + 1)

    program, refusals = _refusals(M(), (torch.randn(4, 16),))
    assert program.report["delegated_regions"] == []
    assert any("FLOPs/byte" in r for r in refusals), refusals


def test_threads_setting_is_process_wide():
    pteron_native.set_num_threads(3)
    try:
        assert pteron_native.num_threads() == 3
    finally:
        pteron_native.set_num_threads(0)


ZOO_REGIONS = {
    "mobilenet-v2": 1,
    "resnet-18": 1,
    "ds-cnn": 1,
    "mobilenet-v1-025": 1,
    "resnet-8": 1,
    "digits-cnn": 1,
    "fc-autoencoder": None,
}


@pytest.mark.parametrize("name", sorted(ZOO_REGIONS))
def test_zoo_model_with_xnnpack_matches_pytorch(name, zoo_pt2):
    model, inputs = zoo.get(name)
    path = zoo_pt2(name)
    program = pteron.to_edge_transform_and_lower(str(path), partitioner=[pteron.XnnpackPartitioner()],
                                                 kernels=("portable",))
    regions = program.report["delegated_regions"]
    if ZOO_REGIONS[name] is not None:
        assert len(regions) == ZOO_REGIONS[name], program.report["refusals"]
    assert regions, program.report["refusals"]
    with torch.no_grad():
        expected = model(*inputs)
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    actual = program.load().forward(*inputs)
    for a, e in zip(actual, expected):
        tol = 1e-4 * (1 + float(e.abs().max()))
        assert float((a - e).abs().max()) <= tol, name


def test_cli_compiles_with_xnnpack_backend(tmp_path):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
    ep = pteron.export(model, (torch.randn(1, 3, 8, 8),))
    torch.export.save(ep, tmp_path / "m.pt2")
    out = subprocess.run(
        [pteron_cli(), "compile", tmp_path / "m.pt2", "-o", tmp_path / "m.pte", "--backends", "xnnpack,portable"],
        capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "delegated to xnnpack" in out.stdout
    bad = subprocess.run(
        [pteron_cli(), "compile", tmp_path / "m.pt2", "-o", tmp_path / "n.pte", "--backends", "nope"],
        capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "unknown backend 'nope'" in bad.stderr


# ---- int8: PT2E dequantize -> op -> quantize regions, quantized by hand ----
# Tolerance: XNNPACK requantizes with its own rounding, so each int8 layer may differ from
# torch's fake-quantized reference by one step; the output is within 3 output steps.

import torch.ao.quantization.fx._decomposed  # noqa: E402,F401  (registers quantized_decomposed)
from pteron_cli import pteron_cli  # noqa: E402

QD = torch.ops.quantized_decomposed


def _qdq(x, scale, zero_point):
    q = QD.quantize_per_tensor(x, scale, zero_point, -128, 127, torch.int8)
    return QD.dequantize_per_tensor(q, scale, zero_point, -128, 127, torch.int8)


def _int8_weight(w, per_channel):
    dims = tuple(range(1, w.dim()))
    scales = w.abs().amax(dims) / 127 if per_channel else torch.full((w.shape[0],), float(w.abs().max() / 127))
    q = torch.round(w / scales.reshape(-1, *[1] * len(dims))).clamp(-127, 127).to(torch.int8)
    return q, scales


class HandQuantized(torch.nn.Module):
    """conv+relu -> max pool -> add -> global average pool -> linear, all in PT2E Q/DQ form."""

    OUT_SCALE = 0.02

    def __init__(self, per_channel):
        super().__init__()
        self.per_channel = per_channel
        w, ws = _int8_weight(torch.randn(64, 3, 5, 5) * 0.2, per_channel)
        self.register_buffer("w", w)
        self.register_buffer("ws", ws)
        self.register_buffer("wz", torch.zeros(64, dtype=torch.int64))
        self.bias = torch.nn.Parameter(torch.randn(64) * 0.1)
        f, fs = _int8_weight(torch.randn(10, 64) * 0.2, per_channel)
        self.register_buffer("f", f)
        self.register_buffer("fs", fs)
        self.register_buffer("fz", torch.zeros(10, dtype=torch.int64))
        self.tensor_scales = {"w": float(ws[0]), "f": float(fs[0])}  # per-tensor: Python floats

    def _dq_weight(self, name, q, s, z):
        if self.per_channel:
            return QD.dequantize_per_channel(q, s, z, 0, -127, 127, torch.int8)
        return QD.dequantize_per_tensor(q, self.tensor_scales[name], 0, -127, 127, torch.int8)

    def forward(self, x):
        x = _qdq(x, 0.02, 3)
        y = _qdq(torch.relu(F.conv2d(x, self._dq_weight("w", self.w, self.ws, self.wz), self.bias, padding=2)), 0.03, -128)
        y = _qdq(F.max_pool2d(y, 2), 0.03, -128)
        y = _qdq(y + y, 0.05, -100)
        y = _qdq(y.mean((2, 3)), 0.05, -100)
        return _qdq(F.linear(y, self._dq_weight("f", self.f, self.fs, self.fz)), self.OUT_SCALE, 0)


@pytest.mark.parametrize("per_channel", [True, False], ids=["per_channel", "per_tensor"])
def test_hand_quantized_graph_runs_int8_in_one_region(per_channel, tmp_path):
    model = HandQuantized(per_channel).eval()
    x = torch.randn(1, 3, 12, 12)
    ep = torch.export.export(model, (x,))
    table = torch.export.default_decompositions()
    del table[torch.ops.aten.linear.default]  # PT2E's quantizer keeps linear (fuse_linear on main)
    path = tmp_path / "q.pt2"
    torch.export.save(ep.run_decompositions(table), path)
    program = pteron.to_edge_transform_and_lower(str(path), partitioner=[pteron.XnnpackPartitioner()])
    assert len(program.report["delegated_regions"]) == 1, program.report["refusals"]
    assert program.report["refusals"] == []
    # The weights travel as int8: the whole program is smaller than the conv's fp32 weights.
    assert program.report["file_bytes"] < 64 * 3 * 5 * 5 * 4
    with torch.no_grad():
        expected = model(x)
    actual = program.load().forward(x)[0]
    assert float((actual - expected).abs().max()) <= 3 * HandQuantized.OUT_SCALE + 1e-6


def test_torchao_pt2e_quantized_conv_net_is_one_int8_region():
    # torchao's PT2E flow with its XNNPACK quantizer (per-channel weights): the Q/DQ graph
    # it produces lowers to one region and matches the fake-quantized module.
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 16, 3, groups=16), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1)).eval()
    x = torch.randn(1, 3, 16, 16)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    for _ in range(4):
        prepared(torch.randn(1, 3, 16, 16))
    converted = convert_pt2e(prepared)
    program = pteron.to_edge_transform_and_lower(torch.export.export(converted, (x,)),
                                                 partitioner=[pteron.XnnpackPartitioner()])
    assert len(program.report["delegated_regions"]) == 1, program.report["refusals"]
    assert program.report["refusals"] == []
    with torch.no_grad():
        expected = converted(x)
    actual = program.load().forward(x)[0]
    out_scale = float(expected.abs().max()) / 127  # symmetric int8 output: one step is below this
    assert float((actual - expected).abs().max()) <= 3 * out_scale + 1e-6


@pytest.mark.parametrize("scheme", ["xnnpack", "cortex-m"])
def test_pteron_quantizer_output_is_one_int8_region(scheme):
    # compiler/quantize's PT2E form on ds-cnn (scheme "xnnpack": fp32 biases; "cortex-m": int32
    # biases through dequantize_per_channel): XNNPACK takes all of it, and agrees with the same
    # int8 program on the portable Q/DQ kernels to within a few output steps (XNNPACK
    # requantizes once per op instead of dequantizing to fp32 in between).
    model, inputs = zoo.get("ds-cnn")
    ep = pteron.export(model, inputs)
    torch.manual_seed(1)
    calibration = [tuple(torch.randn_like(t) for t in inputs) for _ in range(8)]
    results = []
    for partitioner in ([], [pteron.XnnpackPartitioner()]):
        program = pteron.to_edge_transform_and_lower(ep, partitioner=partitioner, quantize=scheme,
                                                     calibration=calibration, progress=False)
        results.append((program.report, program.load().forward(*inputs)[0]))
    (_, portable), (report, delegated) = results
    assert len(report["delegated_regions"]) == 1 and report["refusals"] == [], report["refusals"]
    assert float((delegated - portable).abs().max()) <= 0.02 * float(portable.abs().max())


class SamePaddedConvNet(torch.nn.Module):
    """TensorFlow-style SAME padding in PT2E Q/DQ form: conv+relu (output zero point -128), a
    zero pad of one bottom row and right column, a stride-2 conv (MobileNet as the MLPerf Tiny
    models write it)."""

    IN, MID, OUT = 0.02, 0.03, 0.05

    def __init__(self):
        super().__init__()
        for name, shape in [("w1", (8, 3, 3, 3)), ("w2", (16, 8, 3, 3))]:
            q, scales = _int8_weight(torch.randn(*shape) * 0.3, per_channel=True)
            self.register_buffer(name, q)
            self.register_buffer(name + "_scales", scales)
        self.register_buffer("zeros", torch.zeros(16, dtype=torch.int64))

    def forward(self, x):
        w1 = QD.dequantize_per_channel(self.w1, self.w1_scales, self.zeros[:8], 0, -127, 127, torch.int8)
        w2 = QD.dequantize_per_channel(self.w2, self.w2_scales, self.zeros, 0, -127, 127, torch.int8)
        y = _qdq(torch.relu(F.conv2d(_qdq(x, self.IN, 3), w1, padding=1)), self.MID, -128)
        y = _qdq(F.pad(y, (0, 1, 0, 1)), self.MID, -128)
        return _qdq(F.conv2d(y, w2, stride=2), self.OUT, 0)


def test_a_same_pad_runs_int8_with_its_zero_point():
    """The pad before a strided convolution runs in int8 inside the region (it ran in fp32
    between two conversions, twice the padded convolution's time on a 3x96x96 input), filling
    with the zero point (-128 here, 0.0): torch's numbers within 3 output steps, the padded
    border included."""
    model = SamePaddedConvNet().eval()
    x = torch.randn(1, 3, 15, 15)
    program = pteron.to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                                 partitioner=[pteron.XnnpackPartitioner()],
                                                 kernels=("portable",))
    report = program.report
    assert len(report["delegated_regions"]) == 1 and report["refusals"] == [], report["refusals"]
    with torch.no_grad():
        expected = model(x)
    actual = program.load().forward(x)[0]
    assert float((actual - expected).abs().max()) <= 3 * SamePaddedConvNet.OUT + 1e-6


class Int32BiasConvNet(torch.nn.Module):
    """Two PT2E int8 convolutions whose biases are int32 constants dequantized in the graph at
    scale input_scale x weight_scale (zero point 0), as PT2E quantizers with a derived bias spec
    (and pteron's cortex-m and ethos-u schemes) write them: per channel for the first conv, per
    tensor for the second."""

    IN, MID, OUT = 0.02, 0.03, 0.05

    def __init__(self):
        super().__init__()
        w1, s1 = _int8_weight(torch.randn(8, 3, 3, 3) * 0.3, per_channel=True)
        w2, s2 = _int8_weight(torch.randn(4, 8, 1, 1) * 0.3, per_channel=False)
        self.register_buffer("w1", w1)
        self.register_buffer("s1", s1)
        self.register_buffer("w2", w2)
        self.w2_scale = float(s2[0])
        bias_scales1 = (self.IN * s1.float()).to(torch.float32)
        self.register_buffer("bias_scales1", bias_scales1)
        self.register_buffer("b1", torch.round(torch.randn(8) * 0.2 / bias_scales1).to(torch.int32))
        self.b2_scale = float(torch.tensor(self.MID, dtype=torch.float32) * torch.tensor(self.w2_scale))
        self.register_buffer("b2", torch.round(torch.randn(4) * 0.2 / self.b2_scale).to(torch.int32))
        self.register_buffer("zeros8", torch.zeros(8, dtype=torch.int64))

    def forward(self, x):
        i32 = torch.iinfo(torch.int32)
        x = _qdq(x, self.IN, 3)
        w1 = QD.dequantize_per_channel(self.w1, self.s1, self.zeros8, 0, -127, 127, torch.int8)
        b1 = QD.dequantize_per_channel(self.b1, self.bias_scales1, self.zeros8, 0, i32.min, i32.max, torch.int32)
        y = _qdq(torch.relu(F.conv2d(x, w1, b1, padding=1)), self.MID, -128)
        w2 = QD.dequantize_per_tensor(self.w2, self.w2_scale, 0, -127, 127, torch.int8)
        b2 = QD.dequantize_per_tensor(self.b2, self.b2_scale, 0, i32.min, i32.max, torch.int32)
        return _qdq(F.conv2d(y, w2, b2), self.OUT, 0)


def test_int32_bias_dequantize_runs_the_convs_in_int8_on_xnnpack():
    # The int32 bias dequantizes are claimed with their convolutions (the lowering takes the
    # int32 values as XNNPACK's bias: their scales are XNNPACK's), so the model is one int8
    # region, as an fp32 bias would give; no refusal, and torch's numbers within 3 output steps.
    model = Int32BiasConvNet().eval()
    x = torch.randn(1, 3, 10, 10)
    program = pteron.to_edge_transform_and_lower(torch.export.export(model, (x,)),
                                                 partitioner=[pteron.XnnpackPartitioner()],
                                                 kernels=("portable",))
    report = program.report
    assert len(report["delegated_regions"]) == 1 and report["refusals"] == [], report["refusals"]
    assert report["delegated_regions"][0]["backend"] == "xnnpack"
    method = program.load()
    # Every dequantize, convolution and quantize is in the delegate: on the CPU only the
    # boundary's layout copies remain.
    names = method.load_method().instruction_names()
    assert set(names) == {"PteronXnnpackBackend", "dim_order_ops::_clone_dim_order.out"}, names
    with torch.no_grad():
        expected = model(x)
    actual = method.forward(x)[0]
    assert float((actual - expected).abs().max()) <= 3 * Int32BiasConvNet.OUT + 1e-6


# Debian's XNNPACK (2022) clamps every f32 add/sub/mul/div; on x86 the clamp (SSE/AVX max)
# turns NaN into -inf (the op-database suite found it on addr's NaN sample). On an x86 runtime
# the partitioner leaves arithmetic whose inputs may hold NaN to the kernel libraries, and keeps
# arithmetic on values XNNPACK's own clamp produced (residual adds after convolutions).
_X86 = __import__("platform").machine().lower() in ("x86_64", "amd64", "i686")


class _Addr(torch.nn.Module):
    def forward(self, v1, v2):
        return 0.0 * torch.outer(v1, v2) + v1[:, None]


def _nan_inputs():
    v1 = torch.tensor([1.0, float("nan"), 3.0])
    v2 = torch.tensor([float("nan"), 2.0, float("inf")])
    return v1, v2


@pytest.mark.skipif(not _X86, reason="needs an x86 CPU: the NaN rule is for x86 runtimes")
def test_x86_arithmetic_on_possible_nan_stays_on_the_kernels_and_keeps_nan():
    v1, v2 = _nan_inputs()
    program = _lower(_Addr(), (v1, v2))
    assert not program.report["delegated_regions"]
    assert any("NaN" in r for r in program.report["refusals"]), program.report["refusals"]
    got = program.load().forward(v1, v2)[0]
    want = _Addr()(v1, v2)
    assert torch.equal(torch.isnan(got), torch.isnan(want))
    assert torch.equal(got[~torch.isnan(want)], want[~torch.isnan(want)])


class _MaskedSoftmax(torch.nn.Module):
    def forward(self, x, keep):
        return torch.softmax(x.masked_fill(~keep, float("-inf")), -1)


@pytest.mark.skipif(not _X86, reason="needs an x86 CPU: the NaN rule is for x86 runtimes")
def test_x86_softmax_of_a_fully_masked_row_stays_on_the_kernels_and_gives_nan():
    """A row all -inf (torch.masked.softmax, a -inf attention mask over a padded query) is NaN
    in torch; this XNNPACK's x86 softmax gives -inf. Only a softmax over values XNNPACK's own
    clamped ops produced goes there on x86."""
    x = torch.randn(3, 4)
    keep = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    program = _lower(_MaskedSoftmax(), (x, keep))
    assert any("all -inf" in r for r in program.report["refusals"]), program.report["refusals"]
    got = program.load().forward(x, keep)[0]
    want = _MaskedSoftmax()(x, keep)
    assert torch.isnan(got[1]).all()
    torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-6, atol=1e-7)


def test_arithmetic_on_inputs_is_delegated_for_an_arm_target():
    """NEON's fmax keeps NaN: an aarch64 target's XNNPACK region takes the input's scaling with
    the convolution; an x86 one leaves the scaling to the kernels."""
    class ScaledConv(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 6, 3)

        def forward(self, x):
            return self.conv(x * 2.0)

    ep = pteron.export(ScaledConv().eval(), (torch.randn(1, 3, 8, 8),))
    nodes = {}
    for target in ("cortex-a76", "host"):
        program = pteron.to_edge_transform_and_lower(ep, partitioner=[pteron.XnnpackPartitioner()],
                                                     kernels=("portable",), target=target)
        regions = program.report["delegated_regions"]
        assert len(regions) == 1, program.report["refusals"]
        nodes[target] = regions[0]["nodes"]
    assert nodes["cortex-a76"] == nodes["host"] + (1 if _X86 else 0), nodes


def test_silu_and_gates_after_convolutions_stay_in_the_region():
    """x * sigmoid(x) and a squeeze-excite gate over convolution outputs: sigmoid of a clamped
    value holds no NaN, so on x86 too the multiplies stay in the one region (EfficientNet's
    blocks were cut into 66 without this)."""
    class Gated(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(4, 8, 3, padding=1)
            self.squeeze = torch.nn.Conv2d(8, 2, 1)
            self.excite = torch.nn.Conv2d(2, 8, 1)

        def forward(self, x):
            y = self.a(x)
            y = y * torch.sigmoid(y)
            s = self.squeeze(y.mean((2, 3), keepdim=True))
            s = s * torch.sigmoid(s)
            return y * torch.sigmoid(self.excite(s))

    _check(Gated(), (torch.randn(1, 4, 8, 8),), regions=1)


def test_mobilenet_v3_block_is_one_region_of_whole_activations():
    """MobileNetV3's early squeeze-excite block: hardswish and a hardsigmoid gate reach pteron as
    core-ATen decompositions (add, two clamps, mul, div), which the compiler recomposes; the
    region then holds one hardswish and one hardsigmoid node, and the gate's multiply (over a
    clamped value on x86 as well) stays in it."""
    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.dw = torch.nn.Conv2d(8, 8, 5, padding=2, groups=8)
            self.fc1, self.fc2 = torch.nn.Conv2d(8, 4, 1), torch.nn.Conv2d(4, 8, 1)
            self.project = torch.nn.Conv2d(8, 6, 1)

        def forward(self, x):
            h = torch.relu(self.dw(F.hardswish(self.stem(x))))
            gate = F.hardsigmoid(self.fc2(torch.relu(self.fc1(h.mean((2, 3), keepdim=True)))))
            return self.project(h * gate)

    x = torch.randn(1, 3, 9, 9) * 4
    report = _check(Block(), (x,), regions=1)
    assert report["refusals"] == [], report["refusals"]
    # The same graph on the kernels shows what the region was given: the two whole ops.
    ops = pteron.to_edge_transform_and_lower(pteron.export(Block().eval(), (x,)), kernels=("portable",)) \
        .load().load_method("forward").instruction_names()
    assert ops.count("aten::hardswish.out") == 1 and ops.count("aten::hardsigmoid.out") == 1, ops
    assert "aten::clamp.out" not in ops and "aten::div.out" not in ops, ops


def test_residual_add_after_convolutions_stays_in_the_region():
    class Residual(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Conv2d(4, 4, 3, padding=1)
            self.b = torch.nn.Conv2d(4, 4, 3, padding=1)

        def forward(self, x):
            y = self.a(x)
            return self.b(y) + y * 0.5

    _check(Residual(), (torch.randn(1, 4, 8, 8),), regions=1)
