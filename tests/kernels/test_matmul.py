"""Matmul-like kernels (mm, bmm, addmm, baddbmm, linear) against torch.

All of them run on the shared blocked GEMM, so shapes cover its edges: 1-element, odd sizes
that leave partial register tiles, K and N past one cache block, M == 1 / N == 1 vector
products, transposed operands (dense tensors in a permuted dim order), batch > 1.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) (sums of K products in a different order);
float64 1e-10; float16/bfloat16 accumulate in float and round once, compared with torch's
float result rounded (rtol 1e-2, atol 1e-2 * sqrt(K)); integer dtypes exactly (wrapping as
torch's do).
"""

import math

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def tol(dtype, k):
    if dtype == torch.float64:
        return dict(atol=1e-10, rtol=1e-10)
    if dtype in (torch.float16, torch.bfloat16):
        return dict(atol=1e-2 * math.sqrt(max(k, 1)), rtol=1e-2)
    return dict(atol=1e-4 * math.sqrt(max(k, 1)), rtol=1e-4)


MM_SHAPES = [
    (1, 1, 1),
    (1, 7, 5),  # row vector times matrix
    (6, 1, 9),  # matrix times column vector
    (3, 5, 2),
    (17, 33, 19),
    (4, 8, 300),  # more than one K block
    (130, 70, 31),  # more than one M block
    (5, 2100, 20),  # more than one N block
    (9, 13, 0),  # empty inner dimension: zeros
]


@pytest.mark.parametrize("m,n,k", MM_SHAPES)
def test_mm_shapes(m, n, k):
    a, b = rand(m, k), rand(k, n)
    out = torch.empty(m, n)
    run_kernel("aten::mm.out", [a, b, out])
    assert_close(out, a @ b, what=f"mm {m}x{k}@{k}x{n}", **tol(torch.float32, k))


@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n,k", [(1, 9, 12), (11, 1, 12), (23, 37, 45)])
def test_mm_transposed_operands(ta, tb, m, n, k):
    a = rand(k, m).t() if ta else rand(m, k)
    b = rand(n, k).t() if tb else rand(k, n)
    out = torch.empty(m, n)
    run_kernel("aten::mm.out", [a, b, out])
    assert_close(out, a @ b, what=f"mm ta={ta} tb={tb}", **tol(torch.float32, k))


def test_mm_transposed_out():
    a, b = rand(10, 20), rand(20, 14)
    out = torch.empty(14, 10).t()
    run_kernel("aten::mm.out", [a, b, out])
    assert_close(out, a @ b, what="mm into transposed out", **tol(torch.float32, 20))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("m,n,k", [(1, 9, 40), (13, 21, 40), (9, 40, 600)])
def test_mm_dtypes(dtype, m, n, k):
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    out = torch.empty(m, n, dtype=dtype)
    run_kernel("aten::mm.out", [a, b, out])
    expected = (a.double() @ b.double()).to(dtype)
    assert_close(out, expected, what=f"mm {dtype}", **tol(dtype, k))


@pytest.mark.parametrize("bs,m,n,k", [(1, 1, 1, 1), (3, 5, 7, 9), (12, 16, 16, 8), (2, 1, 33, 64)])
def test_bmm(bs, m, n, k):
    a, b = rand(bs, m, k), rand(bs, k, n)
    out = torch.empty(bs, m, n)
    run_kernel("aten::bmm.out", [a, b, out])
    assert_close(out, torch.bmm(a, b), what=f"bmm {bs}x{m}x{k}x{n}", **tol(torch.float32, k))


def test_bmm_permuted_inputs():
    # attention-style q @ k^T where k^T is a permuted view of a dense tensor
    q = rand(4, 10, 8)
    k = rand(4, 10, 8).transpose(1, 2)
    out = torch.empty(4, 10, 10)
    run_kernel("aten::bmm.out", [q, k, out])
    assert_close(out, torch.bmm(q, k), what="bmm permuted", **tol(torch.float32, 8))


