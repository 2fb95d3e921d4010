"""torch.special's Bessel functions, erfcx (and log_ndtr, which decomposes to it), ndtri, the
Hurwitz zeta, polygamma, nextafter and round(decimals=) on the portable kernels, against torch
over float32 and float64 with their limits (0, -0, +-inf, NaN, poles) and against mpmath where
torch itself is inexact; a model calling them compiled on the default program and on portable.

Tolerances, |got - want| <= atol * max(1, |want|) + rtol * |want|:
- float32: atol 4e-6, rtol 1e-5 (ATen evaluates in float; pteron in double, rounded once).
- float64 I, K and their scaled forms, erfcx, ndtri, polygamma, zeta: atol 1e-13, rtol 1e-12.
- float64 J0, J1, Y0, Y1: within 1e-6 of torch, whose float64 values are off by up to 6e-7
  (its coefficient tables), and within 1e-13 of mpmath at 30 digits.
- nextafter (float16 / bfloat16 too) and round: exact. Non-finite results: the same as torch's, position by position.
"""

import mpmath
import pytest
import torch
from kernel_harness import run_kernel

import pteron

S = torch.special
EDGES = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-30, 1e-3, 700.5, -700.5, 750.0, -750.0, 1e4]
X = torch.cat([torch.linspace(-30, 30, 241), torch.tensor(EDGES)])

BESSEL = {
    "special_bessel_j0": S.bessel_j0, "special_bessel_j1": S.bessel_j1,
    "special_bessel_y0": S.bessel_y0, "special_bessel_y1": S.bessel_y1,
    "special_modified_bessel_i0": S.modified_bessel_i0, "special_modified_bessel_i1": S.modified_bessel_i1,
    "special_modified_bessel_k0": S.modified_bessel_k0, "special_modified_bessel_k1": S.modified_bessel_k1,
    "special_scaled_modified_bessel_k0": S.scaled_modified_bessel_k0,
    "special_scaled_modified_bessel_k1": S.scaled_modified_bessel_k1,
    "special_i0e": S.i0e, "special_i1": S.i1, "special_i1e": S.i1e, "special_erfcx": S.erfcx,
}
JY = {"special_bessel_j0", "special_bessel_j1", "special_bessel_y0", "special_bessel_y1"}
MPMATH = {"special_bessel_j0": lambda x: mpmath.besselj(0, x), "special_bessel_j1": lambda x: mpmath.besselj(1, x),
          "special_bessel_y0": lambda x: mpmath.bessely(0, x), "special_bessel_y1": lambda x: mpmath.bessely(1, x)}


def check(got, want, atol, rtol):
    assert torch.equal(torch.isnan(got), torch.isnan(want)), (got, want)
    inf = torch.isinf(want)
    assert torch.equal(got[inf], want[inf])
    fin = torch.isfinite(want)
    g, w = got[fin].double(), want[fin].double()
    bound = atol * w.abs().clamp_min(1) + rtol * w.abs()
    bad = (g - w).abs() > bound
    assert not bad.any(), f"{int(bad.sum())} off, worst {float(((g - w).abs() - bound).max())}"


def call(name, *args):
    want_like = args[-1]
    out = torch.empty_like(want_like)
    run_kernel(f"aten::{name}.out", [*args[:-1], out])
    return out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(BESSEL))
def test_bessel_and_erfcx_are_torchs(name, dtype):
    x = X.to(dtype)
    want = BESSEL[name](x)
    got = call(name, x, want)
    if dtype == torch.float32:
        check(got, want, 4e-6, 1e-5)
    elif name in JY:
        check(got, want, 1e-6, 0)
    else:
        check(got, want, 1e-13, 1e-12)


