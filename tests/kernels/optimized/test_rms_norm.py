"""pteron::rms_norm (the optimized library's fused RMSNorm) against torch, and the
fuse_rms_norm pass on transformers' LlamaRMSNorm form and torch.nn.RMSNorm.

Rows of odd and vector-multiple widths (1, 7, 37, 512, 1000), with and without a weight, 1 and 2
threads. Tolerance: float32 rtol 1e-5, atol 1e-6 (the sum of squares is reduced in another
order than torch's mean).
"""

import pteron
import pytest
import torch
from kernel_harness import assert_close, run_kernel

OP = "pteron::rms_norm.out"
RTOL, ATOL = 1e-5, 1e-6


def rand(*shape, seed=0, scale=1.0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale


def reference(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else w * y


@pytest.mark.parametrize("shape", [(1, 1), (3, 7), (2, 5, 37), (128, 512), (4, 1000)])
@pytest.mark.parametrize("weighted", [True, False])
def test_matches_torch(threads, shape, weighted):
    x = rand(*shape, seed=1, scale=3.0)
    w = rand(shape[-1], seed=2) if weighted else None
    out = torch.full(shape, float("nan"))
    run_kernel(OP, [x, w, 1e-6, out], library="optimized")
    assert_close(out, reference(x, w, 1e-6), atol=ATOL, rtol=RTOL, what=f"rms_norm {shape}")


def test_eps_and_zero_rows():
    x = torch.zeros(2, 8)
    x[1] = 1e-3
    out = torch.empty_like(x)
    run_kernel(OP, [x, None, 0.1, out], library="optimized")
    assert_close(out, reference(x, None, 0.1), atol=ATOL, rtol=RTOL, what="eps")


def test_bad_inputs_name_the_op():
    with pytest.raises(RuntimeError, match="rms_norm"):
        run_kernel(OP, [rand(3, 4), rand(5), 1e-6, torch.empty(3, 4)], library="optimized")
    with pytest.raises(RuntimeError, match="rms_norm"):
        run_kernel(OP, [rand(3, 4).double(), None, 1e-6, torch.empty(3, 4, dtype=torch.float64)],
                   library="optimized")
    with pytest.raises(RuntimeError, match="rms_norm"):
        run_kernel(OP, [rand(3, 4), None, 1e-6, torch.empty(3, 5)], library="optimized")


class LlamaRMSNorm(torch.nn.Module):
    """transformers' LlamaRMSNorm, as written there; `variant` breaks the pattern."""

    def __init__(self, d, variant=""):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(d))
        self.variant = variant

    def forward(self, x):
        h = x.to(torch.float32)
        dim = 0 if self.variant == "other_dim" else -1
        power = 3 if self.variant == "cube" else 2
        var = h.pow(power).mean(dim, keepdim=True)
        y = h * torch.rsqrt(var + 1e-5)
        if self.variant == "leak":
            return self.weight * y.to(x.dtype), y
        return self.weight * y.to(x.dtype)


class Block(torch.nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.norm, self.fc = norm, torch.nn.Linear(24, 24)

    def forward(self, x):
        out = self.norm(x)
        if isinstance(out, tuple):
            return self.fc(out[0]), out[1]
        return self.fc(out)


@pytest.mark.parametrize("norm,fused,muls", [
    (lambda: LlamaRMSNorm(24), 1, 0),
    (lambda: torch.nn.RMSNorm(24, eps=1e-6), 1, 0),
    (lambda: torch.nn.RMSNorm(24, eps=1e-6, elementwise_affine=False), 1, 0),
    (lambda: LlamaRMSNorm(24, "leak"), 1, 1),  # normalised value read twice: the weight mul stays
    (lambda: LlamaRMSNorm(24, "cube"), 0, 2),
])
def test_pass_fuses_and_matches_torch(norm, fused, muls):
    torch.manual_seed(0)
    # positive inputs: the cube variant's mean must stay positive under rsqrt
    model, x = Block(norm()).eval(), rand(2, 6, 24, seed=3, scale=2.0).abs() + 0.1
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(OP) == fused, ops
    assert ops.count("aten::mul.out") == muls, ops
    outs = lowered.load().forward(x)
    with torch.no_grad():
        ref = model(x)
    for got, want in zip(outs, ref if isinstance(ref, tuple) else (ref,)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_other_reduction_dim_and_portable_programs_are_left_alone():
    torch.manual_seed(1)
    model, x = Block(LlamaRMSNorm(24, "other_dim")).eval(), rand(3, 24, seed=4)
    for kernels in (("optimized", "portable"), ("portable",)):
        lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)
        ops = lowered.load().load_method("forward").instruction_names()
        assert OP not in ops and "aten::rsqrt.out" in ops
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-5, rtol=1e-5)
    plain = Block(LlamaRMSNorm(24)).eval()
    lowered = pteron.to_edge_transform_and_lower(pteron.export(plain, (x,)), kernels=("portable",))
    assert OP not in lowered.load().load_method("forward").instruction_names()
