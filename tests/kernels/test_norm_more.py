"""_native_batch_norm_legit (training-mode statistics, with and without running stats),
native_dropout (inference and training semantics), glu, logit, _cdist_forward and
_pdist_forward against torch.

Tolerances: float32 within 1e-5 relative / 1e-5 absolute (statistics accumulate in double here,
in float in torch); float64 1e-10; float16 / bfloat16 one storage ulp (2e-3 / 1.6e-2 relative).
cdist with p = 2 on more than 25 rows: torch uses a matmul expansion (error ~1e-6 of the squared
norms), so 1e-4 absolute there. Dropout's random mask is pteron's own: the test checks the
kept fraction (1 - p within 0.01 over 100k elements, > 4 standard errors), that kept values are
input / (1 - p) and dropped ones 0.
"""

import math

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import with_dim_order

FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def tol(dtype):
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2),
            torch.float64: (1e-10, 1e-10)}.get(dtype, (1e-5, 1e-5))


def close(out, expected, what, atol=None):
    a, r = tol(expected.dtype)
    torch.testing.assert_close(out, expected, atol=atol if atol is not None else a, rtol=r,
                               equal_nan=True, msg=lambda m: f"{what}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("shape,order", [((4, 3, 5, 6), None), ((4, 3, 5, 6), [0, 2, 3, 1]),
                                         ((8, 5), None), ((2, 4, 7), None), ((1, 3, 1, 1), None)])
@pytest.mark.parametrize("affine", [False, True])
def test_batch_norm_training_no_stats(dtype, shape, order, affine):
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(shape, generator=g, dtype=dtype) * 2 + 0.5)
    C = shape[1]
    w = torch.randn(C, generator=g, dtype=dtype) if affine else None
    b = torch.randn(C, generator=g, dtype=dtype) if affine else None
    out, mean, invstd = torch.ops.aten._native_batch_norm_legit.no_stats(x, w, b, True, 0.1, 1e-5)
    xs = with_dim_order(x, order) if order else x
    o = with_dim_order(torch.empty_like(out), order) if order else torch.empty_like(out)
    m, s = torch.empty_like(mean), torch.empty_like(invstd)
    run_kernel("aten::_native_batch_norm_legit.no_stats_out", [xs, w, b, True, 0.1, 1e-5, o, m, s])
    # invstd (up to 1/sqrt(eps) = 316) amplifies torch's float32 rounding of x - mean.
    close(o, out, "out", atol=1e-4 if dtype == torch.float32 else None)
    close(m, mean, "save_mean")
    close(s, invstd, "save_invstd", atol=1e-4 if dtype == torch.float32 else None)


@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_with_running_stats(training):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 4, 3, 3, generator=g) * 3 - 1
    w, b = torch.randn(4, generator=g), torch.randn(4, generator=g)
    rm, rv = torch.randn(4, generator=g), torch.rand(4, generator=g) + 0.5
    rm_t, rv_t = rm.clone(), rv.clone()
    out, mean, invstd = torch.ops.aten._native_batch_norm_legit(x, w, b, rm_t, rv_t, training, 0.2, 1e-3)
    rm_p, rv_p = rm.clone(), rv.clone()
    o, m, s = torch.empty_like(out), torch.empty_like(mean), torch.empty_like(invstd)
    run_kernel("aten::_native_batch_norm_legit.out", [x, w, b, rm_p, rv_p, training, 0.2, 1e-3, o, m, s])
    close(o, out, "out")
    close(rm_p, rm_t, "running_mean updated in place")
    close(rv_p, rv_t, "running_var updated in place")
    if training:
        close(m, mean, "save_mean")
        close(s, invstd, "save_invstd", atol=1e-4)
    else:
        assert mean.numel() == 0 and m.numel() == 0  # torch returns empty stats here


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_batch_norm_half_types(dtype):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 3, 5, generator=g).to(dtype)
    out, mean, invstd = torch.ops.aten._native_batch_norm_legit.no_stats(x.float(), None, None, True, 0.1, 1e-5)
    o = torch.empty_like(x)
    m, s = torch.empty(3), torch.empty(3)
    run_kernel("aten::_native_batch_norm_legit.no_stats_out", [x, None, None, True, 0.1, 1e-5, o, m, s])
    close(o, out.to(dtype), "out")
    close(m, mean, "mean", atol=1e-5)


