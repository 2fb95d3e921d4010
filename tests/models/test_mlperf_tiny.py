"""The MLPerf Tiny zoo models match the reference TFLite files (mlcommons/tiny):

- MACs and parameter counts equal the reference table in models/README.md. The table's parameter figures count
  every constant element of the .tflite, which includes the 2-element shape operand of the
  RESHAPE (flatten) op in the three CNNs, so those have 2 more than their weights and biases.
- Layer by layer, the core-ATen graph equals the TFLite op list extracted into
  mlperf_tiny_layers.json by tools/fixtures/tflite_layers.py: op kind, kernel shape, stride,
  TF SAME padding (asymmetric pads included), fused ReLU, pool window, input/output shapes.
"""

import json
from pathlib import Path

import pytest
import torch
from pteron import zoo

from models.common import tf_same_padding
from models.counting import count_macs, count_params

LAYERS = json.loads((Path(__file__).parent / "mlperf_tiny_layers.json").read_text())

# models/README.md, MLPerf Tiny: (MACs, parameters as counted there)
TABLE = {
    "ds-cnn": (2_656_768, 22_606),
    "mobilenet-v1-025": (7_489_664, 210_852),
    "resnet-8": (12_501_632, 77_708),
    "fc-autoencoder": (264_192, 265_864),
}
RESHAPE_SHAPE_OPERAND = 2


@pytest.mark.parametrize("name", TABLE)
def test_macs_and_parameters_match_reference_table(name):
    model, inputs = zoo.get(name)
    macs, params = TABLE[name]
    has_flatten = any(op["op"] == "RESHAPE" for op in LAYERS[name]["ops"])
    assert count_macs(model, inputs) == macs
    assert count_params(model) + (RESHAPE_SHAPE_OPERAND if has_flatten else 0) == params
    assert params == LAYERS[name]["const_elements"]


def nhwc(shape):
    return [shape[0], *shape[2:], shape[1]] if len(shape) == 4 else list(shape)


def val(node):
    return list(node.meta["val"].shape)


def activation(node):
    users = list(node.users)
    is_relu = len(users) == 1 and users[0].target == torch.ops.aten.relu.default
    return "RELU" if is_relu else "NONE"


def torch_layers(name):
    """The exported core-ATen graph as TFLite-style op entries, in execution order."""
    model, inputs = zoo.get(name)
    ep = torch.export.export(model, inputs, strict=False).run_decompositions()
    aten = torch.ops.aten
    ops = []
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target == aten.convolution.default:
            src, weight, _bias, stride, padding = node.args[:5]
            groups = node.args[8]
            pads = [padding[0], padding[0], padding[1], padding[1]]  # top, bottom, left, right
            if src.target == aten.constant_pad_nd.default:
                left, right, top, bottom = src.args[1]
                pads = [pads[0] + top, pads[1] + bottom, pads[2] + left, pads[3] + right]
                src = src.args[0]
            o, i, kh, kw = val(weight)
            depthwise = groups > 1 and groups == o == i * groups
            ops.append({
                "op": "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D",
                "inputs": [nhwc(val(src))],
                "weights": [[1, kh, kw, o] if depthwise else [o, kh, kw, i], [o]],
                "outputs": [nhwc(val(node))], "stride": list(stride), "pads": pads,
                "activation": activation(node)})
        elif node.target == aten.addmm.default:
            x = node.args[1]
            ops.append({"op": "FULLY_CONNECTED", "inputs": [val(x)],
                        "weights": [[val(node)[1], val(x)[1]], [val(node)[1]]],
                        "outputs": [val(node)], "activation": activation(node)})
        elif node.target == aten.add.Tensor:
            ops.append({"op": "ADD", "inputs": [nhwc(val(a)) for a in node.args[:2]],
                        "outputs": [nhwc(val(node))], "activation": activation(node)})
        elif node.target == aten.avg_pool2d.default:
            ops.append({"op": "AVERAGE_POOL_2D", "inputs": [nhwc(val(node.args[0]))],
                        "filter": list(node.args[1]), "stride": list(node.args[2]),
                        "outputs": [nhwc(val(node))]})
        elif node.target == aten._softmax.default:
            ops.append({"op": "SOFTMAX", "outputs": [val(node)]})
    return ops


def tflite_layers(name):
    """The reference op list in the same form; the flatten RESHAPE has no torch counterpart
    beyond a view, so it is dropped; SAME padding becomes explicit pads."""
    ops = []
    for op in LAYERS[name]["ops"]:
        if op["op"] == "RESHAPE":
            continue
        entry = {k: v for k, v in op.items() if k != "padding" and v != []}
        if op["op"] in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            h, w = op["inputs"][0][1:3]
            kh, kw = op["weights"][0][1:3]
            top, bottom = tf_same_padding(h, kh, op["stride"][0])
            left, right = tf_same_padding(w, kw, op["stride"][1])
            assert op["padding"] == "SAME"
            entry["pads"] = [top, bottom, left, right]
        if op["op"] == "AVERAGE_POOL_2D":
            assert op["padding"] == "VALID" and op["activation"] == "NONE"
            del entry["activation"]
        if op["op"] == "SOFTMAX":
            entry = {"op": "SOFTMAX", "outputs": op["outputs"]}
        ops.append(entry)
    return ops


@pytest.mark.parametrize("name", TABLE)
def test_layers_match_reference_tflite(name):
    expected = tflite_layers(name)
    got = torch_layers(name)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, f"{name} op {i}"


def test_asymmetric_same_padding_is_where_tflite_pads():
    # DS-CNN's first conv: 49x10 input, 10x4 kernel, stride 2 -> TF pads 4 above, 5 below.
    assert tf_same_padding(49, 10, 2) == (4, 5)
    assert tf_same_padding(10, 4, 2) == (1, 1)
    assert tf_same_padding(96, 3, 2) == (0, 1)
    assert tf_same_padding(32, 1, 2) == (0, 0)
