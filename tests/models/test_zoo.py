"""Every zoo model (OPT-125M has its own file) builds deterministically, runs eagerly with the
documented input/output shapes, and exports through pteron.zoo to a core-ATen .pt2 that loads
back and reproduces the eager output (atol 1e-5 relative to the output's scale)."""

import functools

import pytest
import torch
from pteron import zoo

import models

# opt-125m has its own file; the KV-cache decoders theirs (tests/llm/test_zoo_llm.py).
FAST = [e.name for e in models.ENTRIES if e.name != "opt-125m" and not e.is_llm]


@functools.cache
def built(name):
    """One build per model for the tests that only read it."""
    return zoo.get(name)


@pytest.mark.parametrize("name", FAST)
def test_builds_runs_with_documented_shapes(name):
    entry = models.BY_NAME[name]
    model, inputs = built(name)
    assert not model.training
    assert tuple(tuple(x.shape) for x in inputs) == entry.input_shapes
    with torch.no_grad():
        out = model(*inputs)
    assert tuple(out.shape) == entry.output_shape
    assert out.dtype == torch.float32
    assert torch.isfinite(out).all()
    assert out.std() > 1e-3, "output is (nearly) constant: weights or init are broken"


@pytest.mark.parametrize("name", ["resnet-8", "transformer-block", "mobilenet-v1-025"])
def test_same_name_gives_same_weights_and_inputs_regardless_of_global_rng(name):
    a, xa = zoo.get(name)
    torch.manual_seed(1234)
    torch.rand(10)
    b, xb = zoo.get(name)
    for (ka, va), (kb, vb) in zip(a.state_dict().items(), b.state_dict().items()):
        assert ka == kb and torch.equal(va, vb), ka
    assert all(torch.equal(p, q) for p, q in zip(xa, xb))


def test_torchvision_layouts_have_torchvision_parameter_counts():
    # torchvision's published sizes: mobilenet_v2 3,504,872; mobilenet_v3_large 5,483,032;
    # resnet18 11,689,512.
    from models.counting import count_params
    assert count_params(built("mobilenet-v2")[0]) == 3_504_872
    assert count_params(built("mobilenet-v3-large")[0]) == 5_483_032
    assert count_params(built("resnet-18")[0]) == 11_689_512


def test_batch_norms_are_not_identities():
    model, _ = built("resnet-18")
    bn = model.layer2[0].bn1
    assert bn.running_mean.abs().max() > 1e-3
    assert (bn.running_var - 1).abs().max() > 1e-3


@pytest.mark.parametrize("name", ["efficientnet-b0", "mobilenet-v3-large", "vit-b16-6l", "bert-base-6l",
                                  "llama-prefill-6l"])
def test_cpu_suite_norms_are_not_identities(name):
    # A fresh norm's affine part is the identity (scale 1, shift 0), which would hide a compiler
    # that drops it; the bench models jitter every one (and EfficientNet's have real statistics).
    norms = [m for m in built(name)[0].modules() if "Norm" in type(m).__name__]
    assert norms
    for m in norms:
        assert (m.weight - 1).abs().max() > 1e-3, type(m).__name__
        if getattr(m, "running_var", None) is not None:
            assert (m.running_var - 1).abs().max() > 1e-3


@pytest.mark.parametrize("name", FAST)
def test_export_to_pt2_is_core_aten_and_matches_eager(name, tmp_path):
    path = zoo.export(name, tmp_path / f"{name}.pt2", log=lambda _msg: None)
    ep = torch.export.load(path)
    targets = [n.target for n in ep.graph.nodes if n.op == "call_function"]
    # Runtime checks torch.export inserts (transformers' mask casts leave a metadata assert):
    # no computation, dropped by pteron's frontend and by ExecuTorch's to_edge.
    checks = {"aten._assert_tensor_metadata.default", "aten._assert_scalar.default"}
    non_core = {str(t) for t in targets
                if isinstance(t, torch._ops.OpOverload) and torch.Tag.core not in t.tags} - checks
    assert not non_core, f"ops outside core ATen after run_decompositions: {non_core}"
    model, inputs = built(name)
    with torch.no_grad():
        expected = model(*inputs)
        got = ep.module()(*inputs)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5 * expected.abs().max().item())
