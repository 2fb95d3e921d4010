"""zeros, ones, zeros_like, ones_like, empty, empty_like, empty_strided, _empty_dim_order,
rand, randn, rand_like, randn_like, copy and lift_fresh_copy against torch.

Exact comparisons for the fills and copies. empty* only promise a shape (their contents are
unspecified in torch too). The random kernels draw from pteron's own seeded generator, so
torch's values are not expected: the test checks shape, dtype, range, that successive calls
differ, and the moments of 100k draws: uniform mean 0.5 +- 0.005 and variance 1/12 +- 0.002,
normal mean 0 +- 0.015 and variance 1 +- 0.02 (each more than 4 standard errors), and a
Kolmogorov-Smirnov distance under 0.01 (the 1e-4 critical value for n = 1e5 is ~0.0064).
"""

import math

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, with_dim_order

SIZES = [[], [0], [3], [2, 3, 4], [1, 0, 5]]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zeros_ones(dtype):
    for size in SIZES:
        for name, fn in (("zeros", torch.zeros), ("ones", torch.ones)):
            out = torch.full(size, 7, dtype=dtype) if dtype != torch.bool else torch.empty(size, dtype=dtype)
            run_kernel(f"aten::{name}.out", [size, out])
            assert torch.equal(out, fn(size, dtype=dtype)), (name, size)
    g = torch.Generator().manual_seed(1)
    x = rand((2, 3, 4, 5), dtype, g)
    for name, fn in (("zeros_like", torch.zeros_like), ("ones_like", torch.ones_like)):
        out = with_dim_order(torch.empty(x.shape, dtype=dtype), [0, 2, 3, 1])
        run_kernel(f"aten::{name}.out", [x, None, out])
        assert torch.equal(out, fn(x)), name


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_empty_family_checks_shapes(dtype):
    x = torch.empty(2, 3, dtype=dtype)
    run_kernel("aten::empty.out", [[2, 3], None, torch.empty(2, 3, dtype=dtype)])
    run_kernel("aten::empty_like.out", [x, None, torch.empty(2, 3, dtype=dtype)])
    run_kernel("aten::empty_strided.out", [[2, 3], [3, 1], torch.empty(2, 3, dtype=dtype)])
    run_kernel("dim_order_ops::_empty_dim_order.out", [[2, 3], None, torch.empty(2, 3, dtype=dtype)])
    cl = torch.empty(1, 2, 3, 4, dtype=dtype).to(memory_format=torch.channels_last)
    run_kernel("dim_order_ops::_empty_dim_order.out", [[1, 2, 3, 4], [0, 2, 3, 1], cl])


def test_creation_rejects_bad_arguments():
    out = torch.empty(2, 3)
    with pytest.raises(RuntimeError, match=r"aten::zeros.out: .*shape"):
        run_kernel("aten::zeros.out", [[3, 2], out])
    with pytest.raises(RuntimeError, match="aten::ones.out: size -1 at dim 0 is invalid"):
        run_kernel("aten::ones.out", [[-1, 3], out])
    with pytest.raises(RuntimeError, match="aten::empty_strided.out: 1 strides for 2 sizes"):
        run_kernel("aten::empty_strided.out", [[2, 3], [1], out])
    with pytest.raises(RuntimeError, match="aten::empty_strided.out: stride -3 at dim 0 is negative"):
        run_kernel("aten::empty_strided.out", [[2, 3], [-3, 1], out])
    with pytest.raises(RuntimeError, match="_empty_dim_order.out: dim_order entry 1 is 2 but out's is 1"):
        run_kernel("dim_order_ops::_empty_dim_order.out", [[1, 2, 3, 4], [0, 2, 3, 1], torch.empty(1, 2, 3, 4)])
    with pytest.raises(RuntimeError, match="_empty_dim_order.out: dim_order has 2 entries"):
        run_kernel("dim_order_ops::_empty_dim_order.out", [[2, 3, 1], [0, 1], torch.empty(2, 3, 1)])
    with pytest.raises(RuntimeError, match="aten::rand.out: out dtype int32 is not floating"):
        run_kernel("aten::rand.out", [[3], torch.empty(3, dtype=torch.int32)])
    with pytest.raises(RuntimeError, match=r"aten::randn_like.out: .*shape"):
        run_kernel("aten::randn_like.out", [torch.empty(2), None, torch.empty(3)])


def ks_distance(samples, cdf):
    s, _ = torch.sort(samples.double())
    n = s.numel()
    f = cdf(s)
    hi = torch.arange(1, n + 1, dtype=torch.float64) / n
    lo = torch.arange(0, n, dtype=torch.float64) / n
    return max((hi - f).abs().max().item(), (f - lo).abs().max().item())


