"""INT8 post-training quantization (compiler/quantize) end to end on the host.

Metrics: the quantized zoo programs run on the portable kernels (Q/DQ graph) and their outputs
are compared with the fp32 model on the same inputs by relative L2 error ||int8 - fp32|| /
||fp32|| (classifiers within 3%, the FC autoencoder's reconstruction within 8%; the zoo's MLPerf
Tiny models have seeded random weights, so top-1 agreement is printed but not asserted: their
logits are near-ties). digits-cnn (trained) must keep its held-out accuracy within 1 point of
fp32. Weights must equal torch's per-channel symmetric observer + quantize_per_channel exactly.
A graph quantized by PT2E (torchao prepare_pt2e/convert_pt2e) compiles without --quantize and
matches torch's quantized module within one output quantization step.
"""

import subprocess
import warnings
from pathlib import Path

import numpy as np
import pteron
import pteron_native
import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from pteron import zoo
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
QD = torch.ops.quantized_decomposed
# (model, scheme, max relative L2 error); each scheme runs on at least one model.
ZOO_CASES = [("ds-cnn", "cortex-m", 0.03), ("resnet-8", "xnnpack", 0.03),
             ("mobilenet-v1-025", "ethos-u", 0.03), ("fc-autoencoder", "cortex-m", 0.08)]


@pytest.fixture(scope="module")
def exported(zoo_pt2):
    """The session's zoo export cache (tests/conftest.py), paths as strings."""
    return lambda name: str(zoo_pt2(name))


def random_samples(example, n, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(example.shape, generator=g) * float(example.std()) + float(example.mean()) for _ in range(n)]


def test_weights_match_torch_per_channel_observer():
    from torch.ao.quantization.observer import PerChannelMinMaxObserver

    g = torch.Generator().manual_seed(0)
    for shape in [(16, 8, 3, 3), (10, 64), (8, 1, 3, 3), (3, 5)]:
        w = torch.randn(shape, generator=g) * 0.2
        w[0].zero_()  # an all-zero channel still gets a usable scale
        obs = PerChannelMinMaxObserver(ch_axis=0, dtype=torch.qint8, qscheme=torch.per_channel_symmetric,
                                       quant_min=-127, quant_max=127)
        obs(w)
        scales, zps = obs.calculate_qparams()
        expected = QD.quantize_per_channel(w, scales, zps, 0, -127, 127, torch.int8)
        values, got_scales = pteron_native.quantize_weights_per_channel(w.numpy())
        got = torch.frombuffer(bytearray(values), dtype=torch.int8).reshape(shape)
        assert torch.equal(torch.tensor(got_scales, dtype=torch.float32), scales.float()), shape
        assert torch.equal(got, expected), shape


@pytest.mark.parametrize("name,scheme,max_error", ZOO_CASES)
def test_quantized_zoo_model_stays_close_to_fp32(name, scheme, max_error, exported):
    model, inputs = zoo.get(name)
    calibration = [(x,) for x in random_samples(inputs[0], 8, seed=1)]
    tests = random_samples(inputs[0], 8, seed=2)
    # The portable float program keeps its weights as program constants (the default program's
    # XNNPACK regions carry theirs inside the delegate payload).
    float_program = pteron.to_edge_transform_and_lower(exported(name), kernels=("portable",))
    lowered = pteron.to_edge_transform_and_lower(exported(name), quantize=scheme, calibration=calibration,
                                                 progress=False)
    report = lowered.report["quantize"]
    assert report["scheme"] == scheme and report["samples"] == 8 and report["quantized_ops"] > 0
    # Weights are int8 now: the program's constants shrink to well under half.
    assert lowered.report["constant_bytes"] < 0.4 * float_program.report["constant_bytes"]
    program = lowered.load()
    got = torch.cat([program.forward(x)[0] for x in tests])
    with torch.no_grad():
        ref = torch.cat([model(x) for x in tests])
    error = float((got - ref).norm() / ref.norm())
    agreement = float((got.argmax(1) == ref.argmax(1)).float().mean())
    print(f"{name} {scheme}: relative L2 error {error:.4f}, top-1 agreement {agreement:.3f}")
    assert error <= max_error, f"{name} ({scheme}): relative error {error:.4f} > {max_error}"


