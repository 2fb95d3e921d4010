"""torch.unique (flat and dim=), unique_consecutive and bincount: ops whose output length depends
on the values (deduplicating tokens or labels, run-length encoding, histograms), planned at an
upper bound and resized by the kernel; and index_reduce and F.rrelu, which torch keeps
undecomposed.

The kernels' out tensors are passed as bounded-dynamic tensors sized at their bound (what the
memory planner reserves) and the shapes they leave are compared with torch's; models go through
pteron.export on the default program and on portable. Tolerance: none for the grouping ops and
integer results (they copy, count and index); bincount's weighted sums and index_reduce's means
within 1e-6 relative (summation order); rrelu exactly in eval.
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, with_dim_order

import pteron

A = torch.ops.aten


def unique2(x, return_inverse=True, return_counts=True):
    n = x.numel()
    out0, out1, out2 = torch.empty(n, dtype=x.dtype), torch.empty(0, dtype=torch.int64), torch.empty(n, dtype=torch.int64)
    if return_inverse:
        out1 = torch.empty(x.shape, dtype=torch.int64)
    if not return_counts:
        out2 = torch.empty(0, dtype=torch.int64)
    s0, s2 = run_kernel("aten::_unique2.out", [x, True, return_inverse, return_counts, out0, out1, out2], dynamic=[4, 6])
    return out0[: s0[0]], out1, out2[: s2[0]]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unique_matches_torch_on_every_dtype(dtype):
    g = torch.Generator().manual_seed(1)
    for shape in [(20,), (4, 5), (2, 3, 4), (), (0,)]:
        x = rand(shape, dtype, g)
        if dtype not in (torch.bool,) and x.numel():
            x = x.flatten()[torch.randint(0, max(1, x.numel() // 3), (x.numel(),), generator=g)].reshape(shape)
        values, inverse, counts = unique2(x)
        ref = A._unique2(x, True, True, True)
        assert torch.equal(values, ref[0]), f"{dtype} {shape}"
        assert torch.equal(inverse, ref[1]) and torch.equal(counts, ref[2]), f"{dtype} {shape}"


def test_unique_nan_each_its_own_group_and_flags():
    x = torch.tensor([3.0, float("nan"), 1.0, float("nan"), 3.0, -0.0, 0.0])
    values, inverse, counts = unique2(x)
    ref = A._unique2(x, True, True, True)
    assert torch.equal(values, ref[0], ) or torch.allclose(values, ref[0], equal_nan=True)
    assert values.isnan().sum() == 2 and values[-2:].isnan().all()  # NaN last, twice
    assert torch.equal(inverse, ref[1]) and torch.equal(counts, ref[2])
    values, inverse, counts = unique2(torch.tensor([2, 1, 2]), return_inverse=False, return_counts=False)
    assert values.tolist() == [1, 2] and inverse.shape == (0,) and counts.shape == (0,)
    y = with_dim_order(torch.randint(0, 4, (3, 4, 5)), [2, 0, 1])
    values, inverse, counts = unique2(y)
    ref = A._unique2(y, True, True, True)
    assert torch.equal(values, ref[0]) and torch.equal(inverse, ref[1]) and torch.equal(counts, ref[2])


def run_dim_op(name, x, leading_args, dim):
    n = x.shape[dim]
    out0 = torch.empty(x.shape, dtype=x.dtype)
    out1, out2 = torch.empty(n, dtype=torch.int64), torch.empty(n, dtype=torch.int64)
    s0, s2 = run_kernel(name, [x, *leading_args, out0, out1, out2], dynamic=[len(leading_args) + 1, len(leading_args) + 3])
    values = out0.flatten()[: torch.Size(s0).numel()].view(s0)
    return values, out1, out2[: s2[0]]


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.float16])
def test_unique_dim_matches_torch(dtype):
    g = torch.Generator().manual_seed(2)
    for shape, dim in [((6, 3), 0), ((3, 6), 1), ((2, 5, 3), 1), ((2, 5, 3), -1), ((4, 2, 2), 0)]:
        base = rand(shape, dtype, g)
        index = torch.randint(0, 2, (shape[dim],), generator=g)  # repeated slices
        x = base.index_select(dim, index)
        got = run_dim_op("aten::unique_dim.out", x, [dim, True, False, False], dim)
        ref = A.unique_dim(x, dim, True, True, True)
        for a, b in zip(got, ref):
            assert torch.equal(a, b), f"{dtype} {shape} dim {dim}"


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.uint8, torch.bfloat16])
def test_unique_consecutive_matches_torch(dtype):
    g = torch.Generator().manual_seed(3)
    x = rand((30,), dtype, g)[torch.randint(0, 4, (30,), generator=g).cumsum(0) // 3]
    for inverse, counts in [(True, True), (False, True), (False, False)]:
        out0, out2 = torch.empty(30, dtype=dtype), torch.empty(30 if counts else 0, dtype=torch.int64)
        out1 = torch.empty(30 if inverse else 0, dtype=torch.int64)
        s0, s2 = run_kernel("aten::unique_consecutive.out", [x, inverse, counts, None, out0, out1, out2], dynamic=[4, 6])
        ref = A.unique_consecutive(x, inverse, counts)
        assert torch.equal(out0[: s0[0]], ref[0]) and torch.equal(out2[: s2[0]], ref[2])
        assert torch.equal(out1, ref[1])
    m = rand((3, 8), dtype, g)[:, torch.tensor([0, 0, 1, 2, 2, 2, 1, 1])]
    got = run_dim_op("aten::unique_consecutive.out", m, [False, False, 1], 1)
    for a, b in zip(got, A.unique_consecutive(m, False, False, 1)):
        assert torch.equal(a, b)


def test_unique_refusals_and_a_small_bound():
    with pytest.raises(RuntimeError, match="unique_dim.out: self has a dim of size 0 other than dim 0"):
        run_dim_op("aten::unique_dim.out", torch.zeros(3, 0), [0, True, False, False], 0)
    x = torch.arange(6)
    with pytest.raises(RuntimeError, match="_unique2.out: .*a result of .* elements exceeds the .* planned for"):
        run_kernel("aten::_unique2.out", [x, True, False, False, torch.empty(3, dtype=torch.int64),
                                          torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)], dynamic=[4])


def bincount(x, weights=None, minlength=0, bound=None, dtype=torch.int64):
    out = torch.empty(bound or 300, dtype=dtype)
    (shape,) = run_kernel("aten::bincount.out", [x, weights, minlength, out], dynamic=[3])
    return out[: shape[0]]


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_bincount_matches_torch(dtype):
    g = torch.Generator().manual_seed(4)
    x = torch.randint(0, 50, (200,), generator=g).to(dtype)
    assert torch.equal(bincount(x), torch.bincount(x))
    assert torch.equal(bincount(x, minlength=80), torch.bincount(x, minlength=80))
    assert torch.equal(bincount(x[:0], minlength=3), torch.bincount(x[:0], minlength=3))
    for wdtype, odtype in [(torch.float32, torch.float32), (torch.float64, torch.float64), (torch.int64, torch.float64)]:
        w = torch.rand(200, generator=g).mul(10).to(wdtype)
        got = bincount(x, w, dtype=odtype)
        torch.testing.assert_close(got, torch.bincount(x, w), rtol=1e-6, atol=0)


def test_bincount_refusals():
    with pytest.raises(RuntimeError, match="bincount.out: self must be non-negative"):
        bincount(torch.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="bincount.out: self must be a 1-D integer tensor, got 2D"):
        bincount(torch.tensor([[1, 1]]))
    with pytest.raises(RuntimeError, match="bincount.out: weights must be 1-D with self's length 2"):
        bincount(torch.tensor([1, 1]), torch.ones(1), dtype=torch.float32)
    with pytest.raises(RuntimeError, match="bincount.out: .*a result of .* elements exceeds the .* planned for"):
        bincount(torch.tensor([1, 9]), bound=5)  # past the bound


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.float16])
def test_index_reduce_matches_torch(reduce, dtype):
    g = torch.Generator().manual_seed(5)
    for shape, dim, n in [((5, 3), 0, 7), ((4, 6, 2), 1, 9), ((3,), 0, 4), ((), 0, 1)]:
        self = rand(shape, dtype, g)
        src_shape = list(shape) or []
        if src_shape:
            src_shape[dim] = n
        source = rand(tuple(src_shape), dtype, g)
        size = shape[dim] if shape else 1
        index = torch.randint(0, size, (n,) if shape else (), generator=g)
        for include_self in (True, False):
            ref = A.index_reduce(self, dim, index, source, reduce, include_self=include_self)
            out = torch.empty_like(self)
            run_kernel("aten::index_reduce.out", [self, dim, index.int() if n > 1 else index, source, reduce, include_self, out])
            torch.testing.assert_close(out, ref, rtol=1e-6 if dtype != torch.float16 else 1e-3, atol=0,
                                       msg=lambda m: f"{reduce} {dtype} {shape} {include_self}: {m}")


def test_index_reduce_nan_and_refusals():
    self = torch.zeros(3)
    source = torch.tensor([1.0, float("nan"), 2.0])
    out = torch.empty(3)
    run_kernel("aten::index_reduce.out", [self, 0, torch.tensor([0, 0, 1]), source, "amax", True, out])
    assert torch.equal(out.isnan(), A.index_reduce(self, 0, torch.tensor([0, 0, 1]), source, "amax").isnan())
    with pytest.raises(RuntimeError, match="index_reduce.out: reduce must be prod, mean, amax or amin"):
        run_kernel("aten::index_reduce.out", [self, 0, torch.tensor([0]), source[:1], "sum", True, out])
    with pytest.raises(RuntimeError, match="index_reduce.out: index 3 is out of bounds for dimension 0 with size 3"):
        run_kernel("aten::index_reduce.out", [self, 0, torch.tensor([3]), source[:1], "amax", True, out])
    with pytest.raises(RuntimeError, match="index_reduce.out: dtype bool not supported"):
        b = torch.zeros(3, dtype=torch.bool)
        run_kernel("aten::index_reduce.out", [b, 0, torch.tensor([0]), b[:1], "amax", True, torch.empty_like(b)])


def rrelu(x, training, lower=0.125, upper=1 / 3):
    out, noise_out = torch.empty_like(x), torch.empty_like(x)
    run_kernel("pteron::rrelu_with_noise_functional.out", [x, torch.zeros_like(x), lower, upper, training, None, out, noise_out])
    return out, noise_out


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_rrelu_eval_is_torchs_and_training_draws_slopes_in_range(dtype):
    x = torch.randn(4000).to(dtype)
    out, _ = rrelu(x, False)
    assert torch.equal(out, torch.nn.functional.rrelu(x, training=False))
    out, noise = rrelu(x, True, 0.1, 0.3)
    negative = x < 0
    assert torch.equal(out[~negative], x[~negative]) and (noise[~negative] == 1).all()
    slopes = noise[negative].float()
    lo, hi = (float(torch.tensor(v).to(dtype)) for v in (0.1, 0.3))  # the bounds in the dtype
    assert (slopes >= lo).all() and (slopes <= hi).all()
    assert abs(float(slopes.mean()) - 0.2) < 0.01  # uniform: standard error 0.058 / sqrt(2000) = 0.0013
    torch.testing.assert_close(out[negative], (x[negative].float() * slopes).to(dtype), rtol=1e-2, atol=0)


class Dedup(torch.nn.Module):
    """Token deduplication (unique with inverse and counts), a label histogram, a run-length
    code, a scatter of per-segment maxima and an RReLU activation."""

    def forward(self, tokens, labels, feats, segments):
        values, inverse, counts = torch.unique(tokens, return_inverse=True, return_counts=True)
        runs, run_counts = torch.unique_consecutive(labels, return_counts=True)
        hist = torch.bincount(labels, minlength=4)
        pooled = torch.zeros(4, feats.shape[1]).index_reduce(0, segments, feats, "amax", include_self=False)
        rows = torch.unique(feats.round(), dim=0)
        act = torch.nn.functional.rrelu(feats, training=False)
        return values * 2, inverse, counts, runs, run_counts, hist.float() / labels.numel(), pooled, rows, act


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_model_with_data_dependent_groups(kernels):
    g = torch.Generator().manual_seed(6)
    tokens = torch.randint(0, 12, (2, 16), generator=g)
    labels = torch.randint(0, 4, (32,), generator=g).to(torch.uint8).sort().values
    feats = torch.randn(10, 3, generator=g)
    segments = torch.randint(0, 4, (10,), generator=g)
    model = Dedup().eval()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (tokens, labels, feats, segments)),
                                                 kernels=kernels, progress=False).load()
    for _ in range(3):  # new values each call: the lengths change
        got = [torch.as_tensor(t) for t in program.forward(tokens, labels, feats, segments)]
        ref = model(tokens, labels, feats, segments)
        for a, b in zip(got, ref):
            assert a.shape == b.shape
            torch.testing.assert_close(a, b, rtol=0, atol=0)
        tokens = torch.randint(0, 6 + int(torch.randint(0, 20, (), generator=g)), (2, 16), generator=g)
        labels = torch.randint(0, 4, (32,), generator=g).to(torch.uint8).sort().values
        feats = torch.randn(10, 3, generator=g)
