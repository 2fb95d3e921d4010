"""Math and matrix ops torch keeps undecomposed, which models call directly: exp2, erfc, lgamma,
digamma, i0, angle (real), fmax / fmin, gcd / lcm, ldexp, addmv, addbmm, tril_indices /
triu_indices. Kernels against torch over every dtype torch's CPU kernel takes, with the edge
values each defines (NaN, infinities, poles, signed zeros, integer extremes), malformed
arguments as one-line errors, and a model calling them on the default program and on portable.

Tolerances: float32 rtol 2e-6 (std:: math functions may round 1 ulp apart from ATen's; digamma
and lgamma near their zeros absolute 1e-6), float64 1e-12, float16 / bfloat16 one storage ulp;
integer ops, fmax / fmin, angle and the index ops exact.
"""

import math

import pteron
import pytest
import torch
from kernel_harness import run_kernel

A = torch.ops.aten
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
INTS = [torch.uint8, torch.int8, torch.int32, torch.int64]
TOL = {torch.float32: (1e-6, 2e-6), torch.float64: (1e-12, 1e-12), torch.float16: (1e-3, 1e-3),
       torch.bfloat16: (8e-3, 8e-3)}
EDGES = [0.0, -0.0, 1.0, 2.0, -1.0, -2.5, 0.5, 1e-30, 30.0, 1e10, -1e10, math.inf, -math.inf, math.nan]


def values(dtype, n=64):
    g = torch.Generator().manual_seed(0)
    if dtype in INTS or dtype == torch.bool:
        lo = 0 if dtype in (torch.uint8, torch.bool) else -50
        return torch.randint(lo, 2 if dtype == torch.bool else 50, (n,), generator=g).to(dtype)
    x = torch.cat([torch.randn(n, generator=g) * 6, torch.tensor(EDGES)])
    return x.to(dtype)


def check_float(got, want, dtype):
    atol, rtol = TOL.get(dtype, (0, 0))
    torch.testing.assert_close(got, want, atol=atol, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("name", ["exp2", "erfc", "lgamma", "digamma", "i0", "angle"])
@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_unary_math_is_torchs(name, dtype):
    x = values(dtype)
    if name == "i0":
        x = x.clamp(-80, 80) if x.is_floating_point() else x  # I0 overflows float32 past ~88
    want = getattr(A, name)(x)
    got = torch.empty_like(want)
    run_kernel(f"aten::{name}.out", [x, got])
    if name == "angle":
        torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)
    else:
        check_float(got, want, want.dtype)


def test_digamma_poles_and_zeros():
    x = torch.tensor([0.0, -0.0, -1.0, -2.0, -3.5, 1.4616321, 1e17, 1e-8, 10.0, 9.999999])
    want = A.digamma(x)
    got = torch.empty_like(want)
    run_kernel("aten::digamma.out", [x, got])
    torch.testing.assert_close(got, want, atol=1e-6, rtol=2e-6, equal_nan=True)
    assert torch.equal(got[:2], torch.tensor([-math.inf, math.inf]))


@pytest.mark.parametrize("name", ["fmax", "fmin"])
@pytest.mark.parametrize("dtype", FLOATS + INTS + [torch.bool])
def test_fmax_fmin_ignore_nan(name, dtype):
    a, b = values(dtype), values(dtype).flip(0)
    if dtype.is_floating_point:
        a[:5] = math.nan
        b[3:8] = math.nan  # positions 3, 4: both NaN
    want = getattr(A, name)(a, b)
    got = torch.empty_like(want)
    run_kernel(f"aten::{name}.out", [a, b, got])
    torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)
    # Broadcasting, mixed dtypes (int32 with float32: float32 out).
    a, b = torch.randn(3, 1), torch.randint(-3, 3, (4,), dtype=torch.int32)
    want = getattr(A, name)(a, b)
    got = torch.empty_like(want)
    run_kernel(f"aten::{name}.out", [a, b, got])
    assert torch.equal(got, want)


@pytest.mark.parametrize("name", ["gcd", "lcm"])
@pytest.mark.parametrize("dtype", INTS)
def test_gcd_lcm_are_torchs(name, dtype):
    g = torch.Generator().manual_seed(1)
    lo = 0 if dtype == torch.uint8 else -60
    a = torch.randint(lo, 60, (5, 8), generator=g).to(dtype)
    b = torch.randint(lo, 60, (8,), generator=g).to(dtype)
    a[0, :3] = 0
    b[1] = 0
    want = getattr(A, name)(a, b)
    got = torch.empty_like(want)
    run_kernel(f"aten::{name}.out", [a, b, got])
    assert torch.equal(got, want)
    with pytest.raises(RuntimeError, match=f"aten::{name}.out: integer tensors only, got float32"):
        run_kernel(f"aten::{name}.out", [a.float(), b.float(), got.float()])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_ldexp_is_torchs(dtype):
    x = values(dtype)
    e = torch.randint(-20, 20, x.shape, dtype=torch.int32)
    want = A.ldexp.Tensor(x, e)
    got = torch.empty_like(want)
    run_kernel("aten::ldexp.out", [x, e, got])
    torch.testing.assert_close(got, want, atol=0, rtol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int32, torch.int64])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 2), (3, -1)])
