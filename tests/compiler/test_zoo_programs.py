"""Every zoo model compiles for the host and runs on the portable kernels, matching PyTorch.

Tolerances (float32, portable kernels vs torch eager on the same inputs): max abs error within
1e-4 * (1 + max |reference|) for the conv nets and transformer block; digits-cnn must give the
same class on every held-out digit. The planned arena must pass the compiler's overlap checker
(it runs on every compile) and be no larger than ExecuTorch's for the same model.
"""

import json
from pathlib import Path

import pteron
import pytest
import torch
from pteron import zoo

REPO = Path(__file__).resolve().parents[2]
EXECUTORCH_STATS = json.loads((REPO / "tests/fixtures/executorch/zoo_stats.json").read_text())
FAST_MODELS = ["digits-cnn", "ds-cnn", "fc-autoencoder", "resnet-8", "mobilenet-v1-025",
               "mobilenet-v2", "resnet-18", "transformer-block"]


def _executorch_arena(name):
    return EXECUTORCH_STATS["models"][name]["planned_arena_bytes"]


def _compile(pt2):
    return pteron.to_edge_transform_and_lower(str(pt2))


@pytest.mark.parametrize("name", FAST_MODELS)
def test_zoo_model_matches_pytorch(name, zoo_pt2):
    model, inputs = zoo.get(name)
    lowered = _compile(zoo_pt2(name))
    with torch.no_grad():
        expected = model(*inputs)
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    actual = lowered.load().forward(*inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        tol = 1e-4 * (1 + float(e.abs().max()))
        assert a.shape == e.shape
        assert float((a - e).abs().max()) <= tol, f"{name}: max error {float((a - e).abs().max())} > {tol}"
    assert lowered.report["planned_bytes"] <= _executorch_arena(name), (
        f"{name}: pteron plans {lowered.report['planned_bytes']} bytes, ExecuTorch {_executorch_arena(name)}")


def test_digits_cnn_predicts_the_same_classes(zoo_pt2):
    model, _ = zoo.get("digits-cnn")
    from models import digits_cnn

    test_x, _labels = digits_cnn.load_test_split()
    program = _compile(zoo_pt2("digits-cnn")).load()
    with torch.no_grad():
        expected = model(test_x).argmax(dim=1)
    # The program is compiled for batch 1: classify each digit on its own.
    got = torch.tensor([int(program.forward(test_x[i : i + 1])[0].argmax()) for i in range(len(test_x))])
    assert torch.equal(got, expected)


def test_opt125m_matches_pytorch(zoo_pt2):
    model, inputs = zoo.get("opt-125m")
    lowered = _compile(zoo_pt2("opt-125m"))
    with torch.no_grad():
        expected = model(*inputs)
    actual = lowered.load().forward(*inputs)[0]
    err = float((actual - expected).abs().max())
    assert err <= 1e-4 * (1 + float(expected.abs().max())), err
    assert lowered.report["planned_bytes"] <= _executorch_arena("opt-125m")
