"""The attention fusion pass (compiler/passes/fuse_attention.cpp): with the "optimized" kernel
library selected, decomposed attention (bmm, scale, mask, softmax, bmm) becomes one
pteron::sdpa call and the program still matches PyTorch; without it the program keeps plain
aten ops only (runnable on ExecuTorch).

Tolerance: max abs error within 1e-4 * (1 + max |reference|), as for the zoo models.
"""

import math
import subprocess

import pteron
import pytest
import torch
from pteron import zoo
from pteron_cli import pteron_cli


def _lower(model, inputs, tmp_path, kernels):
    path = tmp_path / "model.pt2"
    ep = torch.export.export(model, inputs).run_decompositions()
    torch.export.save(ep, path)
    return pteron.to_edge_transform_and_lower(str(path), kernels=kernels)


def _ops(lowered):
    return set(lowered.load().load_method("forward").instruction_names())


def _check_matches(lowered, model, inputs):
    with torch.no_grad():
        expected = model(*inputs)
    actual = lowered.load().forward(*inputs)[0]
    tol = 1e-4 * (1 + float(expected.abs().max()))
    err = float((actual - expected).abs().max())
    assert err <= tol, f"max error {err} > {tol}"


def _fused(lowered):
    line = next(p for p in lowered.report["passes"] if p.startswith("optimized/fuse_attention"))
    return int(line.split(":")[1].split()[0])


@pytest.fixture(scope="module")
def transformer_block_pt2(tmp_path_factory):
    path = tmp_path_factory.mktemp("tb") / "transformer-block.pt2"
    zoo.export("transformer-block", path, log=lambda _msg: None)
    return str(path)


def test_transformer_block_fuses_both_layers_and_matches(transformer_block_pt2):
    lowered = pteron.to_edge_transform_and_lower(transformer_block_pt2,
                                                 kernels=("optimized", "portable"))
    assert _fused(lowered) == 2
    ops = _ops(lowered)
    assert "pteron::sdpa.out" in ops
    assert not {"aten::bmm.out", "aten::_softmax.out", "aten::where.self_out"} & ops
    model, inputs = zoo.get("transformer-block")
    _check_matches(lowered, model, inputs)


def test_the_default_program_fuses_attention(transformer_block_pt2):
    lowered = pteron.to_edge_transform_and_lower(transformer_block_pt2)  # xnnpack, optimized, portable
    assert _fused(lowered) == 2 and "pteron::sdpa.out" in _ops(lowered)


@pytest.mark.parametrize("kernels", [("portable",)])
def test_without_optimized_program_has_only_aten_ops(transformer_block_pt2, kernels):
    lowered = pteron.to_edge_transform_and_lower(transformer_block_pt2, kernels=kernels)
    assert not any(p.startswith("optimized/fuse_attention") for p in lowered.report["passes"])
    ops = _ops(lowered)
    assert ops and all(op.startswith("aten::") for op in ops), ops
    assert "aten::bmm.out" in ops


class OptStyleAttention(torch.nn.Module):
    """Scaled queries, bmm on [B*H, L, D], a float additive mask on the 4-d scores (OPT)."""

    def __init__(self, heads=3, dim=24, seq=10):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.proj = torch.nn.Linear(dim, 3 * dim)
        causal = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", causal[None, None])

    def forward(self, x):
        b, s, d = x.shape
        h, dh = self.heads, self.dim // self.heads
        q, k, v = self.proj(x).split(d, -1)
        q = (q * dh**-0.5).view(b, s, h, dh).transpose(1, 2).reshape(b * h, s, dh)
        k = k.view(b, s, h, dh).transpose(1, 2).reshape(b * h, s, dh)
        v = v.view(b, s, h, dh).transpose(1, 2).reshape(b * h, s, dh)
        scores = torch.bmm(q, k.transpose(1, 2)).view(b, h, s, s) + self.mask
        p = torch.softmax(scores, dim=-1).view(b * h, s, s)
        return torch.bmm(p, v).view(b, h, s, dh).transpose(1, 2).reshape(b, s, d)


class UnmaskedAttention(torch.nn.Module):
    """matmul / sqrt(d), no mask, 4-d tensors (bmm after export's reshapes)."""

    def forward(self, q, k, v):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        return torch.softmax(s, -1) @ v


class SharedScores(UnmaskedAttention):
    """The scores are also an output: the chain cannot be fused."""

    def forward(self, q, k, v):
        s = q @ k.transpose(-2, -1)
        return torch.softmax(s, -1) @ v, s


def test_additive_mask_and_query_scaling_fuse(tmp_path):
    model = OptStyleAttention().eval()
    inputs = (torch.randn(2, 10, 24),)
    lowered = _lower(model, inputs, tmp_path, ("optimized", "portable"))
    assert _fused(lowered) == 1
    _check_matches(lowered, model, inputs)