def test_addmv_and_addbmm_are_torchs(dtype, beta, alpha):
    g = torch.Generator().manual_seed(2)

    def r(*shape):
        return (torch.randn(shape, generator=g) * 4).to(dtype)

    for self, mat, vec in [(r(7), r(7, 5), r(5)), (r(1), r(3, 9), r(9)), (r(4), r(5, 4).t(), r(5))]:
        if beta == 0:
            self = self.clone().fill_(float("nan") if dtype.is_floating_point else 7)  # not read
        want = A.addmv(self, mat, vec, beta=beta, alpha=alpha)
        got = torch.empty_like(want)
        run_kernel("aten::addmv.out", [self, mat, vec, beta, alpha, got])
        if dtype.is_floating_point:
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5, equal_nan=True)
        else:
            assert torch.equal(got, want)
    for self, b1, b2 in [(r(4, 6), r(3, 4, 5), r(3, 5, 6)), (r(6), r(2, 3, 7), r(2, 7, 6)),
                         (r(2, 2), r(0, 2, 3), r(0, 3, 2))]:
        want = A.addbmm(self, b1, b2, beta=beta, alpha=alpha)
        got = torch.empty_like(want)
        run_kernel("aten::addbmm.out", [self, b1, b2, beta, alpha, got])
        if dtype.is_floating_point:
            torch.testing.assert_close(got, want, atol=1e-5, rtol=1e-5)
        else:
            assert torch.equal(got, want)


def test_addmv_and_addbmm_check_shapes():
    with pytest.raises(RuntimeError, match="aten::addmv.out: cannot multiply a 3x4 matrix and a vector of 5"):
        run_kernel("aten::addmv.out", [torch.zeros(3), torch.zeros(3, 4), torch.zeros(5), 1, 1, torch.zeros(3)])
    with pytest.raises(RuntimeError, match="aten::addbmm.out: cannot multiply batches 2x3x4 and 3x4x5"):
        run_kernel("aten::addbmm.out", [torch.zeros(3, 5), torch.zeros(2, 3, 4), torch.zeros(3, 4, 5), 1, 1,
                                        torch.zeros(3, 5)])


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("row,col,offset", [(4, 4, 0), (3, 6, 1), (6, 3, -2), (5, 5, 9), (5, 5, -9), (0, 3, 0),
                                            (1, 1, 0)])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_triangle_indices_are_torchs(name, row, col, offset, dtype):
    want = getattr(A, name)(row, col, offset, dtype=dtype)
    got = torch.empty_like(want)
    run_kernel(f"aten::{name}.out", [row, col, offset, got])
    assert torch.equal(got, want)


def test_triangle_indices_refuse_bad_sizes():
    with pytest.raises(RuntimeError, match="aten::tril_indices.out: row and col must be in"):
        run_kernel("aten::tril_indices.out", [-1, 3, 0, torch.empty(2, 0, dtype=torch.long)])
    with pytest.raises(RuntimeError, match="aten::triu_indices.out: out dtype float32 not supported"):
        run_kernel("aten::triu_indices.out", [3, 3, 0, torch.empty(2, 6)])


class Mixed(torch.nn.Module):
    """A model calling each op the way user code does."""

    def forward(self, x, m, v, e):
        rows, cols = torch.triu_indices(x.shape[1], x.shape[1], 1)
        pairs = (x[:, rows] * x[:, cols]).sum(-1)  # DLRM-style feature crosses
        return (torch.exp2(x) + torch.erfc(x) + torch.lgamma(x.abs() + 0.5) + torch.digamma(x.abs() + 0.5)
                + torch.i0(x) + torch.angle(x), torch.fmax(x, x.flip(0)), torch.fmin(x, v),
                torch.ldexp(x, e), torch.addmv(v, m, v, beta=0.5, alpha=2.0),
                torch.addbmm(m, m.expand(3, -1, -1), m.t().expand(3, -1, -1)), torch.gcd(e, e.flip(0)),
                torch.lcm(e, e + 1), pairs)


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_a_model_calling_them_matches_torch(kernels):
    torch.manual_seed(0)
    x, m, v = torch.randn(6, 6), torch.randn(6, 6), torch.randn(6)
    e = torch.randint(-4, 5, (6, 6), dtype=torch.int32)
    with torch.no_grad():
        want = Mixed()(x, m, v, e)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(Mixed(), (x, m, v, e)),
                                                 **({"kernels": kernels} if kernels else {}))
    got = lowered.load().forward(x, m, v, e)
    for g, w in zip(got, want, strict=True):
        g = torch.as_tensor(g)
        if w.is_floating_point():
            torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
        else:
            assert torch.equal(g, w)
