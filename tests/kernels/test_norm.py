"""Normalisation kernels against torch: _native_batch_norm_legit_no_training.out (any rank,
channels-last, optional affine, empty or per-channel saved stats), native_layer_norm.out
(one or more normalized dims, optional affine, mean/rstd outputs) and native_group_norm.out.

Tolerance: float32 rtol 1e-5, atol 1e-5 (statistics accumulate in double, the affine in float);
float64 1e-10; float16/bfloat16 compute in float and round once (rtol 1e-2, atol 1e-2).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)
BN = "aten::_native_batch_norm_legit_no_training.out"
LN = "aten::native_layer_norm.out"
GN = "aten::native_group_norm.out"


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def tol(dtype):
    if dtype == torch.float64:
        return dict(atol=1e-10, rtol=1e-10)
    if dtype in (torch.float16, torch.bfloat16):
        return dict(atol=1e-2, rtol=1e-2)
    return dict(atol=1e-5, rtol=1e-5)


def double(t):
    return None if t is None else t.double()


@pytest.mark.parametrize("shape", [(1, 1), (4, 3), (2, 3, 7), (2, 5, 4, 3), (1, 1, 3, 3),
                                   (3, 300, 2, 2)])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm(shape, affine):
    c = shape[1]
    x, mean, var = rand(*shape), rand(c), torch.rand(c, generator=GEN) + 0.1
    w, b = (rand(c), rand(c)) if affine else (None, None)
    ref = torch.ops.aten._native_batch_norm_legit_no_training(
        x.double(), double(w), double(b), mean.double(), var.double(), 0.1, 1e-5)[0].float()
    out, s1, s2 = torch.empty_like(x), torch.empty(0), torch.empty(0)
    run_kernel(BN, [x, w, b, mean, var, 0.1, 1e-5, out, s1, s2])
    assert_close(out, ref, what=f"batch_norm {shape}", **tol(torch.float32))
    assert s1.numel() == 0 and s2.numel() == 0


def test_batch_norm_channels_last():
    x = rand(2, 6, 5, 4).to(memory_format=torch.channels_last)
    mean, var, w, b = rand(6), torch.rand(6, generator=GEN) + 0.5, rand(6), rand(6)
    out = torch.empty_like(x)
    run_kernel(BN, [x, w, b, mean, var, 0.1, 1e-3, out, torch.empty(0), torch.empty(0)])
    ref = torch.nn.functional.batch_norm(x, mean, var, w, b, False, 0.1, 1e-3)
    assert_close(out, ref, what="batch_norm channels-last", **tol(torch.float32))


def test_batch_norm_fills_per_channel_stats():
    x, mean, var = rand(2, 3, 4), rand(3), torch.rand(3, generator=GEN) + 0.1
    s1, s2 = torch.empty(3), torch.empty(3)
    run_kernel(BN, [x, None, None, mean, var, 0.1, 1e-5, torch.empty_like(x), s1, s2])
    assert_close(s1, mean, what="saved mean", **tol(torch.float32))
    assert_close(s2, (var + 1e-5).rsqrt(), what="saved invstd", **tol(torch.float32))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_batch_norm_dtypes(dtype):
    x = rand(2, 4, 3, 3, dtype=dtype)
    mean, var, w = rand(4), torch.rand(4, generator=GEN) + 0.1, rand(4)  # float32 statistics
    ref = torch.nn.functional.batch_norm(x.double(), mean.double(), var.double(), w.double(),
                                         None, False, 0.1, 1e-5).to(dtype)
    out = torch.empty_like(x)
    run_kernel(BN, [x, w, None, mean, var, 0.1, 1e-5, out, torch.empty(0), torch.empty(0)])
    assert_close(out, ref, what=f"batch_norm {dtype}", **tol(dtype))


def test_batch_norm_rejects_channel_mismatch():
    with pytest.raises(RuntimeError, match=f"{BN}: weight, bias, running_mean"):
        run_kernel(BN, [rand(2, 3, 4), None, None, rand(4), rand(4), 0.1, 1e-5,
                        torch.empty(2, 3, 4), torch.empty(0), torch.empty(0)])


def test_batch_norm_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match=BN):
        run_kernel(BN, [rand(2, 3, 4), None, None, rand(3), rand(3), 0.1, 1e-5,
                        torch.empty(2, 3, 5), torch.empty(0), torch.empty(0)])


def run_layer_norm(x, shape, w, b, eps):
    ref = torch.ops.aten.native_layer_norm(x.double(), shape, double(w), double(b), eps)
    ref = [r.to(x.dtype) for r in ref]
    outs = [torch.empty_like(r) for r in ref]
    run_kernel(LN, [x, shape, w, b, eps, *outs])
    return outs, ref


@pytest.mark.parametrize("shape,norm", [((3, 8), [8]), ((2, 5, 768), [768]), ((4, 3, 5), [3, 5]),
                                        ((1,), [1]), ((7, 1), [1]), ((2, 3, 4), [2, 3, 4])])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm(shape, norm, affine):
    x = rand(*shape) * 3 + 1
    w = rand(*norm) if affine in ("both", "weight") else None
    b = rand(*norm) if affine in ("both", "bias") else None
    outs, ref = run_layer_norm(x, norm, w, b, 1e-5)
    for name, o, r in zip(["out", "mean", "rstd"], outs, ref):
        assert_close(o, r, what=f"layer_norm {shape} {norm} {name}", **tol(torch.float32))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_layer_norm_dtypes(dtype):
    x, w, b = rand(4, 33, dtype=dtype), rand(33, dtype=dtype), rand(33, dtype=dtype)
    outs, ref = run_layer_norm(x, [33], w, b, 1e-5)
    for name, o, r in zip(["out", "mean", "rstd"], outs, ref):
        assert_close(o, r, what=f"layer_norm {dtype} {name}", **tol(dtype))


def test_layer_norm_rejects_shape_mismatch():
    with pytest.raises(RuntimeError, match=f"{LN}: normalized_shape"):
        run_kernel(LN, [rand(2, 3), [4], None, None, 1e-5, torch.empty(2, 3), torch.empty(2, 1),
                        torch.empty(2, 1)])


def test_layer_norm_rejects_wrong_stats_shape():
    with pytest.raises(RuntimeError, match=LN):
        run_kernel(LN, [rand(2, 3), [3], None, None, 1e-5, torch.empty(2, 3), torch.empty(2),
                        torch.empty(2)])


@pytest.mark.parametrize("shape,groups", [((2, 6, 4, 4), 3), ((1, 4, 5), 1), ((3, 8), 8),
                                          ((2, 32, 9, 9), 8)])
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(shape, groups, affine):
    n, c = shape[:2]
    x = rand(*shape) * 2 - 1
    hxw = x.numel() // (n * c)
    w, b = (rand(c), rand(c)) if affine else (None, None)
    ref = torch.ops.aten.native_group_norm(x.double(), double(w), double(b), n, c, hxw, groups,
                                           1e-5)
    ref = [r.float() for r in ref]
    outs = [torch.empty_like(r) for r in ref]
    run_kernel(GN, [x, w, b, n, c, hxw, groups, 1e-5, *outs])
    for name, o, r in zip(["out", "mean", "rstd"], outs, ref):
        assert_close(o, r, what=f"group_norm {shape} g{groups} {name}", **tol(torch.float32))


def test_group_norm_rejects_indivisible_groups():
    with pytest.raises(RuntimeError, match=f"{GN}: 6 channels not divisible into 4 groups"):
        run_kernel(GN, [rand(2, 6, 3), None, None, 2, 6, 3, 4, 1e-5, torch.empty(2, 6, 3),
                        torch.empty(2, 4), torch.empty(2, 4)])
