"""Each operator added for issue 17 reaches its portable kernel through the whole path: a module
using it is exported (torch.export, core-ATen decomposition), compiled by pteron for the
portable library and run on pteron's runtime, and the result compared with eager torch.
Operators that run_decompositions() would decompose but ExecuTorch keeps (logit, tril, roll,
..., and col2im, core but decomposed by torch's default table) and the core 1-d pools, which
the default table turns into 2-d ones, are compiled from the undecomposed export, as a .pt2
file written by torch.export.save.

Tolerance: float32 within 1e-5 relative / 1e-5 absolute (1e-4 absolute for cdist, whose torch
path for many rows is a matmul expansion); integers and bools exact. Random ops (rand, randn,
dropout) are checked by shape, dtype and range, as their values are pteron's own.
"""

import math

import pteron
import pytest
import torch


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def g(seed=0):
    return torch.Generator().manual_seed(seed)


X = torch.rand(3, 4, generator=g(1)) * 0.8 + 0.1  # in (0.1, 0.9): every domain
Y = torch.rand(3, 4, generator=g(2)) * 4 - 2
INTS = torch.randint(-50, 50, (3, 4), generator=g(3), dtype=torch.int32)
N4 = torch.randn(2, 3, 4, 5, generator=g(4))

# name -> (function, inputs, atol). Each function's export contains the named operator.
CASES = {
    "acos": (torch.acos, (X,), 1e-5),
    "asin": (torch.asin, (X,), 1e-5),
    "atan": (torch.atan, (Y,), 1e-5),
    "acosh": (lambda x: torch.acosh(x + 1), (X,), 1e-5),
    "asinh": (torch.asinh, (Y,), 1e-5),
    "atanh": (torch.atanh, (X,), 1e-5),
    "tan": (torch.tan, (X,), 1e-5),
    "cosh": (torch.cosh, (Y,), 1e-5),
    "sinh": (torch.sinh, (Y,), 1e-5),
    "log2": (torch.log2, (X,), 1e-5),
    "log10": (torch.log10, (X,), 1e-5),
    "log1p": (torch.log1p, (Y.abs(),), 1e-5),
    "expm1": (torch.expm1, (Y,), 1e-5),
    "trunc": (lambda x: torch.trunc(x * 3), (Y,), 0),
    "signbit": (torch.signbit, (Y,), 0),
    "atan2": (torch.atan2, (Y, X), 1e-5),
    "hypot": (torch.hypot, (Y, X), 1e-5),
    "copysign": (torch.copysign, (X, Y), 0),
    "bitwise_and.Scalar": (lambda i: i & 6, (INTS,), 0),
    "bitwise_or.Scalar": (lambda i: i | 6, (INTS,), 0),
    "bitwise_xor.Scalar": (lambda i: i ^ 6, (INTS,), 0),
    "__lshift__.Scalar": (lambda i: i << 3, (INTS,), 0),
    "__rshift__.Scalar": (lambda i: i >> 2, (INTS,), 0),
    "bitwise_left_shift.Tensor": (lambda i: torch.bitwise_left_shift(i, i.abs() % 5), (INTS,), 0),
    "bitwise_right_shift.Tensor": (lambda i: torch.bitwise_right_shift(i, i.abs() % 5), (INTS,), 0),
    "max.default": (torch.max, (Y,), 0),
    "min.default": (torch.min, (Y,), 0),
    "var.correction": (lambda x: x.var(1), (N4,), 1e-5),
    "var_mean.correction": (lambda x: torch.var_mean(x, [0, 2]), (N4,), 1e-5),
    "flip": (lambda x: x.flip(0, 3), (N4,), 0),
    "unfold_copy": (lambda x: x.unfold(3, 2, 2) * 1, (N4,), 0),
    "diagonal_copy": (lambda x: x.diagonal(0, 2, 3) * 1, (N4,), 0),
    "narrow_copy": (lambda x: x.narrow_copy(1, 1, 2), (N4,), 0),
    "as_strided_copy": (lambda x: x.as_strided((2, 3), (1, 4), 1) * 1, (X,), 0),
    "repeat_interleave.Tensor": (
        lambda x: x.repeat_interleave(torch.tensor([1, 0, 2]), 0, output_size=3), (X,), 0),
    "cumprod": (lambda x: x.cumprod(1), (X,), 1e-5),
    "erfinv": (lambda x: torch.erfinv(x * 2 - 1), (X,), 1e-5),
    "bucketize": (lambda x: torch.bucketize(x, torch.tensor([0.2, 0.5, 0.7])), (X,), 0),
    "searchsorted": (lambda x: torch.searchsorted(torch.tensor([-1.0, 0.0, 1.5]), x), (Y,), 0),
    "cummax": (lambda x: tuple(torch.cummax(x, 1)), (Y,), 0),
    "cummin": (lambda x: tuple(torch.cummin(x, 0)), (Y,), 0),
    "logcumsumexp": (lambda x: torch.logcumsumexp(x, 1), (Y,), 1e-5),
    "avg_pool3d": (lambda x: torch.nn.functional.avg_pool3d(x, 2, 1, 1), (torch.randn(1, 2, 4, 5, 6, generator=g(9)),), 1e-5),
    "max_pool3d_with_indices": (lambda x: torch.nn.functional.max_pool3d(x, 3, 2, 1),
                                (torch.randn(1, 2, 5, 5, 6, generator=g(10)),), 0),
    "_adaptive_avg_pool3d": (lambda x: torch.nn.functional.adaptive_avg_pool3d(x, (2, 3, 1)),
                             (torch.randn(1, 2, 5, 5, 6, generator=g(11)),), 1e-5),
    "kthvalue": (lambda x: tuple(torch.kthvalue(x, 2, 1)), (Y,), 0),
    "median": (lambda x: (torch.median(x), tuple(torch.median(x, 0))), (Y,), 0),
    "linalg_vector_norm": (lambda x: torch.nn.functional.normalize(x, dim=1), (N4,), 1e-5),
    "empty": (lambda x: x + torch.empty(3, 4).fill_(1), (X,), 0),
    "copy": (lambda x: x.clone().copy_(x * 2), (X,), 0),
    "native_batch_norm_legit.no_stats": (lambda x: torch.nn.functional.instance_norm(x), (N4,), 1e-5),
    "cdist_forward": (lambda a, b: torch.cdist(a, b), (torch.randn(5, 3, generator=g(5)),
                                                       torch.randn(4, 3, generator=g(6))), 1e-4),
    "pdist_forward": (lambda a: torch.nn.functional.pdist(a, 3.0), (torch.randn(5, 3, generator=g(7)),), 1e-5),
}

