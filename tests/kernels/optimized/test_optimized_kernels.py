"""Optimized kernels (library "optimized") against torch, on the shapes their fast paths take
and on inputs they hand to the portable kernels (other dtypes, dims, layouts).

Tolerances (float32): add/sub/mul/relu/permute/embedding exact to 1e-6; div 1e-6 relative;
layer_norm atol 1e-5 (single-precision sums in a different order); gelu "tanh" atol 1e-6,
gelu "none" atol 3e-6 (erf within 1.5e-7, times x/2 for |x| up to ~20); softmax 1e-6,
log_softmax 1e-5; sdpa atol 1e-5 (blocked online softmax reorders the sums).
"""

import math

import pteron_native
import pytest
import torch
from kernel_harness import assert_close, run_kernel
from layout_helpers import empty_with_dim_order, with_dim_order


def opt(name, args):
    run_kernel(name, args, library="optimized")


def rand(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(
    "name", ["aten::add.out", "aten::native_layer_norm.out", "aten::gelu.out", "aten::tanh.out",
             "pteron::sdpa.out",
             "aten::_softmax.out", "aten::permute_copy.out", "aten::embedding.out",
             "dim_order_ops::_clone_dim_order.out"])
def test_registered_in_both_libraries(name):
    libs = pteron_native.kernel_libraries(name)
    assert "optimized" in libs
    if not name.startswith("pteron::"):
        assert "portable" in libs


BINARY_SHAPES = [
    ((3, 4), (3, 4)),
    ((2, 3, 37), (37,)),
    ((5, 1, 7), (1, 6, 1)),
    ((1,), (3, 2)),
    ((), (2, 2)),
    ((0, 3), (1, 3)),
    ((2, 1, 4, 5), (3, 1, 1)),
    ((1, 12, 128, 128), (1, 1, 128, 128)),
    ((1000,), ()),
    ((128, 1400, 3, 1), (128, 1, 3, 2)),  # affine_grid's product: rows of 2, threaded
    ((700, 5, 3), (5, 1)),  # rows of 3
]


@pytest.mark.parametrize("sa,sb", BINARY_SHAPES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_binary_broadcast(threads, op, sa, sb):
    a, b = rand(*sa, seed=1), rand(*sb, seed=2)
    if op == "div":
        b = b.abs() + 0.5
    kwargs = {"alpha": 0.75} if op in ("add", "sub") else {}
    expected = getattr(torch, op)(a, b, **kwargs)
    out = torch.empty(expected.shape)
    args = [a, b, 0.75, out] if kwargs else [a, b, out]
    opt(f"aten::{op}.out", args)
    assert_close(out, expected, atol=1e-6, rtol=1e-6, what=f"{op} {sa} {sb}")


def complex_randn(shape, g):
    return torch.complex(torch.randn(shape, generator=g), torch.randn(shape, generator=g))


@pytest.mark.parametrize("sa,sb", [((2, 64, 4, 32), (1, 64, 1, 32)), ((3, 5), (3, 5)), ((7,), ()),
                                   ((4, 1, 9), (1, 6, 1)), ((2, 300, 8, 64), (1, 300, 1, 64))], ids=str)
def test_complex_mul_matches_torch(threads, sa, sb):
    # Meta-style Llama's rotary embedding multiplies view_as_complex(q) by broadcast frequencies.
    # Tolerance: 2e-7 of |a| |b| (fused multiply-adds on either side).
    g = torch.Generator().manual_seed(3)
    a, b = complex_randn(sa, g), complex_randn(sb, g)
    want = a * b
    out = torch.empty_like(want)
    opt("aten::mul.out", [a, b, out])
    assert ((out - want).abs() <= 2e-7 * (a.abs() * b.abs())).all()


def test_complex_mul_other_layouts_give_the_portable_result():
    g = torch.Generator().manual_seed(4)
    a, b = complex_randn((6, 5), g).t(), complex_randn((5, 6), g)
    got, portable = torch.empty(5, 6, dtype=torch.complex64), torch.empty(5, 6, dtype=torch.complex64)
    opt("aten::mul.out", [a, b, got])
    run_kernel("aten::mul.out", [a, b, portable])
    assert ((got - portable).abs() <= 2e-7 * (a.abs() * b.abs())).all()
    torch.testing.assert_close(got, a * b)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("n", [1, 7, 16, 33, 5000])
def test_binary_scalar(op, n):
    a = rand(n, 3)
    kwargs = {"alpha": 2.0} if op in ("add", "sub") else {}
    expected = getattr(torch, op)(a, 1.5, **kwargs)
    out = torch.empty_like(a)
    opt(f"aten::{op}.Scalar_out", [a, 1.5, 2.0, out] if kwargs else [a, 1.5, out])
    assert_close(out, expected, atol=1e-6, rtol=1e-6, what=f"{op} scalar")


def test_binary_strided_inputs_and_other_dtypes():
    a = rand(4, 6).t()  # transposed: strided fast path
    b = rand(6, 4, seed=3)
    out = torch.empty(6, 4)
    opt("aten::mul.out", [a, b, out])
    assert_close(out, a * b, atol=1e-6, rtol=1e-6, what="strided mul")
    ia, ib = torch.arange(6).reshape(2, 3), torch.arange(3)
    iout = torch.empty(2, 3, dtype=torch.int64)
    opt("aten::add.out", [ia, ib, 1, iout])  # int64: portable kernel
    assert torch.equal(iout, ia + ib)


def test_binary_bad_shape_names_op():
    with pytest.raises(RuntimeError, match="aten::add.out"):
        opt("aten::add.out", [rand(2, 3), rand(4), 1, torch.empty(2, 3)])


@pytest.mark.parametrize("shape,k", [((2, 5, 768), 1), ((3, 7), 1), ((4, 3, 5), 2), ((1, 1), 1),
                                     ((300, 64), 1)])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(shape, k, affine):
    x = rand(*shape) * 3 + 1
    norm = list(shape[-k:])
    w = rand(*norm, seed=4) if affine else None
    b = rand(*norm, seed=5) if affine else None
    y, mean, rstd = torch.ops.aten.native_layer_norm(x, norm, w, b, 1e-5)
    outs = [torch.empty_like(y), torch.empty_like(mean), torch.empty_like(rstd)]
    opt("aten::native_layer_norm.out", [x, norm, w, b, 1e-5, *outs])
    assert_close(outs[0], y, atol=1e-5, rtol=1e-5, what="layer_norm y")
    assert_close(outs[1], mean, atol=1e-5, rtol=1e-5, what="layer_norm mean")
    assert_close(outs[2], rstd, atol=1e-5, rtol=1e-5, what="layer_norm rstd")


def test_layer_norm_bad_shape_names_op():
    x = rand(2, 8)
    with pytest.raises(RuntimeError, match="native_layer_norm"):
        opt("aten::native_layer_norm.out",
            [x, [7], None, None, 1e-5, torch.empty(2, 8), torch.empty(2, 1), torch.empty(2, 1)])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 100_003])