@pytest.mark.parametrize("bias_shape", [(7,), (1, 7), (5, 1), (5, 7), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_addmm(bias_shape, beta, alpha):
    bias, a, b = rand(*bias_shape), rand(5, 11), rand(11, 7)
    out = torch.empty(5, 7)
    run_kernel("aten::addmm.out", [bias, a, b, beta, alpha, out])
    expected = torch.addmm(bias, a, b, beta=beta, alpha=alpha)
    assert_close(out, expected, what=f"addmm bias{bias_shape}", **tol(torch.float32, 11))


def test_addmm_beta_zero_ignores_nan():
    bias = torch.full((4, 3), float("nan"))
    a, b = rand(4, 6), rand(6, 3)
    out = torch.empty(4, 3)
    run_kernel("aten::addmm.out", [bias, a, b, 0, 1, out])
    assert_close(out, a @ b, what="addmm beta=0", **tol(torch.float32, 6))


def test_addmm_half():
    bias, a, b = (rand(9, dtype=torch.float16), rand(6, 50, dtype=torch.float16),
                  rand(50, 9, dtype=torch.float16))
    out = torch.empty(6, 9, dtype=torch.float16)
    run_kernel("aten::addmm.out", [bias, a, b, 1, 1, out])
    expected = torch.addmm(bias.double(), a.double(), b.double()).half()
    assert_close(out, expected, what="addmm half", **tol(torch.float16, 50))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (2, 0.5), (0, 1)])
def test_baddbmm(beta, alpha):
    bias, a, b = rand(3, 1, 6), rand(3, 4, 5), rand(3, 5, 6)
    out = torch.empty(3, 4, 6)
    run_kernel("aten::baddbmm.out", [bias, a, b, beta, alpha, out])
    expected = torch.baddbmm(bias, a, b, beta=beta, alpha=alpha)
    assert_close(out, expected, what="baddbmm", **tol(torch.float32, 5))


