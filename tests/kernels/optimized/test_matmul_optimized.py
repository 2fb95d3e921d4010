"""The optimized matmul kernels (linear, mm, addmm, bmm) against torch, called from the
"optimized" library.

float32 runs the optimized SGEMM with this machine's best micro-kernel, threaded (1 and 2
threads): shapes cover OPT-125M's layers (128 tokens x 768/3072), the last-token LM-head row
vector (threaded dot products), attention batches, and the edges: 1 and 0 sizes, odd sizes that
leave partial register tiles, K past one K block, transposed operands, biases of every
broadcastable shape, alpha/beta. Other dtypes go to the portable kernel. Errors name the op.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) (sums of K products in another order; the
model-level bound is 1e-4 relative to PyTorch); float64 1e-10. Results do not depend on the
thread count (bitwise).
"""

import math

import pteron_native
import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def tol(k, dtype=torch.float32):
    if dtype == torch.float64:
        return dict(atol=1e-10, rtol=1e-10)
    return dict(atol=1e-4 * math.sqrt(max(k, 1)), rtol=1e-4)


def run(name, args):
    run_kernel(name, args, library="optimized")


LINEAR_SHAPES = [  # (leading dims of input, in_features, out_features)
    ((128,), 768, 768),
    ((1, 128), 768, 3072),
    ((128,), 3072, 768),
    ((1,), 768, 5000),  # row vector: threaded dot products
    ((1,), 37, 3),
    ((2, 3, 5), 17, 29),
    ((13,), 1, 7),
    ((7,), 300, 1),
    ((0,), 8, 4),
    ((4,), 0, 6),
]


@pytest.mark.parametrize("lead,k,n", LINEAR_SHAPES)
@pytest.mark.parametrize("bias", [False, True])
def test_linear(threads, lead, k, n, bias):
    x, w = rand(*lead, k), rand(n, k)
    b = rand(n) if bias else None
    out = torch.empty(*lead, n)
    run("aten::linear.out", [x, w, b, out])
    assert_close(out, torch.nn.functional.linear(x, w, b), what=f"linear {lead}x{k}->{n}",
                 **tol(k))


@pytest.mark.parametrize("bias_shape", [(1,), (5, 1), (3, 5, 9)])
def test_linear_broadcast_bias(bias_shape):
    x, w, b = rand(3, 5, 20), rand(9, 20), rand(*bias_shape)
    out = torch.empty(3, 5, 9)
    run("aten::linear.out", [x, w, b, out])
    assert_close(out, torch.nn.functional.linear(x, w) + b, what=f"bias {bias_shape}", **tol(20))


def test_linear_transposed_weight_and_input():
    x, w = rand(40, 33).t(), rand(40, 50).t()  # input [33, 40] and weight [50, 40], permuted
    out = torch.empty(33, 50)
    run("aten::linear.out", [x, w, None, out])
    assert_close(out, torch.nn.functional.linear(x, w), what="transposed", **tol(40))


MM_SHAPES = [(1, 1, 1), (1, 7, 5), (6, 1, 9), (17, 33, 19), (130, 70, 300), (5, 2100, 20),
             (9, 13, 0), (0, 4, 3)]


@pytest.mark.parametrize("m,n,k", MM_SHAPES)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, True)])
def test_mm(threads, m, n, k, ta, tb):
    a = rand(k, m).t() if ta else rand(m, k)
    b = rand(n, k).t() if tb else rand(k, n)
    out = torch.empty(m, n)
    run("aten::mm.out", [a, b, out])
    assert_close(out, a @ b, what=f"mm {m}x{k}@{k}x{n}", **tol(k))


@pytest.mark.parametrize("self_shape", [(40,), (1, 40), (23, 40), (23, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1.0, 1.0), (0.0, 1.0), (0.5, 2.0), (1, -1.5)])
def test_addmm(threads, self_shape, beta, alpha):
    s, a, b = rand(*self_shape), rand(23, 300), rand(300, 40)
    out = torch.empty(23, 40)
    run("aten::addmm.out", [s, a, b, beta, alpha, out])
    assert_close(out, torch.addmm(s, a, b, beta=beta, alpha=alpha),
                 what=f"addmm self {self_shape} beta {beta} alpha {alpha}", **tol(300))