def digits_split():
    zoo.names()  # makes the repository's models package importable
    from models import digits_cnn

    images, labels = digits_cnn.load_test_split()
    # Calibrate on the first 60 held-out digits (no labels used), evaluate on the other 300.
    return images[:60], images[60:], labels[60:]


@pytest.mark.parametrize("scheme", ["cortex-m", "xnnpack", "ethos-u"])
def test_digits_cnn_int8_accuracy_within_one_point(scheme, exported):
    model, _ = zoo.get("digits-cnn")
    calibration, images, labels = digits_split()
    lowered = pteron.to_edge_transform_and_lower(exported("digits-cnn"), quantize=scheme,
                                                 calibration=[(x[None],) for x in calibration], progress=False)
    program = lowered.load()
    got = torch.tensor([int(program.forward(x[None])[0].argmax()) for x in images])
    with torch.no_grad():
        expected = model(images).argmax(1)
    int8_acc = float((got == labels).float().mean())
    fp32_acc = float((expected == labels).float().mean())
    print(f"digits-cnn {scheme}: int8 {100 * int8_acc:.2f}%, fp32 {100 * fp32_acc:.2f}% on {len(labels)} digits")
    assert abs(int8_acc - fp32_acc) <= 0.01


def test_int8_io_takes_and_returns_int8(exported):
    calibration, images, _ = digits_split()
    samples = [(x[None],) for x in calibration]
    path = exported("digits-cnn")
    float_io = pteron.to_edge_transform_and_lower(path, quantize="cortex-m", calibration=samples, progress=False)
    int8_io = pteron.to_edge_transform_and_lower(path, quantize="cortex-m", calibration=samples, int8_io=True,
                                                 progress=False)
    (qin,) = int8_io.report["quantize"]["int8_inputs"]
    (qout,) = int8_io.report["quantize"]["int8_outputs"]
    a, b = float_io.load(), int8_io.load()
    for x in images[:20]:
        xq = QD.quantize_per_tensor(x[None], qin["scale"], qin["zero_point"], -128, 127, torch.int8)
        yq = b.forward(xq)[0]
        assert yq.dtype == torch.int8
        y = QD.dequantize_per_tensor(yq, qout["scale"], qout["zero_point"], -128, 127, torch.int8)
        # Same arithmetic; the float-io program quantizes the input itself, exactly as done here.
        torch.testing.assert_close(y, a.forward(x[None])[0], atol=1e-6, rtol=0)


def test_bad_calibration_raises_one_clear_error(exported):
    path = exported("digits-cnn")
    with pytest.raises(pteron.CompileError, match=r"calibration input 0 \('x'\): shape \[3, 1, 1, 4, 4\], "
                                                  r"expected \[N, 1, 1, 8, 8\]"):
        pteron.to_edge_transform_and_lower(path, quantize="cortex-m", calibration=[torch.zeros(1, 1, 4, 4)] * 3,
                                           progress=False)
    with pytest.raises(pteron.CompileError, match="dtype f64, the model expects f32"):
        pteron.to_edge_transform_and_lower(path, quantize="cortex-m",
                                           calibration=[torch.zeros(1, 1, 8, 8, dtype=torch.float64)], progress=False)
    with pytest.raises(pteron.CompileError, match="has 2 input\\(s\\), the model takes 1"):
        pteron.to_edge_transform_and_lower(path, quantize="cortex-m",
                                           calibration=[(torch.zeros(1, 1, 8, 8), torch.zeros(1))], progress=False)
    with pytest.raises(pteron.CompileError, match="no samples"):
        pteron.to_edge_transform_and_lower(path, quantize="cortex-m", calibration=[], progress=False)
    with pytest.raises(pteron.CompileError, match="unknown quantization scheme 'arm'"):
        pteron.to_edge_transform_and_lower(path, quantize="arm", calibration=[torch.zeros(1, 1, 8, 8)])


def run_cli(*args):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=60)


