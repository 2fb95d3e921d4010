"""Whole models on the Vulkan delegate (lavapipe), FP32 and FP16, against PyTorch eager, and the
CPU fallback plan a program can carry.

Full size: the zoo's mobilenet-v2 and resnet-18 (torchvision layout, random weights) at
1x3x224x224 and OPT-125M (12 layers, d=768, sequence 128, last-token logits), exactly as
`make bench-gpu` runs them, each compiled once per variant (fp32, fp16) and run once. The .pt2
comes from the session's zoo export cache (tests/conftest.py `zoo_pt2`), shared with
tests/compiler/test_zoo_programs.py, so OPT-125M is exported once per `make test`. On lavapipe
(a CPU) these inferences dominate the file's time (OPT-125M ~1 min per dtype on 2 cores).
OPT-125M also runs once as a mixed XNNPACK + Vulkan program (`xnnpack,vulkan,portable`).

Small and fast, for structure (one region, what stays on the CPU): the same resnet-18 and
mobilenet-v2 at 64x64, and transformers' OPTForCausalLM with a 2-layer OPTConfig (d=64, 4 heads,
vocab 1000, sequence 16).

Tolerances, max abs error vs torch:
  FP32: 1e-4 * (1 + max |reference|) (summation order; the device's exp/erf approximations).
  FP16 (`vulkan:fp16=on`: every tensor and weight inside the region stored as fp16, arithmetic in
  fp32): 3e-2 * (1 + max |reference|); each stored value is rounded to 11 significant bits
  (relative 4.9e-4) and the rounding compounds over the network's depth (measured: resnet-18
  8e-4, mobilenet-v2 1e-2 relative to max |reference| at 224x224).
"""

import json
import os
import subprocess

import numpy as np
import pytest
import torch

from vulkan_models_util import LAVAPIPE, small_model  # sets the device before pteron

import pteron  # noqa: E402
from pteron import zoo  # noqa: E402
from pteron_cli import pteron_cli  # noqa: E402

CLI = pteron_cli()
FP32_TOL, FP16_TOL = 1e-4, 3e-2




def _run(ep, fp16):
    program = pteron.to_edge_transform_and_lower(
        ep, partitioner=[pteron.VulkanPartitioner(fp16=fp16)])
    return program.report, program.load().forward


# (model, delegated nodes in its one Vulkan region). OPT's count follows the compiler's passes
# (84 before select_rows_early moved the last-token select up); the region must still take
# every node but the int64 mask arithmetic.
MODELS = [("resnet-18", 49), ("mobilenet-v2", 100), ("opt-2-layers", 83)]


