"""fp16 arithmetic in `vulkan:fp16=on` regions: whole models against PyTorch eager, with the
arithmetic variants (PTERON_VULKAN_FP16_ARITH=1: lavapipe has shaderFloat16, but as a CPU
device it gets the storage-only variants unless asked) and with the storage-only variants
(PTERON_VULKAN_FP16_ARITH=0), from one compiled program.

Sizes as in test_vulkan_models.py: resnet-18 and mobilenet-v2 at 64x64, a 2-layer OPT.
Tolerance, max abs error vs torch, both variants: 3e-2 * (1 + max |reference|), the
`vulkan:fp16=on` storage tolerance: fp16 arithmetic (products rounded to fp16, sums in fp32; see
backends/vulkan/shaders/common.glsl) adds roundings of the same size as the storage's, and the
measured errors (printed) stay within a small factor of the storage-only ones.
"""


import pytest
import torch

from vulkan_models_util import opt_2_layers, small_model  # sets the device before pteron

import pteron  # noqa: E402

TOL = 3e-2




def _load_and_run(program, inputs, monkeypatch, capfd, fp16_arith):
    """Loads the program (the delegate picks its shader variants here) with
    PTERON_VULKAN_FP16_ARITH set to `fp16_arith` ("0", "1" or None: unset) and runs it once;
    returns the output and the delegate's log line."""
    monkeypatch.setenv("PTERON_VULKAN_LOG", "1")
    if fp16_arith is None:
        monkeypatch.delenv("PTERON_VULKAN_FP16_ARITH", raising=False)
    else:
        monkeypatch.setenv("PTERON_VULKAN_FP16_ARITH", fp16_arith)
    capfd.readouterr()
    loaded = program.load()
    loaded.load_method("forward")
    log = capfd.readouterr().err
    return loaded.forward(*inputs)[0], log


@pytest.mark.parametrize("name", ["resnet-18", "mobilenet-v2", "opt-2-layers"])
def test_fp16_arithmetic_matches_torch_like_fp16_storage(name, monkeypatch, capfd):
    model, inputs = small_model(name)
    ep = pteron.export(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    scale = 1 + float(expected.abs().max())
    program = pteron.to_edge_transform_and_lower(
        ep, partitioner=[pteron.VulkanPartitioner(fp16=True)])
    arith, arith_log = _load_and_run(program, inputs, monkeypatch, capfd, "1")
    storage, storage_log = _load_and_run(program, inputs, monkeypatch, capfd, "0")
    assert "fp16 storage, fp16 arithmetic (fp32 accumulation)" in arith_log, arith_log
    assert "fp16 storage, fp32 arithmetic" in storage_log, storage_log
    arith_err = float((arith - expected).abs().max()) / scale
    storage_err = float((storage - expected).abs().max()) / scale
    with capfd.disabled():
        print(f"\n[fp16 error] {name}: storage-only {storage_err:.2e}, "
              f"fp16-arith {arith_err:.2e} (relative to 1 + max|ref| = {scale:.3g})")
    assert storage_err <= TOL, (name, storage_err)
    assert arith_err <= TOL, (name, arith_err)
    assert not torch.equal(arith, storage)  # the two variants really ran different shaders


def test_storage_only_compile_option(monkeypatch, capfd):
    """`vulkan:fp16=storage` (VulkanPartitioner(fp16=True, fp16_arithmetic=False)) stores fp16
    and computes in fp32 even on a device with shaderFloat16."""
    model, inputs = opt_2_layers()
    ep = pteron.export(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    partitioner = pteron.VulkanPartitioner(fp16=True, fp16_arithmetic=False)
    assert partitioner.backend == "vulkan:fp16=storage"
    program = pteron.to_edge_transform_and_lower(ep, partitioner=[partitioner])
    assert [r["backend"] for r in program.report["delegated_regions"]] == ["vulkan:fp16=storage"]
    got, log = _load_and_run(program, inputs, monkeypatch, capfd, "1")  # the payload wins
    assert "fp16 storage, fp32 arithmetic (compiled with vulkan:fp16=storage)" in log, log
    scale = 1 + float(expected.abs().max())
    assert float((got - expected).abs().max()) <= TOL * scale


def test_cpu_device_defaults_to_storage_only(monkeypatch, capfd):
    """Unasked, a `vulkan:fp16=on` region on lavapipe (a CPU device, where fp16 arithmetic is
    slower) runs the storage-only variants and the log line says why."""
    model, inputs = opt_2_layers()
    program = pteron.to_edge_transform_and_lower(
        pteron.export(model, inputs), partitioner=[pteron.VulkanPartitioner(fp16=True)])
    _, log = _load_and_run(program, inputs, monkeypatch, capfd, None)
    assert "llvmpipe" in log, log
    assert "fp16 storage, fp32 arithmetic (a CPU device, where fp16 arithmetic is slower; " \
           "PTERON_VULKAN_FP16_ARITH=1 forces it)" in log, log