def test_batch_norm_rejects_bad_arguments():
    x = torch.randn(4, 3, 5)
    stat = torch.empty(3)
    cases = [
        ([torch.randn(5), None, None, True, 0.1, 1e-5, torch.empty(5), stat, stat], "at least 2 dims"),
        ([x, torch.randn(4), None, True, 0.1, 1e-5, torch.empty(4, 3, 5), stat, stat], "must have 3 floating"),
        ([x, None, None, True, 0.1, 1e-5, torch.empty(4, 3, 5), torch.empty(2), stat], "save_mean/save_invstd must have 3"),
        ([x, None, None, False, 0.1, 1e-5, torch.empty(4, 3, 5), stat, stat], "training=False needs running stats"),
        ([x, None, None, True, 0.1, 1e-5, torch.empty(4, 5, 3), stat, stat], "shape"),
    ]
    for args, pattern in cases:
        with pytest.raises(RuntimeError, match=pattern):
            run_kernel("aten::_native_batch_norm_legit.no_stats_out", args)


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_dropout(dtype):
    x = torch.rand(100_000).to(dtype) + 0.5
    for p in (0.0, 0.3, 0.5, 0.9):
        out, mask = torch.empty_like(x), torch.empty(x.shape, dtype=torch.bool)
        run_kernel("aten::native_dropout.out", [x, p, True, out, mask])
        kept = mask.double().mean().item()
        assert abs(kept - (1 - p)) < 0.01, (p, kept)
        close(out[mask], (x[mask].double() / (1 - p)).to(dtype), f"kept values p={p}")
        assert (out[~mask] == 0).all()
    out, mask = torch.empty_like(x), torch.empty(x.shape, dtype=torch.bool)
    run_kernel("aten::native_dropout.out", [x, 1.0, None, out, mask])  # train None means True
    assert not mask.any() and (out == 0).all()
    # Inference: identity and an all-true mask, like torch.
    expected, expected_mask = torch.native_dropout(x, 0.5, False)
    run_kernel("aten::native_dropout.out", [x, 0.5, False, out, mask])
    assert torch.equal(out, expected) and torch.equal(mask, expected_mask)


def test_native_dropout_layouts_and_errors():
    x = torch.rand(2, 3, 4, 5) + 1
    xs = with_dim_order(x, [0, 2, 3, 1])
    out = with_dim_order(torch.empty_like(x), [3, 2, 1, 0])
    mask = torch.empty(x.shape, dtype=torch.bool)
    run_kernel("aten::native_dropout.out", [xs, 0.5, True, out, mask])
    assert torch.equal(out, torch.where(mask, x * 2, torch.zeros_like(x)))
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, got 1.5"):
        run_kernel("aten::native_dropout.out", [x, 1.5, True, out, mask])
    with pytest.raises(RuntimeError, match="mask out must be Bool"):
        run_kernel("aten::native_dropout.out", [x, 0.5, True, out, torch.empty(x.shape)])
    with pytest.raises(RuntimeError, match="needs a floating input"):
        i = torch.ones(3, dtype=torch.int32)
        run_kernel("aten::native_dropout.out", [i, 0.5, True, torch.empty_like(i), torch.empty(3, dtype=torch.bool)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_glu(dtype):
    g = torch.Generator().manual_seed(4)
    x = (torch.randn(4, 6, 8, generator=g) * 3).to(dtype)
    for dim in (0, 1, -1):
        expected = torch.nn.functional.glu(x, dim)
        out = with_dim_order(torch.empty_like(expected), [2, 0, 1])
        run_kernel("aten::glu.out", [with_dim_order(x, [1, 2, 0]), dim, out])
        close(out, expected, f"glu dim {dim}")
    e = torch.empty(0, 4, dtype=dtype)
    run_kernel("aten::glu.out", [e, 1, torch.empty(0, 2, dtype=dtype)])
    with pytest.raises(RuntimeError, match="halving dim 0 must have an even size, got 3"):
        run_kernel("aten::glu.out", [torch.rand(3, 2), 0, torch.empty(1, 2)])
    with pytest.raises(RuntimeError, match="glu.out: .*shape"):
        run_kernel("aten::glu.out", [torch.rand(4, 2), 0, torch.empty(4, 1)])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool])