def normal_cdf(x):
    return 0.5 * (1 + torch.erf(x / math.sqrt(2)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_rand_randn_distributions(dtype):
    n = 100_000
    u = torch.empty(n, dtype=dtype)
    run_kernel("aten::rand.out", [[n], u])
    assert u.min() >= 0 and u.max() < 1, "rand is in [0, 1)"
    ud = u.double()
    assert abs(ud.mean().item() - 0.5) < 0.005
    assert abs(ud.var().item() - 1 / 12) < 0.002
    if dtype in (torch.float32, torch.float64):
        assert ks_distance(u, lambda s: s.clamp(0, 1)) < 0.01
    z = torch.empty(n, dtype=dtype)
    run_kernel("aten::randn.out", [[n], z])
    zd = z.double()
    assert torch.isfinite(zd).all()
    assert abs(zd.mean().item()) < 0.015
    assert abs(zd.var().item() - 1) < 0.02
    if dtype in (torch.float32, torch.float64):
        assert ks_distance(z, normal_cdf) < 0.01


def test_random_calls_differ_and_like_forms_fill_every_layout():
    a, b = torch.empty(1000), torch.empty(1000)
    run_kernel("aten::rand.out", [[1000], a])
    run_kernel("aten::rand.out", [[1000], b])
    assert not torch.equal(a, b), "two calls draw different numbers"
    x = torch.empty(4, 5, 6, 7)
    for name in ("rand_like", "randn_like"):
        out = with_dim_order(torch.full(x.shape, math.nan), [0, 2, 3, 1])
        run_kernel(f"aten::{name}.out", [x, None, out])
        assert torch.isfinite(out).all(), name
        assert out.unique().numel() > 800, name
    empty = torch.empty(0, 3)
    run_kernel("aten::randn.out", [[0, 3], empty])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_copy_broadcasts_and_converts(dtype):
    g = torch.Generator().manual_seed(2)
    self_ = rand((2, 3, 4), dtype, g)
    for src_shape, src_dtype in [((2, 3, 4), dtype), ((4,), torch.float32), ((3, 1), torch.int64),
                                 ((), torch.bool)]:
        src = rand(src_shape, src_dtype, g).abs() if src_dtype != torch.bool else rand(src_shape, src_dtype, g)
        expected = self_.clone().copy_(src)
        out = with_dim_order(torch.empty(2, 3, 4, dtype=dtype), [2, 0, 1])
        run_kernel("aten::copy.out", [self_, src, False, out])
        assert torch.equal(out, expected), (src_shape, src_dtype)
    x = with_dim_order(rand((2, 3, 4, 5), dtype, g), [0, 2, 3, 1])
    out = torch.empty(x.shape, dtype=dtype)
    run_kernel("aten::lift_fresh_copy.out", [x, out])
    assert torch.equal(out, x)
    e = torch.empty(0, 3, dtype=dtype)
    run_kernel("aten::lift_fresh_copy.out", [e, torch.empty(0, 3, dtype=dtype)])


def test_copy_rejects_bad_arguments():
    x = torch.rand(2, 3)
    with pytest.raises(RuntimeError, match="aten::copy.out: src size 4 at dim 0 does not broadcast to 3"):
        run_kernel("aten::copy.out", [x, torch.rand(4), False, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match="aten::copy.out: src of rank 3 does not broadcast"):
        run_kernel("aten::copy.out", [x, torch.rand(5, 2, 3), False, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match="aten::copy.out: out has dtype"):
        run_kernel("aten::copy.out", [x, x, False, torch.empty(2, 3, dtype=torch.float64)])
    with pytest.raises(RuntimeError, match="aten::lift_fresh_copy.out: out has dtype"):
        run_kernel("aten::lift_fresh_copy.out", [x, torch.empty(2, 3, dtype=torch.int32)])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.uint8, torch.float32, torch.float64,
                                   torch.float16])
def test_randperm(dtype):
    for n in (0, 1, 2, 7, 200):
        out = torch.empty(n, dtype=dtype)
        run_kernel("aten::randperm.out", [n, out])
        assert torch.equal(torch.sort(out.long()).values, torch.arange(n)), (dtype, n)
    a, b = torch.empty(100, dtype=dtype), torch.empty(100, dtype=dtype)
    run_kernel("aten::randperm.out", [100, a])
    run_kernel("aten::randperm.out", [100, b])
    assert not torch.equal(a, b)


def test_randperm_is_uniform_and_checks_arguments():
    # Position of element 0 over 6000 permutations of 6: each place within 5 standard errors.
    counts = torch.zeros(6)
    out = torch.empty(6, dtype=torch.int64)
    for _ in range(6000):
        run_kernel("aten::randperm.out", [6, out])
        counts[int((out == 0).nonzero())] += 1
    assert ((counts - 1000).abs() < 5 * math.sqrt(1000 * 5 / 6)).all(), counts
    with pytest.raises(RuntimeError, match="n must be non-negative"):
        run_kernel("aten::randperm.out", [-1, torch.empty(0, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match="n 300 is too large for dtype uint8"):
        run_kernel("aten::randperm.out", [300, torch.empty(300, dtype=torch.uint8)])
    with pytest.raises(RuntimeError, match=r"aten::randperm.out: .*shape"):
        run_kernel("aten::randperm.out", [5, torch.empty(4, dtype=torch.int64)])