# Operators run_decompositions() rewrites, compiled from the undecomposed export.
UNDECOMPOSED = {
    "logit": (lambda x: torch.logit(x, 1e-3), (X,), 1e-5),
    "floor_divide": (lambda x, y: torch.floor_divide(x, y), (Y, X), 0),
    "tril": (lambda x: x.tril(1), (N4,), 0),
    "triu": (lambda x: x.triu(-1), (N4,), 0),
    "roll": (lambda x: x.roll((1, -2), (1, 3)), (N4,), 0),
    "glu": (lambda x: torch.nn.functional.glu(x, 1), (torch.randn(2, 6, 3, generator=g(8)),), 1e-5),
    "col2im": (lambda x: torch.nn.functional.fold(x, (5, 6), (2, 3), padding=1),
               (torch.randn(1, 12, 36, generator=g(12)),), 1e-5),
    "avg_pool1d": (lambda x: torch.nn.functional.avg_pool1d(x, 3, 2, 1), (torch.randn(2, 3, 9, generator=g(13)),), 1e-5),
    "adaptive_avg_pool1d": (lambda x: torch.nn.functional.adaptive_avg_pool1d(x, 4),
                            (torch.randn(2, 3, 9, generator=g(14)),), 1e-5),
}


# Views export as the view op; pteron's compiler turns it into the *_copy kernel.
EXPORTED_AS = {"as_strided_copy": "as_strided", "diagonal_copy": "diagonal", "unfold_copy": "unfold",
               "__lshift__.Scalar": "__lshift__", "__rshift__.Scalar": "__rshift__",
               "native_batch_norm_legit.no_stats": "_native_batch_norm_legit",
               "cdist_forward": "_cdist_forward", "pdist_forward": "_pdist_forward"}


def flatten(values):
    if isinstance(values, (tuple, list)):
        return [v for item in values for v in flatten(item)]
    return [values]


def compare(got, want, atol):
    want = flatten(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, atol=atol, rtol=atol, equal_nan=True)


def ops_in(ep):
    return {str(n.target) for n in ep.graph.nodes if n.op == "call_function"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_exported_op_runs_on_portable_kernels(name):
    fn, inputs, atol = CASES[name]
    model = Fn(fn)
    ep = pteron.export(model, inputs)
    op = EXPORTED_AS.get(name, name.split(".")[0])
    assert any(op in target for target in ops_in(ep)), (name, ops_in(ep))
    lowered = pteron.to_edge_transform_and_lower(ep, kernels=["portable"])
    compare(lowered.load().forward(*inputs), model(*inputs), atol)


@pytest.mark.parametrize("name", sorted(UNDECOMPOSED))
def test_undecomposed_op_runs_on_portable_kernels(name, tmp_path):
    fn, inputs, atol = UNDECOMPOSED[name]
    model = Fn(fn)
    ep = torch.export.export(model.eval(), inputs)
    assert any(f"aten.{name}." in target for target in ops_in(ep)), ops_in(ep)
    path = tmp_path / "model.pt2"
    torch.export.save(ep, path)
    lowered = pteron.to_edge_transform_and_lower(str(path), kernels=["portable"])
    compare(lowered.load().forward(*inputs), model(*inputs), atol)


def test_random_ops_compile_and_fill():
    def fn(x):
        return (x + torch.rand(3, 4), torch.randn(2, 5, dtype=torch.float64), torch.rand_like(x),
                torch.nn.functional.dropout(x, 0.5, training=True), x[torch.randperm(3)])

    model = Fn(fn)
    ep = pteron.export(model, (X,))
    assert {"aten.rand.default", "aten.randn.default", "aten.rand_like.default",
            "aten.native_dropout.default", "aten.randperm.default"} <= ops_in(ep), ops_in(ep)
    a, b, c, d, e = pteron.to_edge_transform_and_lower(ep, kernels=["portable"]).load().forward(X)
    assert a.shape == (3, 4) and ((a - X) >= 0).all() and ((a - X) < 1).all()
    assert b.dtype == torch.float64 and b.shape == (2, 5) and torch.isfinite(b).all()
    assert c.shape == X.shape and (c >= 0).all() and (c < 1).all()
    kept = d != 0
    torch.testing.assert_close(d[kept], X[kept] * 2)
    assert math.isfinite(d.sum().item())
    assert sorted(e.tolist()) == sorted(X.tolist())  # the rows of X, permuted
