"""The conv1d_as_conv2d pass: 1-D convolutions become 2-D ones of height 1 with their squeezes
sunk below the elementwise ops after them, so XNNPACK and the int8 kernels take 1-D nets (both
took 2-D convolutions only: the layers ran float on the portable kernel). Checked: no 1-D
convolution is left where the pass applies, XNNPACK takes an audio net's layers as one region,
the int8 kernels (cortex-m scheme, and torchao's PT2E form) run its convolutions, transposed 1-D
convolutions and what the pass leaves alone (a weight two convolutions share, a computed weight)
still match torch. Tolerances: float32 atol/rtol 1e-4; int8 within 3 output steps of the
portable Q/DQ program (the int8 tests' rule) and of the PT2E model."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)

import pteron
from cortex_m_target import cortex_m_target



class AudioNet(nn.Module):
    """A waveform front end (wide strided window, batch norm), max pools, a causal dilated
    convolution (F.pad), a residual add, GELU, a depthwise one, then a mean over time."""

    def __init__(self):
        super().__init__()
        self.front = nn.Conv1d(1, 16, 40, stride=4, bias=False)
        self.bn = nn.BatchNorm1d(16)
        self.causal = nn.Conv1d(16, 16, 3, dilation=2)
        self.dw = nn.Conv1d(16, 16, 5, padding=2, groups=16)
        self.pw = nn.Conv1d(16, 32, 1)
        self.fc = nn.Linear(32, 6)

    def forward(self, x):
        h = F.max_pool1d(F.relu(self.bn(self.front(x))), 2)
        h = h + F.relu(self.causal(F.pad(h, (4, 0))))
        h = F.gelu(self.dw(h))
        h = torch.clamp(self.pw(h), -2.0, 2.0)
        return self.fc(h.mean(2))


def audio_net():
    torch.manual_seed(0)
    model = AudioNet().eval()
    model.bn.running_mean.uniform_(-0.1, 0.1)
    model.bn.running_var.uniform_(0.5, 1.5)
    return model


def wave(seed=0, batch=1):
    return torch.randn(batch, 1, 800, generator=torch.Generator().manual_seed(seed))


def pass_count(lowered):
    for line in lowered.report["passes"]:  # "conv1d_as_conv2d: 9 node(s), 0.1 ms"
        name, rest = line.split(":", 1)
        if name == "conv1d_as_conv2d":
            return int(rest.split()[0])
    raise AssertionError(lowered.report["passes"])


def check(lowered, model, x, atol=1e-4):
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=atol, rtol=1e-4)


@pytest.mark.parametrize("kernels", [None, ("optimized", "portable"), ("portable",)],
                         ids=["default", "optimized", "portable"])
def test_an_audio_net_runs_2d_and_matches_torch(kernels):
    model, x = audio_net(), wave(batch=2)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)
    assert pass_count(lowered) > 0
    graph = pteron.get_delegation_info(lowered).graph()
    # Every convolution is 2-D (its 4-D result), and no view is left between the layers: one
    # unsqueeze of the input and one squeeze before the mean.
    assert "f32[2, 16, 1, 191]" in graph
    check(lowered, model, x)


def test_xnnpack_takes_the_1d_layers_as_one_region():
    model, x = audio_net(), wave()
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 partitioner=[pteron.XnnpackPartitioner()],
                                                 kernels=("portable",))
    info = pteron.get_delegation_info(lowered)
    # GELU is not in this XNNPACK: the layers before it are one region, those after another
    # with the mean and the classifier; no view is left outside them.
    assert info.regions["count"] == 2
    ops = {op["op"]: op for op in info.ops}
    assert ops["aten::convolution.default"]["delegated"] == 4
    assert ops["aten::mean.dim"]["delegated"] == 1
    assert "aten::squeeze.dims" not in ops
    check(lowered, model, x)


def test_int8_kernels_run_the_1d_convolutions(tmp_path):
    model = audio_net()
    shape = (1, 1, 800)
    ep = torch.export.export(model, (torch.randn(*shape),))
    calibration = [(torch.randn(*shape),) for _ in range(8)]
    target = cortex_m_target(tmp_path)
    cortex_m = pteron.to_edge_transform_and_lower(ep, target=target, quantize="cortex-m",
                                                  calibration=calibration)
    names = pteron.load(cortex_m.buffer()).load_method().instruction_names()
    assert names.count("cortex_m::quantized_conv2d_nhwc.out") == 3, names
    assert names.count("cortex_m::quantized_depthwise_conv2d_nhwc.out") == 1, names
    assert "aten::convolution.out" not in names
    portable = pteron.to_edge_transform_and_lower(ep, partitioner=[], kernels=("portable",),
                                                  quantize="cortex-m", calibration=calibration)
    m = pteron.load(cortex_m.buffer()).load_method()
    r = pteron.load(portable.buffer()).load_method()
    for seed in range(3):
        got, want = m(wave(seed))[0], r(wave(seed))[0]
        step = 2 * want.abs().max().item() / 255
        assert (got - want).abs().max() <= 3 * step + 1e-6, (got, want)


class Pt2eNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 5, padding=2)
        self.c2 = nn.Conv1d(8, 8, 3, padding=1, groups=8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(F.relu(self.c2(F.relu(self.c1(x)))).mean(2))


def test_pt2e_per_channel_weights_take_the_height_too(tmp_path):
    torch.manual_seed(0)
    model, example = Pt2eNet().eval(), (torch.randn(1, 4, 64),)
    prepared = prepare_pt2e(torch.export.export(model, example).module(),
                            XNNPACKQuantizer().set_global(
                                get_symmetric_quantization_config(is_per_channel=True)))
    for _ in range(8):
        prepared(torch.randn(1, 4, 64))
    converted = convert_pt2e(prepared)
    target = cortex_m_target(tmp_path)
    lowered = pteron.to_edge_transform_and_lower(torch.export.export(converted, example),
                                                 target=target)
    method = pteron.load(lowered.buffer()).load_method()
    names = method.instruction_names()
    assert "cortex_m::quantized_conv2d_nhwc.out" in names
    assert "cortex_m::quantized_depthwise_conv2d_nhwc.out" in names
    assert "aten::convolution.out" not in names
    for seed in range(3):
        x = torch.randn(1, 4, 64, generator=torch.Generator().manual_seed(seed))
        want = converted(x)
        step = 2 * want.abs().max().item() / 255
        assert (method(x)[0] - want).abs().max() <= 3 * step + 1e-6


class Leftovers(nn.Module):
    """A transposed 1-D convolution (rewritten), a weight two convolutions share and a weight
    the caller passes (both left 1-D)."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose1d(6, 4, 4, stride=2, padding=1, output_padding=1)
        self.shared = nn.Parameter(torch.randn(4, 4, 3) * 0.3)

    def forward(self, x, w):
        h = F.relu(self.up(x))
        h = F.conv1d(h, self.shared, padding=1) + F.conv1d(h, self.shared, padding=2, dilation=2)
        return F.conv1d(h, w, padding=1)


@pytest.mark.parametrize("kernels", [None, ("portable",)], ids=["default", "portable"])
def test_what_the_pass_leaves_alone_still_matches(kernels):
    torch.manual_seed(1)
    model, inputs = Leftovers().eval(), (torch.randn(2, 6, 30), torch.randn(3, 4, 3))
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, inputs), kernels=kernels)
    assert "f32[2, 4, 1, 61]" in pteron.get_delegation_info(lowered).graph()  # the transposed one
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(*inputs)[0], model(*inputs), atol=1e-4,
                                   rtol=1e-4)
