"""Whole MLPerf Tiny models lowered to TOSA and run on the TOSA reference model.

INT: quantized with the ethos-u scheme (compiler/quantize: int8 per-tensor activations,
per-channel int8 weights, int32 bias) with int8 inputs and outputs; every node is accepted,
the final softmax included (16-bit TABLE exp, int32 reciprocal; test_tosa_ops.py). The reference
model's int8 result at the region's output is compared with pteron's own quantized graph on
the host kernels for the model's example input (quantized). Each op alone is bit-exact or
within one step (test_tosa_ops.py); through a model, elements whose real value sits at a
rounding tie (float on the host, exact int32 in TOSA) flip by one step and the flip feeds every
later layer, so deep models drift by a few steps: fc-autoencoder, ds-cnn and resnet-8 (4 to 9
layers) within 1 step, mobilenet-v1-025 (28 layers) within 4 (measured at the softmax outputs:
0, 0, 0, 1; the softmax alone rounds as float softmax does, test_tosa_ops.py).

The INT graphs also compile with Vela (ethos-u55-128, the pinned ethos-u-vela in .venv-arm)
with every operator on the NPU: Vela has no CPU fallback for TOSA input, so this is the check
that the lowering's forms (RESCALE, CLAMP, int16 pooling, TABLE, ...) are ones Vela takes.

FP: the float models whole, within 1e-5 (absolute plus relative to the output magnitude) of
torch eager.
"""

import subprocess

import numpy as np
import pytest
import torch
from pteron import tosa, zoo

MODELS = {  # name: INT tolerance in int8 steps
    "fc-autoencoder": 1,
    "ds-cnn": 1,
    "resnet-8": 1,
    "mobilenet-v1-025": 4,
}


@pytest.fixture(scope="module")
def ref():
    model = tosa.ReferenceModel()
    yield model
    model.close()


@pytest.fixture(scope="module")
def exported(zoo_pt2):
    return zoo_pt2  # the session's zoo export cache (tests/conftest.py)


@pytest.mark.parametrize("name", list(MODELS))
def test_model_int(ref, exported, name, tmp_path):
    pt2 = exported(name)
    _, inputs = zoo.get(name)
    cal = tosa.zoo_calibration(name)
    probe = tosa.lower(pt2, "INT", "ethos-u", cal, int8_io=True)
    assert probe["ok"], probe["reason"]
    scale, zp = probe["inputs"][0]["scale"], probe["inputs"][0]["zero_point"]
    xq = np.clip(np.round(inputs[0].numpy() / scale) + zp, -128, 127).astype(np.int8)
    r = tosa.lower(pt2, "INT", "ethos-u", cal, int8_io=True, sample=[xq])
    assert r["ok"], r["reason"]
    # Every node is lowered, the final softmax too.
    assert r["refusals"] == [], r["refusals"]
    assert r["graph_nodes"] == r["nodes"]
    out = ref.run(r["tosa"], [tosa.host_value(io) for io in r["inputs"]])[0]
    expected = tosa.host_value(r["outputs"][0])
    assert out.shape == expected.shape and out.dtype == np.int8
    diff = np.abs(out.astype(np.int32) - expected.astype(np.int32)).max()
    assert diff <= MODELS[name], diff

    graph = tosa.write(r, tmp_path / f"{name}.tosa")
    vela = tosa.arm_python().parent / "vela"
    run = subprocess.run([str(vela), "--accelerator-config", "ethos-u55-128", "--output-dir",
                          str(tmp_path / "vela"), str(graph)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert "CPU operators = 0 (0.0%)" in run.stdout, run.stdout


@pytest.mark.parametrize("name", list(MODELS))
def test_model_fp(ref, exported, name):
    model, inputs = zoo.get(name)
    r = tosa.lower(exported(name), "FP", sample=[inputs[0].numpy()])
    assert r["ok"], r["reason"]
    assert r["refusals"] == [] and r["nodes"] == r["graph_nodes"]
    out = ref.run(r["tosa"], [tosa.host_value(io) for io in r["inputs"]])[0]
    with torch.no_grad():
        expected = model(*inputs).numpy()
    expected = np.ascontiguousarray(expected.transpose(r["outputs"][0]["dim_order"]))
    err = np.abs(out - expected).max()
    assert err <= 1e-5 * (1 + np.abs(expected).max()), err