def test_logit(dtype):
    g = torch.Generator().manual_seed(5)
    x = torch.rand(5, 7, generator=g).to(dtype) if dtype.is_floating_point else torch.randint(0, 2, (5, 7), generator=g).to(dtype)
    # Integer inputs are 0 and 1: clamped to 1 - 1e-6, the result is ill-conditioned in
    # float32 (torch rounds 1 - eps to float first, pteron computes it in double).
    for eps in (None, 1e-6, 0.1, 0.6) if dtype.is_floating_point else (None, 0.1, 0.6):
        expected = torch.logit(x, eps)
        out = torch.empty_like(expected)
        run_kernel("aten::logit.out", [x, eps, out])
        close(out, expected, f"logit eps={eps}")
    edges = torch.tensor([0.0, 1.0, -0.5, 1.5, 0.5, math.nan])
    for eps in (None, 0.25):
        out = torch.empty(6)
        run_kernel("aten::logit.out", [edges, eps, out])
        close(out, torch.logit(edges, eps), f"logit edges eps={eps}")


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, math.inf])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cdist(p, dtype):
    g = torch.Generator().manual_seed(6)
    for s1, s2 in [((5, 3), (4, 3)), ((2, 5, 3), (2, 4, 3)), ((2, 1, 6, 4), (3, 7, 4)), ((30, 8), (27, 8)),
                   ((0, 3), (4, 3)), ((2, 5, 0), (2, 4, 0))]:
        a = torch.randn(s1, generator=g, dtype=dtype)
        b = torch.randn(s2, generator=g, dtype=dtype)
        expected = torch.cdist(a, b, p)
        out = torch.empty_like(expected)
        run_kernel("aten::_cdist_forward.out", [a, b, p, None, out])
        big = p == 2.0 and (s1[-2] > 25 or s2[-2] > 25)
        close(out, expected, f"cdist p={p} {s1} {s2}", atol=1e-4 if big else None)
    a = with_dim_order(torch.randn(3, 4, 5, generator=g, dtype=dtype), [0, 2, 1])
    b = torch.randn(3, 6, 5, generator=g, dtype=dtype)
    out = with_dim_order(torch.empty(3, 4, 6, dtype=dtype), [2, 0, 1])
    run_kernel("aten::_cdist_forward.out", [a, b, p, 2, out])
    close(out, torch.cdist(a, b, p, compute_mode="donot_use_mm_for_euclid_dist"), "cdist layouts")


def test_cdist_rejects_bad_arguments():
    a, b = torch.randn(5, 3), torch.randn(4, 2)
    with pytest.raises(RuntimeError, match="same number of columns, got 3 and 2"):
        run_kernel("aten::_cdist_forward.out", [a, b, 2.0, None, torch.empty(5, 4)])
    with pytest.raises(RuntimeError, match="p must be >= 0"):
        run_kernel("aten::_cdist_forward.out", [a, a, -1.0, None, torch.empty(5, 5)])
    with pytest.raises(RuntimeError, match="batch dims do not broadcast"):
        run_kernel("aten::_cdist_forward.out", [torch.randn(2, 5, 3), torch.randn(3, 4, 3), 2.0, None, torch.empty(2, 5, 4)])
    with pytest.raises(RuntimeError, match="at least 2 dims"):
        run_kernel("aten::_cdist_forward.out", [torch.randn(3), a, 2.0, None, torch.empty(1)])


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.5, math.inf])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_pdist(p, dtype):
    g = torch.Generator().manual_seed(7)
    for n, m in [(6, 4), (2, 3), (1, 5), (0, 3), (9, 1)]:
        x = torch.randn(n, m, generator=g, dtype=dtype)
        expected = torch.nn.functional.pdist(x, p)
        out = torch.empty_like(expected)
        run_kernel("aten::_pdist_forward.out", [x, p, out])
        close(out, expected, f"pdist p={p} {n}x{m}")
    xt = torch.randn(4, 6, generator=g, dtype=dtype).t()  # column-major
    out = torch.empty(15, dtype=dtype)
    run_kernel("aten::_pdist_forward.out", [xt, p, out])
    close(out, torch.nn.functional.pdist(xt.contiguous(), p), "pdist column-major")
    with pytest.raises(RuntimeError, match="self must be 2-D"):
        run_kernel("aten::_pdist_forward.out", [torch.randn(3), p, torch.empty(0)])