def test_addmm_beta_zero_ignores_nan_in_self():
    s, a, b = torch.full((5,), float("nan")), rand(4, 6), rand(6, 5)
    out = torch.empty(4, 5)
    run("aten::addmm.out", [s, a, b, 0.0, 1.0, out])
    assert_close(out, a @ b, what="addmm beta 0", **tol(6))


@pytest.mark.parametrize("bt,m,k,n", [(12, 128, 64, 128), (12, 128, 128, 64), (3, 5, 7, 9),
                                      (1, 1, 16, 33), (2, 0, 3, 4), (4, 6, 0, 5)])
def test_bmm(threads, bt, m, k, n):
    a, b = rand(bt, m, k), rand(bt, k, n)
    out = torch.empty(bt, m, n)
    run("aten::bmm.out", [a, b, out])
    assert_close(out, torch.bmm(a, b), what=f"bmm {bt}x{m}x{k}x{n}", **tol(k))


@pytest.mark.parametrize("bt,m,k,n", [(23040, 16, 8, 1), (100, 2, 2, 2), (64, 3, 5, 4), (17, 9, 7, 6),
                                      (16, 1, 128, 16), (200, 8, 1, 3)])
def test_bmm_of_many_tiny_matrices(threads, bt, m, k, n):
    # At most 2048 multiply-adds an entry: direct loops per entry (capsule routing's products),
    # with A and B as stored and transposed.
    for ta in (False, True):
        for tb in (False, True):
            a = rand(bt, k, m).transpose(1, 2) if ta else rand(bt, m, k)
            b = rand(bt, n, k).transpose(1, 2) if tb else rand(bt, k, n)
            out = torch.full((bt, m, n), 7.0)
            run("aten::bmm.out", [a, b, out])
            assert_close(out, torch.bmm(a, b), what=f"bmm {bt}x{m}x{k}x{n} ta={ta} tb={tb}", **tol(k))


def test_bmm_permuted_operands():
    # Attention's k^T: a permuted view, not a contiguous copy.
    q, k = rand(12, 128, 64), rand(12, 128, 64)
    kt = k.transpose(1, 2)
    out = torch.empty(12, 128, 128)
    run("aten::bmm.out", [q, kt, out])
    assert_close(out, torch.bmm(q, kt), what="bmm q @ k^T", **tol(64))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_other_dtypes_use_the_portable_kernel(dtype):
    a, b, bias = rand(9, 30, dtype=dtype), rand(11, 30, dtype=dtype), rand(11, dtype=dtype)
    out, expected = torch.empty(9, 11, dtype=dtype), torch.empty(9, 11, dtype=dtype)
    run("aten::linear.out", [a, b, bias, out])
    run_kernel("aten::linear.out", [a, b, bias, expected], library="portable")
    assert torch.equal(out, expected)


@pytest.mark.parametrize("name,args,match", [
    ("aten::mm.out", lambda: [rand(3, 4), rand(5, 6), torch.empty(3, 6)], "cannot multiply"),
    ("aten::bmm.out", lambda: [rand(2, 3, 4), rand(3, 4, 5), torch.empty(2, 3, 5)], "batches"),
    ("aten::linear.out", lambda: [rand(3, 4), rand(5, 4), None, torch.empty(3, 6)], "out"),
    ("aten::addmm.out", lambda: [rand(7), rand(3, 4), rand(4, 5), 1.0, 1.0, torch.empty(3, 5)],
     "broadcast"),
    ("aten::mm.out", lambda: [rand(3, 4), rand(4, 5).to(torch.float64), torch.empty(3, 5)],
     "dtype"),
])
def test_bad_arguments_name_the_op(name, args, match):
    with pytest.raises(RuntimeError, match=rf"{name}.*{match}|{match}.*{name}"):
        run(name, args())


def test_results_do_not_depend_on_the_thread_count():
    # Every output element is summed by one task in the same K order, whatever the threads.
    x, w, b = rand(128, 768), rand(768, 768), rand(768)
    outs = []
    for n in (1, 2, 3):
        pteron_native.set_num_threads(n)
        outs.append(torch.empty(128, 768))
        run("aten::linear.out", [x, w, b, outs[-1]])
    pteron_native.set_num_threads(0)
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2])