@pytest.mark.parametrize("in_shape,out_features", [((3, 10), 4), ((2, 5, 10), 7), ((10,), 3),
                                                    ((1, 1), 1), ((4, 0), 3), ((9, 64), 200)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_linear(in_shape, out_features, with_bias):
    x = rand(*in_shape)
    w = rand(out_features, in_shape[-1])
    bias = rand(out_features) if with_bias else None
    out = torch.empty(*in_shape[:-1], out_features)
    run_kernel("aten::linear.out", [x, w, bias, out])
    expected = torch.nn.functional.linear(x, w, bias)
    assert_close(out, expected, what=f"linear {in_shape}->{out_features}",
                 **tol(torch.float32, in_shape[-1]))


def test_linear_transformer_size():
    x, w, bias = rand(128, 768), rand(3072, 768), rand(3072)
    out = torch.empty(128, 3072)
    run_kernel("aten::linear.out", [x, w, bias, out])
    assert_close(out, torch.nn.functional.linear(x, w, bias), what="linear 128x768->3072",
                 **tol(torch.float32, 768))


@pytest.mark.parametrize("x", [rand(10, 3).t(), rand(1, 4, 8).transpose(0, 1)],
                         ids=["transposed 2-D", "size-1 dim out of order"])
def test_linear_dense_permuted_inputs(x):
    w, bias = rand(6, x.shape[-1]), rand(6)
    out = torch.empty(*x.shape[:-1], 6)
    run_kernel("aten::linear.out", [x, w, bias, out])
    assert_close(out, torch.nn.functional.linear(x, w, bias), what="linear permuted input",
                 **tol(torch.float32, x.shape[-1]))


def test_linear_rejects_unflattenable_input():
    x = rand(5, 2, 10).transpose(0, 1)
    with pytest.raises(RuntimeError, match="aten::linear.out: leading dims"):
        run_kernel("aten::linear.out", [x, rand(3, 10), None, torch.empty(2, 5, 3)])


def test_linear_bfloat16():
    x, w, bias = (rand(5, 32, dtype=torch.bfloat16), rand(6, 32, dtype=torch.bfloat16),
                  rand(6, dtype=torch.bfloat16))
    out = torch.empty(5, 6, dtype=torch.bfloat16)
    run_kernel("aten::linear.out", [x, w, bias, out])
    expected = torch.nn.functional.linear(x.double(), w.double(), bias.double()).bfloat16()
    assert_close(out, expected, what="linear bf16", **tol(torch.bfloat16, 32))


def test_mm_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match="aten::mm.out"):
        run_kernel("aten::mm.out", [rand(2, 3), rand(3, 4), torch.empty(2, 5)])


def test_mm_rejects_inner_mismatch():
    with pytest.raises(RuntimeError, match="aten::mm.out: cannot multiply 2x3 by 4x4"):
        run_kernel("aten::mm.out", [rand(2, 3), rand(4, 4), torch.empty(2, 4)])


def test_mm_rejects_mixed_dtypes():
    with pytest.raises(RuntimeError, match="aten::mm.out: input dtype"):
        run_kernel("aten::mm.out", [rand(2, 3), rand(3, 4).double(), torch.empty(2, 4)])


INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def rand_int(*shape, dtype):
    """Values over the dtype's whole range, so products and sums wrap as torch's do."""
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=GEN, dtype=torch.int64).to(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_matmuls_wrap_as_torch(dtype):
    # torch's CPU integer GEMM multiplies and adds in the dtype: results are exact modulo 2^bits.
    a, b = rand_int(5, 7, dtype=dtype), rand_int(7, 3, dtype=dtype)
    out = torch.empty(5, 3, dtype=dtype)
    run_kernel("aten::mm.out", [a, b.t().contiguous().t(), out])  # transposed mat2 too
    assert torch.equal(out, torch.mm(a, b)), dtype
    bias = rand_int(3, dtype=dtype)
    for beta, alpha in [(1, 1), (2, 3), (0, 1)]:
        run_kernel("aten::addmm.out", [bias, a, b, beta, alpha, out])
        assert torch.equal(out, torch.addmm(bias, a, b, beta=beta, alpha=alpha)), (dtype, beta, alpha)
    ba, bb = rand_int(2, 4, 6, dtype=dtype), rand_int(2, 6, 3, dtype=dtype)
    bout = torch.empty(2, 4, 3, dtype=dtype)
    run_kernel("aten::bmm.out", [ba, bb, bout])
    assert torch.equal(bout, torch.bmm(ba, bb)), dtype
    bbias = rand_int(2, 1, 3, dtype=dtype)
    run_kernel("aten::baddbmm.out", [bbias, ba, bb, 3, 2, bout])
    assert torch.equal(bout, torch.baddbmm(bbias, ba, bb, beta=3, alpha=2)), dtype


def test_mm_rejects_bool():
    a = torch.ones(2, 2, dtype=torch.bool)
    with pytest.raises(RuntimeError, match="aten::mm.out: dtype bool not supported"):
        run_kernel("aten::mm.out", [a, a, torch.empty(2, 2, dtype=torch.bool)])


def test_bmm_rejects_batch_mismatch():
    with pytest.raises(RuntimeError, match="aten::bmm.out"):
        run_kernel("aten::bmm.out", [rand(2, 3, 4), rand(3, 4, 5), torch.empty(2, 3, 5)])


def test_addmm_rejects_bad_bias():
    with pytest.raises(RuntimeError, match="aten::addmm.out: bias"):
        run_kernel("aten::addmm.out", [rand(3), rand(2, 4), rand(4, 5), 1, 1, torch.empty(2, 5)])


def test_linear_rejects_feature_mismatch():
    with pytest.raises(RuntimeError, match="aten::linear.out: input has 5 features"):
        run_kernel("aten::linear.out", [rand(2, 5), rand(3, 4), None, torch.empty(2, 3)])