def test_cli_quantizes_with_progress_and_rejects_bad_data(exported, tmp_path):
    path = exported("digits-cnn")
    calibration, _, _ = digits_split()
    good = tmp_path / "cal.npz"
    np.savez(good, input_0=calibration.numpy()[:, None])
    r = run_cli("compile", path, "-o", tmp_path / "q.pte", "--quantize", "cortex-m", "--calibration", good, "--int8-io")
    assert r.returncode == 0, r.stderr
    assert "calibrating (pass 1/1): 60/60 samples" in r.stderr
    assert "quantize: cortex-m, minmax observer, 60 sample(s)" in r.stdout
    assert "int8 input 0 ('x'): scale" in r.stdout and "int8 output 0" in r.stdout

    bad = {
        "shape": (dict(input_0=np.zeros((4, 1, 8, 8), np.float32)), "shape [4, 1, 8, 8], expected [N, 1, 1, 8, 8]"),
        "dtype": (dict(input_0=np.zeros((4, 1, 1, 8, 8), np.int32)), "dtype i32, the model expects f32"),
        "count": (dict(input_0=np.zeros((4, 1, 1, 8, 8), np.float32), input_1=np.zeros((4, 2), np.float32)),
                  "2 input(s), the model takes 1"),
        "empty": (dict(input_0=np.zeros((0, 1, 1, 8, 8), np.float32)), "no samples"),
    }
    for what, (arrays, message) in bad.items():
        f = tmp_path / f"{what}.npz"
        np.savez(f, **arrays)
        r = run_cli("compile", path, "-o", tmp_path / "bad.pte", "--quantize", "xnnpack", "--calibration", f)
        assert r.returncode == 1, (what, r.stderr)
        lines = [line for line in r.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith("pteron: error:") and message in lines[0], (what, r.stderr)
        assert not (tmp_path / "bad.pte").exists()
    r = run_cli("compile", path, "-o", tmp_path / "bad.pte", "--quantize", "cortex-m")
    assert r.returncode == 1 and "--quantize needs --calibration" in r.stderr


class SmallNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.bn = torch.nn.BatchNorm2d(8)
        self.fc = torch.nn.Linear(8 * 6 * 6, 5)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


def test_pt2e_quantized_graph_compiles_and_matches_torch(tmp_path):
    warnings.filterwarnings("ignore")
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    torch.manual_seed(0)
    model = SmallNet().eval()
    with torch.no_grad():
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2)
    x = torch.randn(1, 3, 8, 8)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    for _ in range(8):
        prepared(torch.randn(1, 3, 8, 8))
    converted = convert_pt2e(prepared)
    ep = torch.export.export(converted, (x,))
    lowered = pteron.to_edge_transform_and_lower(ep)
    # int8 weights stay int8 (dequantize is not folded): 224 + 720 int8 weights, scales, biases.
    assert lowered.report["constant_bytes"] < 2048
    program = lowered.load()
    out_scale = next(n.args[1] for n in reversed(ep.graph.nodes)
                     if n.op == "call_function" and "dequantize_per_tensor" in str(n.target))
    for _ in range(5):
        xi = torch.randn(1, 3, 8, 8)
        with torch.no_grad():
            expected = converted(xi)
        got = program.forward(xi)[0]
        # Same Q/DQ arithmetic; float conv/linear sums may round one step differently.
        assert float((got - expected).abs().max()) <= out_scale * 1.001
    with pytest.raises(pteron.CompileError, match="already quantized"):
        pteron.to_edge_transform_and_lower(ep, quantize="xnnpack", calibration=[x], progress=False)


class NewGeluMlp(torch.nn.Module):
    """GPT-2's MLP: linear, the tanh GELU written out (pow, mul, add, tanh), linear."""

    def __init__(self):
        super().__init__()
        self.fc, self.proj = torch.nn.Linear(16, 32), torch.nn.Linear(32, 8)

    def forward(self, x):
        h = self.fc(x)
        h = 0.5 * h * (1.0 + torch.tanh(0.7978845608 * (h + 0.044715 * torch.pow(h, 3.0))))
        return self.proj(h)


def test_elementwise_chain_after_a_delegated_dequantize_keeps_the_delegate_output():
    # The default host program delegates the linear (and its output's dequantize) to XNNPACK;
    # the Cortex-M lowering made the GELU's ops one table reading the int8 value inside the
    # region and removed the region's output ("no value with id ...").
    torch.manual_seed(0)
    model = NewGeluMlp().eval()
    example = (torch.randn(4, 16),)
    ep = pteron.export(model, example)
    program = pteron.to_edge_transform_and_lower(
        ep, quantize="xnnpack", calibration=random_samples(example[0], 8, seed=1), progress=False)
    assert "xnnpack" in program.report["backends"]
    x = torch.randn(4, 16)
    got = torch.as_tensor(program.load().forward(x)[0])
    want = model(x)
    assert (got - want).norm() / want.norm() < 0.05
