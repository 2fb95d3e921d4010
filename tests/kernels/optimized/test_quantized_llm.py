"""Quantized LLM weights: torchao's export (8da4w, int4/int8 weight-only) compiled by pteron's
optimized library (compiler/passes/quantized_linear.cpp -> pteron::linear_q8w / linear_q4w /
linear_8da4w / embedding_q*), and pteron's own quantizer (quantize="llm-8da4w" ...).

References and tolerances:
- torchao's eager output (it dequantizes and runs float linears). pteron sums int4 x int8
  products exactly in int32 per group and scales afterwards, or accumulates x * q in float
  before scaling: the same real numbers in another float order, so rtol 1e-4 and atol 1e-4 of
  the output's largest magnitude (float32 sums of a few hundred terms).
- The 8da4w op: 1 and 2 threads give bit-identical outputs (each output channel is computed by
  one thread with the same code); its int32 group dots are checked bit exact against a scalar
  reference in qlinear_kernels_test.cpp.
"""

import subprocess

import pteron
import pteron_native
import pytest
import torch
from kernel_harness import run_kernel

from torchao.quantization import (  # noqa: E402
    Int8DynamicActivationIntxWeightConfig,
    IntxWeightOnlyConfig,
    quantize_,
)
from torchao.quantization.granularity import PerAxis, PerGroup  # noqa: E402

KERNELS = ["optimized", "portable"]


def close(actual, expected, what):
    scale = expected.abs().max().item()
    torch.testing.assert_close(actual, expected, rtol=1e-4, atol=1e-4 * max(scale, 1e-6),
                               msg=lambda m: f"{what}: {m}")


class Block(torch.nn.Module):
    """Embedding, then an MLP: what an LLM's linears and lookups look like, static shapes."""

    def __init__(self, vocab=96, dim=128, hidden=256):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, ids):
        return self.down(torch.nn.functional.silu(self.up(self.emb(ids))))


def make_block(seed=0):
    torch.manual_seed(seed)
    return Block().eval()


def config(name, group):
    granularity = PerAxis(0) if group == 0 else PerGroup(group)
    if name in ("8da4w", "8da8w"):
        return Int8DynamicActivationIntxWeightConfig(
            weight_dtype=torch.int4 if name == "8da4w" else torch.int8, weight_granularity=granularity)
    return IntxWeightOnlyConfig(weight_dtype=torch.int4 if name == "int4" else torch.int8,
                                granularity=granularity)


def torchao_quantized(model, name, group, embeddings=True):
    quantize_(model, config(name, group))
    if embeddings and not name.startswith("8da"):
        quantize_(model, config(name, group), filter_fn=lambda m, _: isinstance(m, torch.nn.Embedding))
    return model


def compile_and_run(ep, inputs, **kwargs):
    lowered = pteron.to_edge_transform_and_lower(ep, kernels=KERNELS, **kwargs)
    out = pteron.load(lowered.buffer()).forward(*inputs)[0]
    return lowered, out


def pass_count(lowered, name):
    for line in lowered.report["passes"]:
        if f"/{name}:" in line:
            return int(line.split(":")[1].split()[0])
    return 0


@pytest.mark.parametrize("name,group", [("8da4w", 32), ("8da4w", 64), ("8da4w", 128),
                                        ("8da8w", 0), ("8da8w", 32),
                                        ("int4", 32), ("int4", 128), ("int8", 0), ("int8", 32)])