def test_gelu(approximate, n):
    x = rand(n) * 4
    x[: min(n, 3)] = torch.tensor([0.0, -30.0, 30.0])[: min(n, 3)]
    out = torch.empty_like(x)
    opt("aten::gelu.out", [x, approximate, out])
    expected = torch.nn.functional.gelu(x, approximate=approximate)
    atol = 3e-6 if approximate == "none" else 1e-6
    assert_close(out, expected, atol=atol, rtol=1e-5, what=f"gelu {approximate}")


def test_tanh_is_within_8_ulp_everywhere():
    # vtanh's rational form: relative accuracy for tiny values too (0.0004 and below is x), +-1
    # past 9, infinities and NaN as torch; 1 and 2 threads give the same bits (elementwise).
    grid = torch.linspace(-12, 12, 100_001)
    tiny = torch.logspace(-30, 0.9, 2001)
    special = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan")])
    x = torch.cat([grid, tiny, -tiny, special])
    out = torch.empty_like(x)
    opt("aten::tanh.out", [x, out])
    ref64 = torch.tanh(x.double())
    ref = ref64.float()
    ulp = (torch.nextafter(ref.abs(), torch.tensor(float("inf"))) - ref.abs()).double()
    finite = ~torch.isnan(x)
    err = ((out.double() - ref64).abs() / ulp)[finite]
    assert err.max() <= 8, f"tanh off by {err.max():.1f} ulp at x = {x[finite][err.argmax()]}"
    assert torch.isnan(out[-1]) and torch.equal(out[-5:-1], ref[-5:-1])
    assert torch.signbit(out[-4])  # tanh(-0.0) = -0.0


def test_gelu_bad_approximate_names_op():
    with pytest.raises(RuntimeError, match="aten::gelu.out"):
        opt("aten::gelu.out", [rand(4), "fast", torch.empty(4)])


@pytest.mark.parametrize("n", [0, 1, 31, 70_000])
def test_relu(n):
    x = rand(n)
    out = torch.empty_like(x)
    opt("aten::relu.out", [x, out])
    assert_close(out, torch.relu(x), atol=0, rtol=0, what="relu")