@pytest.mark.parametrize("name", sorted(JY))
def test_j_and_y_are_exact_to_double_precision(name):
    mpmath.mp.dps = 30
    x = torch.tensor([1e-3, 0.5, 2.6, 3.9999995, 8.0, 12.0, 14.2, 15.99, 16.01, 25.0, 80.0, 750.0], dtype=torch.float64)
    got = call(name, x, x)
    want = torch.tensor([float(MPMATH[name](v)) for v in x.tolist()], dtype=torch.float64)
    check(got, want, 1e-13, 1e-13)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_ndtri_is_torchs(dtype):
    p = torch.cat([torch.rand(300, generator=torch.Generator().manual_seed(0)),
                   torch.tensor([0.0, 1.0, 0.5, 1e-30, 1e-300 if dtype == torch.float64 else 1e-38,
                                 1 - 1e-7, -0.1, 1.1, float("nan")])]).to(dtype)
    want = S.ndtri(p)
    tol = (4e-6, 1e-5) if dtype == torch.float32 else (1e-13, 1e-12)
    check(call("special_ndtri", p, want), want, *tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_polygamma_is_torchs(dtype, n):
    edges = torch.tensor([0.0, -1.0, -2.0, 1e-4, 1e4, float("inf"), float("nan")])
    x = torch.cat([torch.linspace(-4.75, 12, 68), edges]).to(dtype)
    want = torch.polygamma(n, x)
    tol = (4e-6, 1e-5) if dtype == torch.float32 else (1e-13, 1e-12)
    check(call("polygamma", n, x, want), want, *tol)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_polygamma_of_integers_is_torchs_at_the_poles(n):
    """Integer inputs promote to float32 and compute there, as torch (trigamma's poles show it)."""
    x = torch.arange(-3, 5, dtype=torch.int32)
    want = torch.polygamma(n, x)
    got = torch.empty_like(want)
    run_kernel("aten::polygamma.out", [n, x, got])
    check(got, want, 4e-6, 1e-5)


def test_polygamma_refuses_a_negative_order():
    with pytest.raises(RuntimeError, match="polygamma.out: n must be non-negative, got -1"):
        run_kernel("aten::polygamma.out", [-1, torch.ones(3), torch.empty(3)])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_zeta_is_torchs(dtype):
    g = torch.Generator().manual_seed(1)
    s = torch.cat([torch.rand(60, generator=g) * 6 + 1.01, torch.tensor([1.0, 0.5, 2.0, 3.0, 2.5, float("nan")])]).to(dtype)
    q = torch.cat([torch.rand(60, generator=g) * 8 - 2, torch.tensor([1.0, 1.0, 0.0, -2.0, -1.5, 1.0])]).to(dtype)
    want = S.zeta(s, q)
    got = torch.empty_like(want)
    run_kernel("aten::special_zeta.out", [s, q, got])
    tol = (4e-6, 1e-5) if dtype == torch.float32 else (1e-13, 1e-12)
    check(got, want, *tol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_nextafter_is_torchs_exactly(dtype):
    a = torch.tensor([0.0, -0.0, 1.0, -1.0, 1e-38, float("inf"), -float("inf"), float("nan"), 3.0, 65504.0, -2.5],
                     dtype=dtype)
    b = torch.tensor([1.0, -1.0, 2.0, -2.0, 0.0, 0.0, 0.0, 1.0, 3.0, float("inf"), -3.0], dtype=dtype)
    want = torch.nextafter(a, b)
    got = torch.empty_like(want)
    run_kernel("aten::nextafter.out", [a, b, got])
    assert torch.equal(got.nan_to_num(), want.nan_to_num()) and torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.signbit(), want.signbit())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("decimals", [-2, -1, 0, 1, 3])
def test_round_decimals_is_torchs_exactly(dtype, decimals):
    x = (torch.randn(200, generator=torch.Generator().manual_seed(decimals + 5), dtype=torch.float64) * 300).to(dtype)
    x = torch.cat([x, torch.tensor([0.125, 2.5, -2.5, 0.05, float("inf"), float("nan")], dtype=dtype)])
    want = torch.round(x, decimals=decimals)
    got = torch.empty_like(want)
    run_kernel("aten::round.decimals_out", [x, decimals, got])
    assert torch.equal(got.nan_to_num(), want.nan_to_num())


class Special(torch.nn.Module):
    """A von Mises concentration, a probit link, a Gaussian log-CDF, digamma's derivatives."""

    def forward(self, x, p):
        return (S.i0e(x), S.i1e(x) / S.i0e(x), S.ndtri(p), S.log_ndtr(x), torch.polygamma(2, x.abs() + 0.5),
                S.zeta(x.abs() + 1.5, p + 0.1), torch.round(x, decimals=2), S.bessel_j0(x),
                S.scaled_modified_bessel_k1(x.abs() + 0.1))


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_special_model_matches_torch(kernels):
    g = torch.Generator().manual_seed(3)
    x, p = torch.randn(4, 8, generator=g) * 4, torch.rand(4, 8, generator=g)
    model = Special().eval()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (x, p)), kernels=kernels, progress=False).load()
    for got, want in zip(program.forward(x, p), model(x, p)):
        check(torch.as_tensor(got), want, 4e-6, 1e-5)