def test_unmasked_four_d_attention_fuses(tmp_path):
    model = UnmaskedAttention()
    g = torch.Generator().manual_seed(0)
    inputs = tuple(torch.randn(2, 3, 7, 8, generator=g) for _ in range(3))
    lowered = _lower(model, inputs, tmp_path, ("optimized", "portable"))
    assert _fused(lowered) == 1
    _check_matches(lowered, model, inputs)


def test_scores_used_elsewhere_are_not_fused(tmp_path):
    model = SharedScores()
    inputs = tuple(torch.randn(1, 2, 5, 4) for _ in range(3))
    lowered = _lower(model, inputs, tmp_path, ("optimized", "portable"))
    assert _fused(lowered) == 0
    assert "pteron::sdpa.out" not in _ops(lowered)
    with torch.no_grad():
        expected = model(*inputs)
    actual = lowered.load().forward(*inputs)
    for a, e in zip(actual, expected):
        assert float((a - e).abs().max()) <= 1e-4


def test_partitioner_then_optimized_kernels(transformer_block_pt2):
    # With a partitioner first, attention still fuses on the optimized kernels; XNNPACK's cost
    # rule leaves the sequence-long linear layers to the optimized SGEMM (faster there).
    lowered = pteron.to_edge_transform_and_lower(
        transformer_block_pt2, [pteron.XnnpackPartitioner()], kernels=("optimized", "portable"))
    assert _fused(lowered) == 2
    assert "pteron::sdpa.out" in _ops(lowered)
    assert any("xnnpack: optimized kernel faster: SGEMM" in r for r in lowered.report["refusals"])
    model, inputs = zoo.get("transformer-block")
    _check_matches(lowered, model, inputs)


def _cli(*args):
    exe = pteron_cli()
    proc = subprocess.run([exe, *map(str, args)], capture_output=True, text=True, timeout=120,
                          check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("backends,fused", [("optimized,portable", True), ("portable", False)])
def test_cli_backends_choose_kernel_libraries(transformer_block_pt2, tmp_path, backends, fused):
    out = tmp_path / "tb.pte"
    status, text = _cli("compile", transformer_block_pt2, "-o", out, "--backends", backends)
    assert status == 0, text
    status, text = _cli("inspect", out)
    assert status == 0, text
    assert ("pteron::sdpa.out" in text) == fused, text


class EncoderWithPadding(torch.nn.Module):
    """nn.TransformerEncoderLayer: its math path exports torch's _safe_softmax guard (rows whose
    every key is masked give 0, not NaN) around the softmax; the padding mask is an input. The
    reference is the exported program: eager eval takes the fused fast path instead, which gives
    NaN on a fully padded sequence."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)

    def forward(self, x, pad):
        return self.layer(x, src_key_padding_mask=pad)


def _encoder_inputs(batch, seq):
    g = torch.Generator().manual_seed(seq)
    pad = torch.zeros(batch, seq, dtype=torch.bool)
    pad[0, seq // 2:] = True
    if batch > 1:
        pad[1, :] = True  # every key of batch 1 masked: _safe_softmax's zeros
    return torch.randn(batch, seq, 32, generator=g), pad


def test_safe_softmax_guard_fuses_and_keeps_zero_rows(tmp_path):
    model = EncoderWithPadding().eval()
    inputs = _encoder_inputs(2, 9)
    lowered = _lower(model, inputs, tmp_path, ("optimized", "portable"))
    assert _fused(lowered) == 1
    ops = _ops(lowered)
    assert "pteron::sdpa.out" in ops
    assert not {"aten::any.out", "aten::eq.Scalar_out", "aten::logical_not.out"} & ops, ops
    _check_matches(lowered, torch.export.export(model, inputs).module(), inputs)


def test_dynamic_sequence_attention_fuses_and_matches_every_length(tmp_path):
    # Sizes are upper bounds in a dynamic program: the fusion must prove the dims it relies on
    # equal symbolically, and the fused kernel sizes its output at run time.
    model = EncoderWithPadding().eval()
    seq = torch.export.Dim("seq", min=2, max=40)
    ep = torch.export.export(model, _encoder_inputs(2, 16),
                             dynamic_shapes={"x": {1: seq}, "pad": {1: seq}}).run_decompositions()
    path = tmp_path / "dynamic.pt2"
    torch.export.save(ep, path)
    lowered = pteron.to_edge_transform_and_lower(str(path), kernels=("optimized", "portable"))
    assert _fused(lowered) == 1
    assert "pteron::sdpa.out" in _ops(lowered)
    method = lowered.load()
    for length in (2, 7, 16, 40):
        inputs = _encoder_inputs(2, length)
        with torch.no_grad():
            expected = ep.module()(*inputs)
        actual = method.forward(*inputs)[0]
        assert actual.shape == expected.shape
        tol = 1e-4 * (1 + float(expected.abs().max()))
        err = float((actual - expected).abs().max())
        assert err <= tol, f"seq {length}: max error {err} > {tol}"