@pytest.mark.parametrize("shape", [(1, 12, 128, 128), (3, 1), (2, 33), (5, 7, 300)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_last_dim(shape, log):
    x = rand(*shape) * 5
    if shape[-1] > 1:
        x[..., 0] = float("-inf")  # masked entries stay 0 (softmax) / -inf (log_softmax)
    out = torch.empty_like(x)
    name = "aten::_log_softmax.out" if log else "aten::_softmax.out"
    opt(name, [x, -1, False, out])
    expected = torch.log_softmax(x, -1) if log else torch.softmax(x, -1)
    assert_close(out, expected, atol=1e-5 if log else 1e-6, rtol=1e-5, what=name)


def test_softmax_other_dim_and_all_masked_row():
    x = rand(4, 5, 6)
    out = torch.empty_like(x)
    opt("aten::_softmax.out", [x, 1, False, out])  # not the last dim: portable kernel
    assert_close(out, torch.softmax(x, 1), atol=1e-6, rtol=1e-5, what="softmax dim 1")
    x = torch.full((2, 8), float("-inf"))
    out = torch.empty_like(x)
    opt("aten::_softmax.out", [x, -1, False, out])
    assert torch.isnan(out).all()  # as torch: 0/0


@pytest.mark.parametrize("shape,dims", [
    ((1, 128, 12, 64), [0, 2, 1, 3]),
    ((1, 12, 128, 64), [0, 1, 3, 2]),
    ((1, 16, 4, 16), [0, 2, 3, 1]),
    ((37, 53), [1, 0]),
    ((2, 3, 5, 7), [3, 2, 1, 0]),
    ((2, 1, 5), [2, 1, 0]),
    ((0, 4), [1, 0]),
    ((1, 64, 2, 2, 48, 48), [0, 1, 4, 2, 5, 3]),  # pixel shuffle: a 2-wide innermost output dim
    ((1, 3, 3, 4, 20, 20), [0, 1, 4, 2, 5, 3]),  # a 3-wide one
    ((8, 197, 12, 64), [0, 2, 1, 3]),  # a head split: whole rows, threaded
    ((4, 3, 5, 6), [1, 0, 2, 3]),  # rows of two merged dims
    ((2, 1, 3, 1, 5), [3, 2, 0, 1, 4]),  # size-1 dims around the rows
    ((3, 0, 5), [1, 0, 2]),
    ((2, 3, 4, 1), [0, 2, 1, 3]),  # a size-1 innermost dim stays: not rows (an einsum's unsqueeze)
    ((2, 5, 1, 3, 1), [0, 3, 2, 1, 4]),
])
def test_permute_copy(threads, shape, dims):
    x = rand(*shape)
    expected = x.permute(dims).contiguous()
    out = torch.empty(expected.shape)
    opt("aten::permute_copy.out", [x, dims, out])
    assert torch.equal(out, expected)


def test_permute_copy_int32_and_bad_dims():
    x = torch.arange(24, dtype=torch.int32).reshape(2, 3, 4)
    out = torch.empty(4, 2, 3, dtype=torch.int32)
    opt("aten::permute_copy.out", [x, [2, 0, 1], out])
    assert torch.equal(out, x.permute(2, 0, 1))
    with pytest.raises(RuntimeError, match="permute_copy"):
        opt("aten::permute_copy.out", [x, [0, 0, 1], torch.empty(2, 2, 3, dtype=torch.int32)])


CLONE = "dim_order_ops::_clone_dim_order.out"
NCHW, NHWC = [0, 1, 2, 3], [0, 2, 3, 1]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(1, 16, 112, 112), (2, 3, 5, 7), (1, 960, 7, 7), (3, 1, 2, 2),
                                   (2, 0, 3, 3), (1, 17, 1, 33), (1, 64, 1, 1)])
@pytest.mark.parametrize("src,dst", [(NCHW, NHWC), (NHWC, NCHW), (NHWC, NHWC)])
def test_clone_dim_order_moves_every_bit(threads, shape, src, dst):
    """A delegate boundary's layout change: values bit for bit (a NaN's payload too), int32 as
    float32, both directions, strips of 16 channels with tails, one and two threads."""
    pteron_native.set_num_threads(threads)
    try:
        for dtype in (torch.float32, torch.int32):
            x = torch.randint(-2**31, 2**31 - 1, shape, dtype=torch.int32,
                              generator=torch.Generator().manual_seed(3))
            if x.numel():
                x.view(-1)[0] = 0x7FC01234  # a float NaN with a payload
            x = x.view(dtype)
            out = empty_with_dim_order(shape, dtype, dst)
            opt(CLONE, [with_dim_order(x, src), False, dst, out])
            assert out.stride() == empty_with_dim_order(shape, dtype, dst).stride()
            assert torch.equal(out.view(torch.int32), x.view(torch.int32)), (dtype, src, dst)
    finally:
        pteron_native.set_num_threads(0)