@pytest.mark.parametrize("name,nodes", MODELS)
def test_model_is_one_vulkan_region_matching_torch_in_fp32_and_fp16(name, nodes):
    model, inputs = small_model(name)
    ep = pteron.export(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    scale = 1 + float(expected.abs().max())
    for fp16, tol in ((False, FP32_TOL), (True, FP16_TOL)):
        report, forward = _run(ep, fp16)
        regions = report["delegated_regions"]
        assert [r["nodes"] for r in regions] == [nodes], (fp16, regions, report["refusals"])
        assert regions[0]["backend"] == ("vulkan:fp16=on" if fp16 else "vulkan")
        err = float((forward(*inputs)[0] - expected).abs().max())
        assert err <= tol * scale, (name, "fp16" if fp16 else "fp32", err, scale)
    if name == "opt-2-layers":
        # Embeddings and attention run on the GPU; only the int64 mask arithmetic (cumsum,
        # bitwise_and, where, index) stays on the CPU.
        kept = "\n".join(report["refusals"])
        assert "embedding" not in kept and "bmm" not in kept and "softmax" not in kept, kept


# Full-size models: delegated nodes in the one Vulkan region each must form (every node but
# OPT's int64 mask arithmetic).
FULL_SIZE = [("mobilenet-v2", 100), ("resnet-18", 49), ("opt-125m", 460)]

# The Vulkan compile variants: (id, VulkanPartitioner arguments, backend in the report,
# tolerance). A variant with fp16 arithmetic (shaderFloat16) gets its own row here, with the
# tolerance it states.
VARIANTS = [
    ("fp32", {}, "vulkan", FP32_TOL),
    ("fp16", {"fp16": True}, "vulkan:fp16=on", FP16_TOL),
]


@pytest.fixture(scope="module")
def eager_reference():
    """eager_reference(name): the zoo model's example inputs and PyTorch eager output, computed
    once per module; the model itself is dropped (OPT-125M's weights are 500 MB)."""
    cache = {}

    def get(name):
        if name not in cache:
            model, inputs = zoo.get(name)
            with torch.no_grad():
                cache[name] = inputs, model(*inputs)
        return cache[name]

    return get


@pytest.mark.parametrize("variant", VARIANTS, ids=[v[0] for v in VARIANTS])
@pytest.mark.parametrize("name,nodes", FULL_SIZE, ids=[m[0] for m in FULL_SIZE])
def test_full_size_model_is_one_vulkan_region_matching_torch(name, nodes, variant, zoo_pt2,
                                                             eager_reference):
    dtype, options, backend, tol = variant
    inputs, expected = eager_reference(name)
    program = pteron.to_edge_transform_and_lower(
        str(zoo_pt2(name)), partitioner=[pteron.VulkanPartitioner(**options)])
    regions = program.report["delegated_regions"]
    assert [(r["backend"], r["nodes"]) for r in regions] == [(backend, nodes)], (
        regions, program.report["refusals"])
    (actual,) = program.load().forward(*inputs)
    assert actual.shape == expected.shape
    err = float((actual - expected).abs().max())
    scale = 1 + float(expected.abs().max())
    assert err <= tol * scale, (name, dtype, err, scale)


def test_opt125m_mixed_xnnpack_and_vulkan_program_runs_both_delegates(zoo_pt2, eager_reference,
                                                                        tmp_path):
    """`--backends xnnpack,vulkan,portable` on OPT-125M: XNNPACK takes the linear layers, Vulkan
    much of the rest (layer norms, attention's bmm and softmax, residual adds). In the other
    order Vulkan takes every node XNNPACK could, so on the zoo's models a real mix needs XNNPACK
    first. Both delegates must run (event trace of one `pteron profile` run) and the logits
    match PyTorch within the fp32 tolerance."""
    inputs, expected = eager_reference("opt-125m")
    program = pteron.to_edge_transform_and_lower(
        str(zoo_pt2("opt-125m")),
        partitioner=[pteron.XnnpackPartitioner(), pteron.VulkanPartitioner()], kernels=("portable",))
    regions = {}
    for r in program.report["delegated_regions"]:
        regions[r["backend"]] = regions.get(r["backend"], 0) + 1
    assert sorted(regions) == ["vulkan", "xnnpack"], program.report["delegated_regions"]
    (actual,) = program.load().forward(*inputs)
    err = float((actual - expected).abs().max())
    assert err <= FP32_TOL * (1 + float(expected.abs().max())), err

    program.save(tmp_path / "m.pte")
    np.savez(tmp_path / "in.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    proc = subprocess.run([CLI, "profile", str(tmp_path / "m.pte"), "--inputs",
                           str(tmp_path / "in.npz"), "--iters", "1", "--warmup", "0", "-o",
                           str(tmp_path / "trace"), "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    calls = {o["name"]: o["calls"] for o in json.loads(proc.stdout)["ops"] if o["where"] == "delegate"}
    assert calls == {"PteronXnnpackBackend": regions["xnnpack"],
                     "PteronVulkanBackend": regions["vulkan"]}, calls
    inside = {o["name"]: o["calls"] for o in json.loads(proc.stdout)["inside_delegates"]}
    assert inside.get("vulkan: run command buffer") == regions["vulkan"], inside


def _compile(tmp_path, model, inputs, *args):
    ep = pteron.export(model, inputs)
    torch.export.save(ep.run_decompositions(), tmp_path / "m.pt2")
    subprocess.run([CLI, "compile", str(tmp_path / "m.pt2"), "-o", str(tmp_path / "m.pte"), *args],
                   check=True, capture_output=True)
    np.savez(tmp_path / "in.npz", **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})


def _cli_run(tmp_path, icd):
    env = dict(os.environ, VK_ICD_FILENAMES=icd)
    run = subprocess.run([CLI, "run", str(tmp_path / "m.pte"), "--inputs", str(tmp_path / "in.npz"),
                          "--outputs", str(tmp_path / "out.npz")], env=env, capture_output=True,
                         text=True)
    return run


def test_cpu_fallback_plan_runs_when_the_gpu_is_absent(tmp_path):
    model, _ = zoo.get("resnet-8")
    inputs = (torch.randn(1, 3, 32, 32),)
    _compile(tmp_path, model, inputs, "--backends", "vulkan,portable",
             "--fallback", "xnnpack,portable")
    with torch.no_grad():
        want = model(*inputs).numpy()
    tol = FP32_TOL * (1 + np.abs(want).max())
    # GPU present: the Vulkan plan runs, nothing is said about plans.
    run = _cli_run(tmp_path, LAVAPIPE)
    assert run.returncode == 0, run.stderr
    assert "fallback" not in run.stderr
    assert np.abs(np.load(tmp_path / "out.npz")["output_0"] - want).max() <= tol
    # No Vulkan driver: one line says the CPU plan runs and why; the result is the same.
    (tmp_path / "out.npz").unlink()
    run = _cli_run(tmp_path, str(tmp_path / "no_such_icd.json"))
    assert run.returncode == 0, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "running the CPU fallback plan 'forward:cpu': backend 'PteronVulkanBackend' is not " \
           "available on this device: Vulkan:" in lines[0]
    assert np.abs(np.load(tmp_path / "out.npz")["output_0"] - want).max() <= tol


def test_without_a_fallback_a_missing_gpu_is_one_clear_line(tmp_path):
    model, _ = zoo.get("resnet-8")
    inputs = (torch.randn(1, 3, 32, 32),)
    _compile(tmp_path, model, inputs, "--backends", "vulkan,portable")
    run = _cli_run(tmp_path, str(tmp_path / "no_such_icd.json"))
    assert run.returncode != 0
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert "backend 'PteronVulkanBackend' is not available on this device: Vulkan: cannot " \
           "create an instance" in lines[0]
