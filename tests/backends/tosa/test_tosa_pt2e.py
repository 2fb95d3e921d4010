"""A CNN quantized by torchao's PT2E flow (XNNPACKQuantizer, symmetric per-channel int8 weights,
float bias) lowered to TOSA INT: the quantize of the float input and the dequantize of the float
output stay on the CPU (with their reasons), everything between is one TOSA region, and the
reference model's int8 result equals pteron's host graph bit for bit (each op alone is at most
one step apart, test_tosa_ops.py; measured exact here).
"""

import numpy as np
import torch
import torch.nn.functional as F
from pteron import tosa
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from torchao.testing.pt2e._xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)



def pt2e_quantized(model_class, shape, calibration_runs, path):
    """A `model_class` instance (made after the example input is drawn) quantized by torchao's
    PT2E flow (XNNPACKQuantizer, symmetric per-channel) on random inputs of `shape`, decomposed
    and saved to `path`; returns the example input."""
    example = (torch.randn(*shape),)
    graph = torch.export.export(model_class().eval(), example).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(graph, quantizer)
    for _ in range(calibration_runs):
        prepared(torch.randn(*shape))
    torch.export.save(torch.export.export(convert_pt2e(prepared), example).run_decompositions(), path)
    return example


def assert_reference_model_bit_exact(r):
    """The lowered TOSA graph on the TOSA reference model gives the host graph's int8 output."""
    model = tosa.ReferenceModel()
    try:
        out = model.run(r["tosa"], [tosa.host_value(io) for io in r["inputs"]])[0]
    finally:
        model.close()
    np.testing.assert_array_equal(out, tosa.host_value(r["outputs"][0]))


class ResidualCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(8, 8, 1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.dw(F.relu(self.conv2(x))) + x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def test_pt2e_cnn_is_one_int_region(tmp_path):
    torch.manual_seed(0)
    example = pt2e_quantized(ResidualCnn, (1, 3, 16, 16), 8, tmp_path / "pt2e.pt2")

    r = tosa.lower(tmp_path / "pt2e.pt2", "INT", sample=[example[0].numpy()])
    assert r["ok"], r["reason"]
    assert len(r["refusals"]) == 2, r["refusals"]
    assert "quantize of a float graph input" in r["refusals"][0]
    assert "dequantize to a float graph output" in r["refusals"][1]
    assert [io["dtype"] for io in r["inputs"] + r["outputs"]] == ["int8", "int8"]

    assert_reference_model_bit_exact(r)


class ConvPlusBuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.register_buffer("shift", torch.randn(1, 4, 1, 1))

    def forward(self, x):
        return self.conv(x) + self.shift


def test_pt2e_quantized_constant_operand(tmp_path):
    """PT2E quantizes the buffer added to the conv output: dequantize(int8 constant) becomes an
    int8 CONST with its parameters, and the add is bit-exact with the host graph."""
    torch.manual_seed(0)
    example = pt2e_quantized(ConvPlusBuffer, (1, 3, 8, 8), 4, tmp_path / "pt2e_const.pt2")

    r = tosa.lower(tmp_path / "pt2e_const.pt2", "INT", sample=[example[0].numpy()])
    assert r["ok"], r["reason"]
    assert r["graph_nodes"] - r["nodes"] == 2, r["refusals"]  # input quantize, output dequantize
    assert_reference_model_bit_exact(r)