def test_torchao_export_matches_eager(name, group):
    model = torchao_quantized(make_block(), name, group)
    ids = torch.randint(0, 96, (2, 7), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = model(ids)
    ep = torch.export.export(model, (ids,)).run_decompositions({})
    ops = {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}
    assert "torchao.dequantize_affine.default" in ops
    lowered, out = compile_and_run(ep, (ids,))
    assert pass_count(lowered, "quantized_linear") == (2 if name.startswith("8da") else 3)
    close(out, expected, f"torchao {name} group {group}")


def test_default_decompositions_run_as_plain_ops():
    """A .pt2 saved after run_decompositions() with the default table carries torchao's
    primitives decomposed into plain ops (amin/amax/round/clamp/_to_copy ...): nothing is left
    to rewrite, and the portable/optimized plain kernels compute torchao's arithmetic."""
    model = torchao_quantized(make_block(), "8da4w", 32)
    ids = torch.randint(0, 96, (1, 5), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        expected = model(ids)
    ep = torch.export.export(model, (ids,)).run_decompositions()
    assert not any("torchao" in str(n.target) for n in ep.graph.nodes)
    lowered, out = compile_and_run(ep, (ids,))
    assert pass_count(lowered, "quantized_linear") == 0
    close(out, expected, "8da4w default decompositions")


def llm_quantize_eager(model, scheme, group):
    """torchao's eager model for what pteron's own quantizer does (same SYMMETRIC mapping)."""
    name = {"llm-8da4w": "8da4w", "llm-int4": "int4", "llm-int8": "int8"}[scheme]
    quantize_(model, config(name, group))
    quantize_(model, config("int4" if name == "8da4w" else name, group),
              filter_fn=lambda m, _: isinstance(m, torch.nn.Embedding))
    return model


@pytest.mark.parametrize("scheme,group", [("llm-8da4w", 32), ("llm-int4", 64), ("llm-int8", 0)])
def test_pteron_quantizer_matches_torchao(scheme, group):
    ids = torch.randint(0, 96, (3, 4), generator=torch.Generator().manual_seed(3))
    float_model = make_block(seed=4)
    ep = torch.export.export(float_model, (ids,))
    lowered, out = compile_and_run(ep, (ids,), quantize=scheme, group_size=group or None)
    with torch.no_grad():
        expected = llm_quantize_eager(make_block(seed=4), scheme, group)(ids)
    close(out, expected, scheme)
    assert any(line.startswith(scheme) for line in lowered.report["passes"]), lowered.report["passes"]


def test_program_size_shrinks():
    model = make_block()
    ids = torch.zeros(1, 8, dtype=torch.long)
    ep = torch.export.export(model, (ids,))
    fp32 = len(pteron.to_edge_transform_and_lower(ep, kernels=KERNELS).buffer())
    int8 = len(pteron.to_edge_transform_and_lower(ep, kernels=KERNELS, quantize="llm-int8").buffer())
    int4 = len(pteron.to_edge_transform_and_lower(ep, kernels=KERNELS, quantize="llm-int4",
                                                  group_size=128).buffer())
    weights = sum(p.numel() for p in model.parameters()) * 4
    assert weights / (fp32 - int8) < 1.45  # int8 drops ~3/4 of the float weights' bytes
    assert fp32 / int4 > 5.0, (fp32, int8, int4)


@pytest.mark.parametrize("group,message", [
    (48, "int4 group size 48 is not a multiple of 32"),
    (96, "group size 96 does not divide its weight's row length 128"),
])
def test_bad_group_size_is_one_line(group, message):
    ep = torch.export.export(make_block(), (torch.zeros(1, 2, dtype=torch.long),))
    with pytest.raises(pteron.CompileError) as e:
        pteron.to_edge_transform_and_lower(ep, kernels=KERNELS, quantize="llm-int4", group_size=group)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_torchao_int4_group_not_multiple_of_32_refused(tmp_path):
    model = Block(vocab=16, dim=48, hidden=48).eval()
    quantize_(model, IntxWeightOnlyConfig(weight_dtype=torch.int4, granularity=PerGroup(16)))
    ep = torch.export.export(model, (torch.zeros(1, 2, dtype=torch.long),)).run_decompositions({})
    with pytest.raises(pteron.CompileError) as e:
        pteron.to_edge_transform_and_lower(ep, kernels=KERNELS)
    assert "int4 group size 16 is not a multiple of 32" in str(e.value)
    assert "\n" not in str(e.value)


def test_cli_quantize_and_bad_group_size(tmp_path):
    from pteron_cli import pteron_cli

    def run_cli(*args):
        return subprocess.run([pteron_cli(), *args], capture_output=True, text=True, timeout=120)
    ep = torch.export.export(make_block(), (torch.zeros(1, 2, dtype=torch.long),))
    pt2 = tmp_path / "block.pt2"
    torch.export.save(ep, pt2)
    ok = run_cli("compile", str(pt2), "-o", str(tmp_path / "q.pte"), "--quantize", "llm-8da4w",
                 "--group-size", "64", "--memory-report")
    assert ok.returncode == 0, ok.stderr
    assert "llm-8da4w: 2 linear(s), 1 embedding(s), group 64" in ok.stdout
    bad = run_cli("compile", str(pt2), "-o", str(tmp_path / "b.pte"), "--quantize", "llm-int4",
                  "--group-size", "40")
    assert bad.returncode == 1
    assert len(bad.stderr.strip().splitlines()) == 1 and "not a multiple of 32" in bad.stderr


# ---- the ops directly, 1 and 2 threads ------------------------------------------------------

def assert_same_bits_on_one_thread(op, args, out):
    """`out` (computed with 2 threads) equals the op's result with 1: each output channel is
    computed by one thread with the same code."""
    pteron_native.set_num_threads(1)
    one = torch.full_like(out, float("nan"))
    run_kernel(op, args + [one], library="optimized")
    assert torch.equal(out, one)


def pack_int4(q):
    """[N, K] int in [-8, 7] -> [N, K / 2] uint8 in the kernels' block layout."""
    n, k = q.shape
    u = (q + 8).to(torch.uint8).reshape(n, k // 32, 2, 16)
    return (u[:, :, 0] | (u[:, :, 1] << 4)).reshape(n, k // 2).contiguous()


def pack_panels(q, scales):
    """[N, K] int in [-8, 7] and [N, K / G] scales -> 8da4w's panels of 16 channels: weights
    [P, K / 8, 64] uint8 (byte 4c + i of block b: q(c, 8b + i) + 8 | (q(c, 8b + 4 + i) + 8) << 4)
    and scales [P, K / G, 16], padded with q = 0 and scale 0 (qlinear_kernels.h)."""
    n, k = q.shape
    p = (n + 15) // 16
    u = torch.full((p * 16, k), 8, dtype=torch.uint8)
    u[:n] = (q + 8).to(torch.uint8)
    u = u.reshape(p, 16, k // 8, 2, 4)  # panel, channel, block, half, i
    packed = (u[:, :, :, 0] | (u[:, :, :, 1] << 4)).permute(0, 2, 1, 3).reshape(p, k // 8, 64)
    s = torch.zeros(p * 16, scales.shape[1])
    s[:n] = scales
    return packed.contiguous(), s.reshape(p, 16, -1).permute(0, 2, 1).contiguous()


def reference_8da4w(x, q, scales, bias, group):
    """torchao's arithmetic: per-token asymmetric int8 activations, dequantize, float linear
    (any integer weights q: int4 for 8da4w, int8 for 8da8w)."""
    lo = torch.clamp(x.amin(-1, keepdim=True), max=0)
    hi = torch.clamp(x.amax(-1, keepdim=True), min=0)
    s = torch.clamp((hi - lo) / 255.0, min=torch.finfo(torch.float32).smallest_normal)
    z = torch.clamp(-128 - torch.round(lo / s), -128, 127)
    xq = torch.clamp(torch.round(x * (1.0 / s)) + z, -128, 127)
    w = (q.float().reshape(q.shape[0], -1, group) * scales.unsqueeze(-1)).reshape(q.shape)
    return torch.nn.functional.linear((xq - z) * s, w.double().float(), bias)


@pytest.mark.parametrize("m,k,n,group", [(1, 4096, 64, 32), (5, 256, 40, 128), (9, 96, 33, 32),
                                         (64, 512, 48, 64), (1, 768, 100, 32), (13, 128, 7, 128)])
def test_8da4w_op(threads, m, k, n, group):
    g = torch.Generator().manual_seed(m * 7 + k)
    x = torch.randn(m, k, generator=g) * 3 + 0.5
    q = torch.randint(-8, 8, (n, k), generator=g)
    scales = torch.rand(n, k // group, generator=g) * 0.05 + 0.001
    bias = torch.randn(n, generator=g)
    w = (q.double().reshape(n, -1, group) * scales.double().unsqueeze(-1)).reshape(n, k)
    sums = w.sum(-1).float()
    out = torch.full((m, n), float("nan"))
    w4, s4 = pack_panels(q, scales)
    args = [x, w4, s4, sums, bias, group, torch.finfo(torch.float32).smallest_normal]
    run_kernel("pteron::linear_8da4w.out", args + [out], library="optimized")
    close(out, reference_8da4w(x, q, scales, bias, group), f"8da4w {m}x{k}x{n} g{group}")
    if threads == 2:
        assert_same_bits_on_one_thread("pteron::linear_8da4w.out", args, out)


@pytest.mark.parametrize("m,k,n,group", [(1, 4096, 64, 4096), (5, 256, 40, 32), (9, 100, 33, 25),
                                         (64, 512, 48, 512), (13, 128, 7, 1)])
def test_8da8w_op(threads, m, k, n, group):
    g = torch.Generator().manual_seed(m * 5 + k)
    x = torch.randn(m, k, generator=g) * 3 + 0.5
    q = torch.randint(-128, 128, (n, k), generator=g)
    scales = torch.rand(n, k // group, generator=g) * 0.01 + 0.0001
    bias = torch.randn(n, generator=g)
    args = [x, q.to(torch.int8), scales, bias, group, torch.finfo(torch.float32).smallest_normal]
    out = torch.full((m, n), float("nan"))
    run_kernel("pteron::linear_8da8w.out", args + [out], library="optimized")
    close(out, reference_8da4w(x, q, scales, bias, group), f"8da8w {m}x{k}x{n} g{group}")
    if threads == 2:
        assert_same_bits_on_one_thread("pteron::linear_8da8w.out", args, out)


@pytest.mark.parametrize("int4,m,k,n,group", [(True, 1, 4096, 64, 128), (True, 7, 96, 20, 32),
                                              (False, 1, 1001, 50, 1001), (False, 6, 63, 17, 21),
                                              # 8+ rows: the SGEMM over dequantized panels (K 288:
                                              # K blocks of 144, inside int4 blocks)
                                              (True, 33, 288, 40, 32), (True, 8, 512, 70, 128),
                                              (False, 64, 768, 100, 0), (False, 9, 1001, 33, 77)])
def test_weight_only_ops(threads, int4, m, k, n, group):
    group = group or k
    g = torch.Generator().manual_seed(k + n)
    x = torch.randn(2, m, k, generator=g)
    q = torch.randint(-8, 8, (n, k), generator=g) if int4 else torch.randint(-128, 128, (n, k), generator=g)
    scales = torch.rand(n, k // group, generator=g) * 0.05 + 0.001
    w = (q.float().reshape(n, -1, group) * scales.unsqueeze(-1)).reshape(n, k)
    out = torch.full((2, m, n), float("nan"))
    weight = pack_int4(q) if int4 else q.to(torch.int8)
    op = "pteron::linear_q4w.out" if int4 else "pteron::linear_q8w.out"
    run_kernel(op, [x, weight, scales, None, group, out], library="optimized")
    close(out, torch.nn.functional.linear(x, w), op)


def test_op_refuses_bad_group():
    x, out = torch.randn(1, 64), torch.empty(1, 4)
    with pytest.raises(RuntimeError, match="group size 48 does not divide K = 64 in multiples of 32"):
        run_kernel("pteron::linear_q4w.out",
                   [x, torch.zeros(4, 32, dtype=torch.uint8), torch.ones(4, 1), None, 48, out],
                   library="optimized")


def test_quantized_embedding_out_of_range_index():
    table, scales = torch.zeros(4, 16, dtype=torch.int8), torch.ones(4, 1)
    with pytest.raises(RuntimeError, match="index 9 out of range for 4 rows"):
        run_kernel("pteron::embedding_q8w.out",
                   [table, scales, torch.tensor([1, 9]), 16, torch.empty(2, 16)], library="optimized")


# ---- a tiny Llama-style model (GQA, RoPE, RMSNorm, SwiGLU), random weights, no cache ----------

def tiny_llama():
    import transformers
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=64, use_cache=False)
    torch.manual_seed(0)

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = transformers.LlamaForCausalLM(cfg).eval()

        def forward(self, ids):
            return self.m(input_ids=ids, use_cache=False).logits

    return Logits().eval()


@pytest.mark.parametrize("how", ["torchao-8da4w", "torchao-8da8w", "torchao-int4", "torchao-int8",
                                 "pteron-llm-8da4w"])
def test_tiny_llama_logits_match_torchao(how):
    ids = torch.randint(0, 256, (1, 16), generator=torch.Generator().manual_seed(5))
    model = tiny_llama()
    fp32 = len(pteron.to_edge_transform_and_lower(torch.export.export(model, (ids,)),
                                                  kernels=KERNELS).buffer())
    if how.startswith("pteron-"):
        lowered, out = compile_and_run(torch.export.export(model, (ids,)), (ids,), quantize="llm-8da4w")
        llm_quantize_eager(model, "llm-8da4w", 32)
        linears = None
    else:
        name = how.split("-")[1]
        torchao_quantized(model, name, 0 if name in ("int8", "8da8w") else 32)
        lowered, out = compile_and_run(torch.export.export(model, (ids,)), (ids,))
        linears = pass_count(lowered, "quantized_linear")
        assert linears == 15 + (0 if name.startswith("8da") else 1)  # 7 per layer, lm_head, embedding
    with torch.no_grad():
        expected = model(ids)
    close(out, expected, f"tiny llama {how}")
    size = len(lowered.buffer())
    # Norms, RoPE tables and the program itself stay float: about 2.2-2.6x smaller in all (8da8w
    # leaves the embedding float).
    assert size < fp32 / (1.5 if how == "torchao-8da8w" else 2.0), (how, fp32, size)


@pytest.mark.parametrize("name", ["int4", "8da4w"])
def test_torchao_program_on_portable_alone(name):
    """Without the optimized library nothing rewrites torchao's patterns: its primitives run on
    the portable kernels (kernels/portable/op_torchao_affine.cpp) as the graph says, slower but
    with torchao's numbers (a bare-metal or portable-only build)."""
    model = torchao_quantized(make_block(), name, 32)
    ids = torch.randint(0, 96, (2, 5), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        expected = model(ids)
    ep = torch.export.export(model, (ids,))
    lowered = pteron.to_edge_transform_and_lower(ep, kernels=["portable"])
    assert pass_count(lowered, "quantized_linear") == 0
    close(torch.as_tensor(lowered.load().forward(ids)[0]), expected, f"portable {name}")


def test_cli_group_size_needs_llm_scheme(tmp_path):
    from pteron_cli import pteron_cli
    ep = torch.export.export(make_block(), (torch.zeros(1, 2, dtype=torch.long),))
    pt2 = tmp_path / "block.pt2"
    torch.export.save(ep, pt2)
    r = subprocess.run([pteron_cli(), "compile", str(pt2), "-o", str(tmp_path / "x.pte"),
                        "--group-size", "32"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "--group-size needs --quantize llm-8da4w" in r.stderr


@pytest.mark.parametrize("case,message", [
    ("int8 weight for int4", "weight must be uint8"),
    ("row-major int4 weight", r"weight must be int4 panels \[1, 8, 64\] for N = 4, K = 64 \(a program "
                              "written before the panel layout: compile it again\\)"),
    ("scales shape", r"scales must be \[1, 2, 16\]"),
    ("bias size", "bias must have N = 4 elements"),
    ("out shape", r"out shape does not match the result"),
    ("weight_sums rank", r"weight_sums \[N\]"),
    ("eps", "eps must be positive"),
])
def test_8da4w_op_checks_its_arguments(case, message):
    """The program's tensors are not trusted: every mismatch is one error, nothing is read."""
    x = torch.randn(2, 64)
    w = torch.zeros(1, 8, 64, dtype=torch.uint8)
    scales, sums, bias = torch.ones(1, 2, 16), torch.zeros(4), torch.zeros(4)
    out, eps = torch.empty(2, 4), 1e-30
    if case == "int8 weight for int4":
        w = torch.zeros(1, 8, 64, dtype=torch.int8)
    elif case == "row-major int4 weight":
        w = torch.zeros(4, 32, dtype=torch.uint8)
    elif case == "scales shape":
        scales = torch.ones(4, 2)
    elif case == "bias size":
        bias = torch.zeros(5)
    elif case == "out shape":
        out = torch.empty(2, 5)
    elif case == "weight_sums rank":
        sums = torch.zeros(4, 1)
    elif case == "eps":
        eps = 0.0
    with pytest.raises(RuntimeError, match=message):
        run_kernel("pteron::linear_8da4w.out", [x, w, scales, sums, bias, 32, eps, out],
                   library="optimized")


# ---- the mixture-of-experts ops: one quantized matrix per expert, rows sorted by expert --------

# 23 rows over 4 experts: 5, none, one (a decoded token), 14 (the SGEMM path of the weight-only
# ops, 8+ rows), and 3 rows past the last offset that belong to no expert (zero).
OFFSETS = [5, 5, 6, 20]


def grouped_reference(x, offs, expert_product, n):
    out, start = torch.zeros(x.shape[0], n), 0
    for e, end in enumerate(offs):
        if end > start:
            out[start:end] = expert_product(e, x[start:end])
        start = end
    return out


@pytest.mark.parametrize("int4,k,n,group", [(True, 64, 40, 32), (False, 96, 33, 0),
                                            (False, 64, 17, 16), (True, 256, 70, 128)])
def test_grouped_weight_only_ops(threads, int4, k, n, group):
    group = group or k
    g = torch.Generator().manual_seed(k + n)
    x = torch.randn(23, k, generator=g)
    lo, hi = (-8, 8) if int4 else (-128, 128)
    q = torch.randint(lo, hi, (4, n, k), generator=g)
    scales = torch.rand(4, n, k // group, generator=g) * 0.05 + 0.001
    w = (q.float().reshape(4, n, -1, group) * scales.unsqueeze(-1)).reshape(4, n, k)
    weight = torch.stack([pack_int4(q[e]) for e in range(4)]) if int4 else q.to(torch.int8)
    out = torch.full((23, n), float("nan"))
    op = "pteron::grouped_mm_q4w.out" if int4 else "pteron::grouped_mm_q8w.out"
    run_kernel(op, [x, weight, scales, torch.tensor(OFFSETS, dtype=torch.int32), group, out],
               library="optimized")
    expected = grouped_reference(x, OFFSETS, lambda e, rows: torch.nn.functional.linear(rows, w[e]), n)
    close(out, expected, op)


@pytest.mark.parametrize("k,n,group", [(64, 40, 32), (256, 16, 64), (96, 7, 32)])
def test_grouped_8da4w_op(threads, k, n, group):
    g = torch.Generator().manual_seed(k * 3 + n)
    x = torch.randn(23, k, generator=g) * 3 + 0.5
    q = torch.randint(-8, 8, (4, n, k), generator=g)
    scales = torch.rand(4, n, k // group, generator=g) * 0.05 + 0.001
    packed = [pack_panels(q[e], scales[e]) for e in range(4)]
    w = (q.double().reshape(4, n, -1, group) * scales.double().unsqueeze(-1)).reshape(4, n, k)
    out = torch.full((23, n), float("nan"))
    run_kernel("pteron::grouped_mm_8da4w.out",
               [x, torch.stack([p[0] for p in packed]), torch.stack([p[1] for p in packed]),
                w.sum(-1).float(), torch.tensor(OFFSETS), group,
                torch.finfo(torch.float32).smallest_normal, out], library="optimized")
    expected = grouped_reference(
        x, OFFSETS, lambda e, rows: reference_8da4w(rows, q[e], scales[e], None, group), n)
    close(out, expected, "grouped 8da4w")


@pytest.mark.parametrize("case,message", [
    ("offsets fall", r"offsets must rise from 0 to at most the 23 rows; offs\[2\] = 4 after 5"),
    ("offsets past the rows", r"offs\[3\] = 24 after 6"),
    ("offsets per expert", "3 offsets for 4 experts"),
    ("scales of 3 experts", "every weight table must hold the 4 experts"),
    ("K", r"do not match N = 33, K = 64"),
    ("out shape", "out shape does not match the result"),
])
def test_grouped_ops_check_their_arguments(case, message):
    """The offsets come from the router and the tables from the file: neither is trusted."""
    x, weight, scales = torch.randn(23, 96), torch.zeros(4, 33, 96, dtype=torch.int8), torch.ones(4, 33, 3)
    offs, out = torch.tensor(OFFSETS), torch.empty(23, 33)
    if case == "offsets fall":
        offs = torch.tensor([5, 5, 4, 20])
    elif case == "offsets past the rows":
        offs = torch.tensor([5, 5, 6, 24])
    elif case == "offsets per expert":
        offs = torch.tensor([5, 6, 20])
    elif case == "scales of 3 experts":
        scales = torch.ones(3, 33, 3)
    elif case == "K":
        x = torch.randn(23, 64)
    elif case == "out shape":
        out = torch.empty(23, 34)
    with pytest.raises(RuntimeError, match=message):
        run_kernel("pteron::grouped_mm_q8w.out", [x, weight, scales, offs, 32, out], library="optimized")
