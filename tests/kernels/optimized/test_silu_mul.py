"""The optimized sigmoid and pteron::silu_mul (SiLU and the SwiGLU gate, (x * sigmoid(x)) * u)
against torch, and the optimized library's fuse_silu_mul pass.

Sizes cover the vector body and padded tails (1, 7, 37, 4096 + 3 elements, several chunks over
2 threads); values span the exponential's clamp (|x| up to 100) and keep inf/NaN as torch does.
Non-contiguous and non-float32 inputs of aten::sigmoid go to the portable kernel.

Tolerance: float32 rtol 2e-6, atol 1e-7 (the vectorised exponential is within ~2 ulp of
torch's; a division and one or two products follow).
"""

import pteron
import pytest
import torch
from kernel_harness import assert_close, run_kernel

RTOL, ATOL = 2e-6, 1e-7


def rand(*shape, seed=0, scale=4.0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)) * scale


SHAPES = [(1,), (7,), (37,), (3, 5, 11), (4099,), (128, 1376)]


@pytest.mark.parametrize("shape", SHAPES)
def test_sigmoid_matches_torch(threads, shape):
    x = rand(*shape, seed=1)
    out = torch.full(shape, float("nan"))
    run_kernel("aten::sigmoid.out", [x, out], library="optimized")
    assert_close(out, torch.sigmoid(x), atol=ATOL, rtol=RTOL, what=f"sigmoid {shape}")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("gated", [True, False])
def test_silu_mul_matches_torch(threads, shape, gated):
    x, u = rand(*shape, seed=2), rand(*shape, seed=3)
    out = torch.full(shape, float("nan"))
    run_kernel("pteron::silu_mul.out", [x, u if gated else None, out], library="optimized")
    ref = torch.nn.functional.silu(x) * u if gated else torch.nn.functional.silu(x)
    assert_close(out, ref, atol=ATOL * 10, rtol=RTOL, what=f"silu_mul {shape}")


def test_extremes_as_torch():
    x = torch.tensor([-100.0, -88.0, -20.0, -0.0, 0.0, 1e-8, 20.0, 88.0, 100.0, float("inf"),
                      float("-inf"), float("nan")] * 3)
    out = torch.empty_like(x)
    run_kernel("aten::sigmoid.out", [x, out], library="optimized")
    torch.testing.assert_close(out, torch.sigmoid(x), atol=ATOL, rtol=RTOL, equal_nan=True)
    finite = x.isfinite()
    run_kernel("pteron::silu_mul.out", [x, None, out], library="optimized")
    ref = x * torch.sigmoid(x)  # the decomposed graph's form (silu(-inf) is NaN there too)
    torch.testing.assert_close(out[finite], ref[finite], atol=ATOL, rtol=RTOL)
    assert out[~finite].isnan().tolist() == ref[~finite].isnan().tolist()


def test_sigmoid_other_layouts_and_dtypes_go_portable():
    x = rand(2, 3, 4, 5, seed=4).to(memory_format=torch.channels_last)
    out = torch.empty_like(x)
    run_kernel("aten::sigmoid.out", [x, out], library="optimized")
    assert_close(out, torch.sigmoid(x), atol=ATOL, rtol=RTOL, what="channels-last")
    xd = rand(9, seed=5).double()
    outd = torch.empty_like(xd)
    run_kernel("aten::sigmoid.out", [xd, outd], library="optimized")
    assert_close(outd, torch.sigmoid(xd), atol=1e-12, rtol=1e-12, what="float64")


def test_silu_mul_bad_inputs_name_the_op():
    with pytest.raises(RuntimeError, match="silu_mul"):
        run_kernel("pteron::silu_mul.out", [rand(3, 4), rand(3, 5), torch.empty(3, 4)],
                   library="optimized")
    with pytest.raises(RuntimeError, match="silu_mul"):
        run_kernel("pteron::silu_mul.out", [rand(3, 4).double(), None,
                                             torch.empty(3, 4, dtype=torch.float64)],
                   library="optimized")
    with pytest.raises(RuntimeError, match="silu_mul"):
        run_kernel("pteron::silu_mul.out", [rand(3, 4), None, torch.empty(3, 5)],
                   library="optimized")


class SwiGLU(torch.nn.Module):
    """Llama's MLP: down(silu(gate(h)) * up(h)); `kind` varies the pattern."""

    def __init__(self, kind="gated"):
        super().__init__()
        self.gate, self.up, self.down = (torch.nn.Linear(16, 40), torch.nn.Linear(16, 40),
                                         torch.nn.Linear(40, 16))
        self.kind = kind

    def forward(self, h):
        g = self.gate(h)
        if self.kind == "silu":
            return self.down(torch.nn.functional.silu(g))
        if self.kind == "broadcast":  # the other factor broadcasts: SiLU fused, mul kept
            return self.down(torch.nn.functional.silu(g) * self.up(h)[:1])
        if self.kind == "leak":  # the SiLU is read twice: SiLU fused, mul kept
            s = torch.nn.functional.silu(g)
            return self.down(s * self.up(h)), s
        return self.down(torch.nn.functional.silu(g) * self.up(h))


@pytest.mark.parametrize("kind,silu_mul,muls", [("gated", 1, 0), ("silu", 1, 0),
                                                ("broadcast", 1, 1), ("leak", 1, 1)])
def test_pass_fuses_and_matches_torch(kind, silu_mul, muls):
    model, h = SwiGLU(kind).eval(), rand(2, 5, 16, seed=6, scale=1.0)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (h,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count("pteron::silu_mul.out") == silu_mul
    assert ops.count("aten::mul.out") == muls and "aten::sigmoid.out" not in ops
    outs = lowered.load().forward(h)
    with torch.no_grad():
        ref = model(h)
    for got, want in zip(outs, ref if isinstance(ref, tuple) else (ref,)):
        torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)


def test_portable_programs_keep_aten_ops():
    model, h = SwiGLU().eval(), rand(3, 16, seed=7, scale=1.0)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (h,)), kernels=("portable",))
    ops = lowered.load().load_method("forward").instruction_names()
    assert "pteron::silu_mul.out" not in ops and "aten::sigmoid.out" in ops
    torch.testing.assert_close(lowered.load().forward(h)[0], model(h), atol=1e-5, rtol=1e-5)