def test_clone_dim_order_falls_back_and_reports_as_portable():
    x = torch.arange(2 * 3 * 4 * 5, dtype=torch.int64).reshape(2, 3, 4, 5)  # 8-byte elements
    out = empty_with_dim_order(x.shape, torch.int64, NHWC)
    opt(CLONE, [x, False, NHWC, out])
    assert torch.equal(out, x)
    with pytest.raises(RuntimeError, match=f"{CLONE}: out has dtype float16"):
        opt(CLONE, [torch.zeros(2, 3), False, [0, 1], torch.empty(2, 3, dtype=torch.float16)])
    with pytest.raises(RuntimeError, match=CLONE):  # dim_order naming another layout than out's
        opt(CLONE, [torch.zeros(1, 2, 3, 4), False, NHWC, torch.empty(1, 2, 3, 4)])


@pytest.mark.parametrize("idx_shape", [(1, 128), (7,), (0,), (2, 3, 4)])
def test_embedding(idx_shape):
    w = rand(1000, 48)
    idx = torch.randint(0, 1000, idx_shape, generator=torch.Generator().manual_seed(1))
    out = torch.empty(*idx_shape, 48)
    opt("aten::embedding.out", [w, idx, -1, False, False, out])
    assert torch.equal(out, torch.nn.functional.embedding(idx, w))


def test_embedding_out_of_range_names_op():
    with pytest.raises(RuntimeError, match="embedding"):
        opt("aten::embedding.out", [rand(10, 4), torch.tensor([3, 10]), -1, False, False,
                                    torch.empty(2, 4)])


def reference_attention(q, k_t, v, mask, scale, heads):
    s = (q @ k_t) * scale
    if mask is not None:
        n, lq, lk = s.shape
        s4 = s.view(n // heads, heads, lq, lk)
        s4 = s4.masked_fill(mask, float("-inf")) if mask.dtype == torch.bool else s4 + mask
        s = s4.reshape(n, lq, lk)
    return torch.softmax(s, -1) @ v


# Key and value widths below a full pass of vectors (16 and 32 values, 50 and 130 keys) take
# single-vector passes, then scalar tails (40 values, 50 keys on AVX-512).
@pytest.mark.parametrize("n,lq,lk,d,dv", [(12, 128, 128, 64, 64), (4, 16, 16, 16, 16),
                                         (3, 5, 300, 7, 9), (2, 1, 1, 1, 1), (1, 33, 130, 64, 80),
                                         (8, 50, 50, 32, 40), (4, 20, 99, 16, 32)])
@pytest.mark.parametrize("mask_kind", [None, "float", "bool", "float_per_batch"])
def test_sdpa(n, lq, lk, d, dv, mask_kind):
    heads = n if n < 4 else 4
    q, k_t, v = rand(n, lq, d, seed=1), rand(n, d, lk, seed=2), rand(n, lk, dv, seed=3)
    mask = None
    if mask_kind == "float":
        mask = torch.zeros(lq, lk).masked_fill(torch.ones(lq, lk, dtype=torch.bool).triu(1),
                                               float("-inf"))
        mask[:, 0] = 0.0  # every row keeps one key
    elif mask_kind == "bool":
        mask = torch.rand(1, heads, lq, lk, generator=torch.Generator().manual_seed(4)) < 0.3
        mask[..., 0] = False
    elif mask_kind == "float_per_batch":
        mask = rand(n // heads, 1, 1, lk, seed=5)
    scale = 1 / math.sqrt(d)
    out = torch.empty(n, lq, dv)
    opt("pteron::sdpa.out", [q, k_t, v, mask, scale, heads, False, out])
    expected = reference_attention(q, k_t, v, mask, scale, heads)
    assert_close(out, expected, atol=1e-5, rtol=1e-4, what=f"sdpa mask={mask_kind}")


def test_sdpa_fully_masked_row_is_nan_or_zero_and_bad_shapes_name_op():
    q, k_t, v = rand(2, 3, 4), rand(2, 4, 5), rand(2, 5, 4)
    mask = torch.zeros(3, 5, dtype=torch.bool)
    mask[1] = True
    out = torch.empty(2, 3, 4)
    opt("pteron::sdpa.out", [q, k_t, v, mask, 0.5, 2, False, out])
    assert torch.isnan(out[:, 1]).all() and not torch.isnan(out[:, 0]).any()
    safe = torch.empty(2, 3, 4)  # safe_softmax: the fully masked row is zeros, the others agree
    opt("pteron::sdpa.out", [q, k_t, v, mask, 0.5, 2, True, safe])
    assert (safe[:, 1] == 0).all() and torch.equal(safe[:, 0::2], out[:, 0::2])
    with pytest.raises(RuntimeError, match="pteron::sdpa.out"):
        opt("pteron::sdpa.out", [q, rand(2, 5, 5), v, None, 0.5, 2, False, out])
    with pytest.raises(RuntimeError, match="pteron::sdpa.out"):
        opt("pteron::sdpa.out", [q, k_t, v, torch.zeros(4, 5), 0.5, 2, False, out])
