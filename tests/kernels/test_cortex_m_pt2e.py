"""A small CNN quantized by torchao's PT2E flow (XNNPACKQuantizer, symmetric per-channel int8)
compiled with the cortex-m kernel library: the quantized ops run as cortex_m kernels and the
program's output matches the PT2E model run by torch (fake quantization) within 3 output
quantisation steps (each int8 stage may round one step differently from torch's float math).
"""

import pytest
import torch
import torch.nn.functional as F
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)

import pteron
from cortex_m_target import cortex_m_target
from squeeze_excite_net import squeeze_excite_net
from upsample_net import upsample_net



class SmallCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 16, 1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.fc = torch.nn.Linear(16, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = F.relu(self.dw(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


@pytest.fixture(scope="module")
def quantized():
    torch.manual_seed(0)
    model = SmallCnn().eval()
    example = (torch.randn(1, 3, 16, 16),)
    graph = torch.export.export(model, example).module()
    config = get_symmetric_quantization_config(is_per_channel=True)
    quantizer = XNNPACKQuantizer().set_global(config)
    prepared = prepare_pt2e(graph, quantizer)
    for _ in range(8):
        prepared(torch.randn(1, 3, 16, 16))
    converted = convert_pt2e(prepared)
    return converted, torch.export.export(converted, example)


def output_scale(ep):
    """The scale of the dequantize that produces the graph output (PT2E's last Q/DQ pair)."""
    out = ep.graph.output_node().args[0][0]
    while out.target != torch.ops.quantized_decomposed.dequantize_per_tensor.default:
        out = out.args[0]
    return out.args[1]


def test_pt2e_cnn_runs_on_cortex_m_kernels(quantized, tmp_path):
    converted, ep = quantized
    target = cortex_m_target(tmp_path)
    lowered = pteron.to_edge_transform_and_lower(ep, target=target)
    method = pteron.load(lowered.buffer()).load_method()
    names = set(method.instruction_names())
    for op in ["quantized_conv2d_nhwc", "quantized_depthwise_conv2d_nhwc",
               "quantized_max_pool2d_nhwc", "quantized_avg_pool2d_nhwc", "quantized_linear_packed",
               "quantize_per_tensor", "dequantize_per_tensor"]:
        assert f"cortex_m::{op}.out" in names, sorted(names)
    # Everything quantized runs int8: no quantized_decomposed op and no float op is left (the
    # flatten's view on int8 values is a memory view: no instruction).
    assert names - {n for n in names if n.startswith("cortex_m::")} == set()
    step = output_scale(ep)
    for seed in range(5):
        x = torch.randn(1, 3, 16, 16, generator=torch.Generator().manual_seed(seed))
        got = method(x)[0]
        want = converted(x)
        assert (got - want).abs().max() <= 3 * step + 1e-6, (got, want, step)



def cortex_m_and_portable(model, shape, tmp_path):
    """The model quantized by pteron's cortex-m scheme (8 random calibration inputs of `shape`)
    and compiled twice: for the cortex-m test target (cortex_m kernels) and for the portable Q/DQ
    kernels. Returns both loaded methods."""
    ep = torch.export.export(model, (torch.randn(*shape),))
    calibration = [(torch.randn(*shape),) for _ in range(8)]
    target = cortex_m_target(tmp_path)
    cortex_m = pteron.to_edge_transform_and_lower(ep, target=target, quantize="cortex-m",
                                                  calibration=calibration)
    portable = pteron.to_edge_transform_and_lower(ep, partitioner=[], kernels=("portable",),
                                                  quantize="cortex-m", calibration=calibration)
    return pteron.load(cortex_m.buffer()).load_method(), pteron.load(portable.buffer()).load_method()


def assert_within_3_output_steps(m, r, shape):
    """Three seeded inputs: the cortex_m program within 3 output steps of the portable one (step
    estimated as the output's range / 255)."""
    for seed in range(3):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
        got, want = m(x)[0], r(x)[0]
        step = 2 * want.abs().max().item() / 255
        assert (got - want).abs().max() <= 3 * step + 1e-6, (got, want)


def test_pteron_quantizer_cortex_m_scheme_runs_on_cortex_m_kernels(tmp_path):
    """pteron's own quantizer (scheme "cortex-m": symmetric int8, per-channel weights, int32
    bias) feeding the cortex-m library: the convolutions, pools and linear layer run as cortex_m
    kernels (and a requantize), and the program matches the same quantized graph run on the
    portable Q/DQ kernels within 3 output steps (step estimated as the output's range / 255)."""
    torch.manual_seed(1)
    m, r = cortex_m_and_portable(SmallCnn().eval(), (1, 3, 16, 16), tmp_path)
    names = m.instruction_names()
    for op in ["quantized_conv2d_nhwc", "quantized_depthwise_conv2d_nhwc",
               "quantized_max_pool2d_nhwc", "quantized_avg_pool2d_nhwc", "requantize",
               "quantized_linear_packed"]:
        assert f"cortex_m::{op}.out" in names, names
    # The global mean has its own output scale: an int8 requantize follows the pool. The
    # flatten's int8 view is a memory view (no instruction): every instruction is cortex_m's.
    assert set(names) - {n for n in names if n.startswith("cortex_m::")} == set()
    assert_within_3_output_steps(m, r, (1, 3, 16, 16))


class SamePadCnn(torch.nn.Module):
    """TensorFlow-style SAME padding for stride 2 (MobileNet in MLPerf Tiny): pad bottom/right."""

    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, stride=2)
        self.dw = torch.nn.Conv2d(8, 8, 3, stride=2, groups=8)
        self.pw = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        x = F.relu(self.conv(F.pad(x, (0, 1, 0, 1))))
        x = F.relu(self.dw(F.pad(x, (0, 1, 0, 1))))
        return self.pw(x)


def test_same_padding_folds_into_the_convolutions(tmp_path):
    """The pad before a stride-2 conv/depthwise conv folds into the kernel's padding (its extra
    bottom/right row taken by the bounds checks): no cortex_m::pad and no NCHW round trip (two
    transposes: the input's and the output's), and the program still matches the same quantized
    graph on the portable Q/DQ kernels within 3 output steps."""
    torch.manual_seed(2)
    m, r = cortex_m_and_portable(SamePadCnn().eval(), (1, 3, 16, 16), tmp_path)
    names = m.instruction_names()
    assert "cortex_m::pad.out" not in names, names
    assert names.count("cortex_m::transpose.out") == 2, names
    assert_within_3_output_steps(m, r, (1, 3, 16, 16))


class ResidualCnn(torch.nn.Module):
    """resnet-8's residual add between NHWC convolutions."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.head = torch.nn.Conv2d(8, 4, 1)

    def forward(self, x):
        x = F.relu(self.stem(x))
        return self.head(F.relu(x + self.conv(x)))


def test_residual_add_stays_nhwc(tmp_path):
    """An add of two NHWC convolution outputs runs on them directly (it is elementwise): no
    NCHW round trip around it, only the input's and the output's transposes remain, and the
    program matches the portable Q/DQ kernels within 3 output steps."""
    torch.manual_seed(3)
    m, r = cortex_m_and_portable(ResidualCnn().eval(), (1, 3, 8, 8), tmp_path)
    names = m.instruction_names()
    assert "cortex_m::quantized_add.out" in names, names
    assert names.count("cortex_m::transpose.out") == 2, names
    assert_within_3_output_steps(m, r, (1, 3, 8, 8))


def test_upsampling_runs_on_cortex_m_kernels(tmp_path):
    """Nearest and bilinear upsampling quantized by pteron's cortex-m scheme (nearest keeps its
    input's qparams, bilinear has its own) lower to the cortex_m upsample kernels, every
    instruction is cortex_m's, and the program matches the same quantized graph on the portable
    Q/DQ kernels within 3 output steps."""
    torch.manual_seed(2)
    m, r = cortex_m_and_portable(upsample_net(3).eval(), (1, 3, 16, 16), tmp_path)
    names = m.instruction_names()
    for op in ["upsample_nearest2d_nhwc", "upsample_bilinear2d_nhwc", "quantized_conv2d_nhwc"]:
        assert f"cortex_m::{op}.out" in names, names
    assert set(names) - {n for n in names if n.startswith("cortex_m::")} == set()
    assert_within_3_output_steps(m, r, (1, 3, 16, 16))


class QuantizedResize(torch.nn.Module):
    """The PT2E form of one upsample: int8 in -> dequantize -> interpolate -> quantize -> int8."""

    def __init__(self, s_in, zp_in, s_out, zp_out, **interp):
        super().__init__()
        self.q = (s_in, zp_in, s_out, zp_out)
        self.interp = interp

    def forward(self, q):
        s_in, zp_in, s_out, zp_out = self.q
        qd = torch.ops.quantized_decomposed
        x = qd.dequantize_per_tensor(q, s_in, zp_in, -128, 127, torch.int8)
        y = F.interpolate(x, **self.interp)
        return qd.quantize_per_tensor(y, s_out, zp_out, -128, 127, torch.int8)


@pytest.mark.parametrize("interp", [
    dict(scale_factor=2, mode="nearest"),
    dict(size=(11, 7), mode="nearest"),
    dict(scale_factor=2, mode="bilinear", align_corners=False),
    dict(size=(13, 21), mode="bilinear", align_corners=False),
    dict(size=(9, 17), mode="bilinear", align_corners=True),
    dict(scale_factor=(0.5, 1.7), mode="bilinear", align_corners=False),
], ids=["nearest_2x", "nearest_size", "bilinear_2x", "bilinear_size", "bilinear_align", "bilinear_scales"])
@pytest.mark.parametrize("same_qparams", [True, False])
def test_pt2e_upsample_is_bit_exact_with_the_reference(tmp_path, interp, same_qparams):
    """The lowering's tables are torch's source positions: the program's int8 output equals
    cortex_m_ref's arithmetic on tables computed here with torch's float formulas, bit for bit,
    and stays within one step of torch's float interpolation of the dequantized input."""
    import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
    from cortex_m_ref import (
        finish,
        quantize_multiplier,
        upsample_bilinear_nhwc,
        upsample_index_table,
        upsample_linear_table,
        upsample_nearest_nhwc,
    )

    qp = (0.05, 3, 0.05, 3) if same_qparams else (0.05, 3, 0.035, -9)
    model = QuantizedResize(*qp, **interp).eval()
    q = torch.randint(-128, 128, (2, 5, 9, 12), generator=torch.Generator().manual_seed(3),
                      dtype=torch.int8)
    ep = torch.export.export(model, (q,))
    target = cortex_m_target(tmp_path)
    method = pteron.load(pteron.to_edge_transform_and_lower(ep, target=target).buffer()).load_method()
    names = method.instruction_names()
    kernel = "upsample_nearest2d_nhwc" if interp["mode"] == "nearest" else "upsample_bilinear2d_nhwc"
    assert f"cortex_m::{kernel}.out" in names, names
    got = method(q)[0]
    want = model(q)
    oh, ow = want.shape[2:]
    scales = interp.get("scale_factor")
    sh, sw = (scales, scales) if isinstance(scales, (int, float)) else (scales or (None, None))
    nhwc = q.permute(0, 2, 3, 1)
    if interp["mode"] == "nearest":
        ref = upsample_nearest_nhwc(nhwc, upsample_index_table(9, oh, sh), upsample_index_table(12, ow, sw))
        if not same_qparams:  # cortex_m::requantize after the copy
            m, s = quantize_multiplier(qp[0] / qp[2])
            ref = finish(ref.to(torch.int64) - qp[1], m, s, qp[3])
    else:
        align = interp["align_corners"]
        rows = upsample_linear_table(9, oh, align, None if align else sh)
        cols = upsample_linear_table(12, ow, align, None if align else sw)
        m, s = quantize_multiplier(qp[0] / (qp[2] * 2.0 ** 22))
        ref = upsample_bilinear_nhwc(nhwc, rows, cols, qp[1], qp[3], m, s)
    assert torch.equal(got, ref.permute(0, 3, 1, 2)), (got.int() - ref.permute(0, 3, 1, 2).int()).abs().max()
    assert (got.int() - want.int()).abs().max() <= 1


@pytest.mark.parametrize("keepdim", [False, True])
def test_a_mean_over_h_and_w_is_a_global_pool(tmp_path, keepdim):
    """x.mean((2, 3)), with or without keepdim (the classifier head of many nets), lowers to the
    int8 average pool, never to float between a dequantize and a quantize."""

    class Head(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 16, 3, padding=1)
            self.fc = torch.nn.Linear(16, 4)

        def forward(self, x):
            y = torch.relu(self.conv(x)).mean((2, 3), keepdim=keepdim)
            return self.fc(y.flatten(1))

    torch.manual_seed(0)
    m, r = cortex_m_and_portable(Head().eval(), (1, 3, 12, 12), tmp_path)
    names = set(m.instruction_names())
    assert "cortex_m::quantized_avg_pool2d_nhwc.out" in names, sorted(names)
    assert not any(n.startswith("aten::mean") for n in names), sorted(names)
    assert_within_3_output_steps(m, r, (1, 3, 12, 12))


class TwoConvs(torch.nn.Module):
    """Two convolutions with `act` (a function of one tensor) between them."""

    def __init__(self, act):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.b = torch.nn.Conv2d(8, 4, 3, padding=1)
        self.act = act

    def forward(self, x):
        return self.b(self.act(self.a(x)))


@pytest.mark.parametrize("act", ["sigmoid", "tanh", "gelu", "silu", "hardswish", "hardsigmoid", "mish", "elu"])
def test_unary_ops_become_int8_tables(tmp_path, act):
    """An activation between two quantized convolutions runs as one int8 table of 256 results,
    which the compiler computes with the float graph's own dequantize -> ops -> quantize: one op
    (sigmoid), or the several export decomposes it into (hardswish: an add, a clamp, a multiply
    and a divide, whose intermediate quantizations make a table, clamps and a multiply that fold
    into one table). No float op, no dequantize or quantize, and no layout change between the
    convolutions."""

    torch.manual_seed(0)
    m, r = cortex_m_and_portable(TwoConvs(getattr(F, act)).eval(), (1, 3, 10, 10), tmp_path)
    names = m.instruction_names()
    assert names.count("cortex_m::quantized_lut.out") == 1, names
    assert [n for n in names if not n.startswith("cortex_m::")] == [], names
    assert names.count("cortex_m::transpose.out") == 2, names  # the input's and the output's
    assert_within_3_output_steps(m, r, (1, 3, 10, 10))


def test_silu_quantized_by_pt2e_is_one_int8_table(tmp_path):
    """torchao's XNNPACKQuantizer quantizes a SiLU's sigmoid on its own, before the multiply by
    its input (as in EfficientNet): the table of the sigmoid and the multiply of the input by it
    fold into one table of the input. Within 3 output steps of the PT2E model run by torch."""

    torch.manual_seed(0)
    example = (torch.randn(1, 3, 10, 10),)
    net = TwoConvs(lambda y: y * torch.sigmoid(y)).eval()
    prepared = prepare_pt2e(torch.export.export(net, example).module(),
                            XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True)))
    for _ in range(8):
        prepared(torch.randn(1, 3, 10, 10))
    converted = convert_pt2e(prepared)
    target = cortex_m_target(tmp_path)
    lowered = pteron.to_edge_transform_and_lower(torch.export.export(converted, example), target=target)
    method = pteron.load(lowered.buffer()).load_method()
    names = method.instruction_names()
    assert names.count("cortex_m::quantized_lut.out") == 1, names
    assert "cortex_m::quantized_mul.out" not in names, names
    ep = torch.export.export(converted, example)
    step = output_scale(ep)
    for seed in range(3):
        x = torch.randn(1, 3, 10, 10, generator=torch.Generator().manual_seed(seed))
        assert (method(x)[0] - converted(x)).abs().max() <= 3 * step + 1e-6


@pytest.mark.parametrize("weights_first", [False, True])
def test_squeeze_excite_runs_int8_in_nhwc(tmp_path, weights_first):
    """A squeeze-excite block (global mean, two 1x1 convolutions, sigmoid, then the activation
    times its [N, C, 1, 1] channel weights, in either operand order): the broadcast multiply is
    cortex_m's quantized_mul on the NHWC activation, so the block adds no float op and no layout
    change; within 3 output steps of the portable Q/DQ program."""
    torch.manual_seed(0)
    m, r = cortex_m_and_portable(squeeze_excite_net(3, weights_first=weights_first).eval(), (1, 3, 12, 10),
                                 tmp_path)
    names = m.instruction_names()
    assert "cortex_m::quantized_mul.out" in names, names
    assert [n for n in names if not n.startswith("cortex_m::")] == [], names
    assert names.count("cortex_m::transpose.out") == 2, names  # the input's and the output's
    assert_within_3_output_steps(m, r, (1, 3, 12, 10))
