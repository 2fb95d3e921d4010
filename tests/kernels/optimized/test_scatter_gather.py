"""The optimized library's gather, scatter (src and value), scatter_add and scatter_reduce
against torch and against the portable kernels, at 1 and 2 threads, on sizes that split over
threads (column blocks of 2-D and 3-D scatters, narrower when there are few rows), with repeated
indices, int32 and int64 indices; other layouts and shapes go to the portable kernel, and bad
indices fail with its message.

Tolerance: none against the portable kernel (every out element is reduced on one thread in
index order, so float sums round the same: compared bit for bit, NaN included). Against torch:
gather and scatter without repeats exact; scatter_add and scatter_reduce on float32 1e-5
(torch may sum repeats in another order).
"""

import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


def bitwise_equal(a, b):
    torch.testing.assert_close(a, b, atol=0, rtol=0, equal_nan=True)


def both(op, args, like):
    """Runs `op` on the optimized and the portable library; returns (optimized, portable) outs."""
    outs = []
    for library in ("optimized", "portable"):
        out = torch.empty_like(like)
        run_kernel(op, list(args) + [out], library=library)
        outs.append(out)
    return outs


# (self shape, dim, index size along dim): a 2-D scatter along rows and along columns (one row of
# 300 columns: split into narrow column blocks), 1-D (one column: one thread), 3-D with a middle
# dim.
# Each of the large ones is just above the size the walks split over threads.
CASES = [((256, 1024), 1, 1024), ((1024, 300), 0, 900), ((300_000,), 0, 300_000),
         ((4, 2000, 40), 1, 1700), ((3, 7), 1, 5)]


def index_for(shape, dim, k, dtype=torch.int64):
    ishape = list(shape)
    ishape[dim] = k
    return torch.randint(0, shape[dim], ishape, generator=GEN).to(dtype)


@pytest.mark.parametrize("shape,dim,k", CASES)
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_gather(threads, shape, dim, k, index_dtype):
    x = torch.randn(shape, generator=GEN)
    idx = index_for(shape, dim, k, index_dtype)
    ref = torch.gather(x, dim, idx.long())
    opt, portable = both("aten::gather.out", [x, dim, idx, False], ref)
    assert torch.equal(opt, ref)
    assert torch.equal(opt, portable)
    xi = (x * 100).to(torch.int16)  # any dtype: elements move as words
    opt, _ = both("aten::gather.out", [xi, dim, idx, False], ref.to(torch.int16))
    assert torch.equal(opt, torch.gather(xi, dim, idx.long()))


@pytest.mark.parametrize("shape,dim,k", CASES)
def test_scatter_src_and_value(threads, shape, dim, k):
    x = torch.randn(shape, generator=GEN)
    idx = index_for(shape, dim, k)  # repeats: the last write wins, as in the portable kernel
    src = torch.randn(idx.shape, generator=GEN)
    opt, portable = both("aten::scatter.src_out", [x, dim, idx, src], x)
    assert torch.equal(opt, portable)
    unique = torch.argsort(torch.rand(x.shape, generator=GEN), dim=dim).narrow(dim, 0, k).contiguous()
    assert torch.equal(both("aten::scatter.src_out", [x, dim, unique, src], x)[0],
                       torch.scatter(x, dim, unique, src))
    opt, portable = both("aten::scatter.value_out", [x, dim, idx, -2.5], x)
    assert torch.equal(opt, portable)
    assert torch.equal(opt, torch.scatter(x, dim, idx, -2.5))
    xl = x.to(torch.int64)
    opt, _ = both("aten::scatter.value_out", [xl, dim, idx, 7], xl)
    assert torch.equal(opt, torch.scatter(xl, dim, idx, 7))


@pytest.mark.parametrize("shape,dim,k", CASES)
def test_scatter_add(threads, shape, dim, k):
    x = torch.randn(shape, generator=GEN)
    idx = index_for(shape, dim, k)
    src = torch.randn(idx.shape, generator=GEN)
    opt, portable = both("aten::scatter_add.out", [x, dim, idx, src], x)
    bitwise_equal(opt, portable)
    torch.testing.assert_close(opt, torch.scatter_add(x, dim, idx, src), atol=1e-5, rtol=1e-5)
    xi = torch.randint(-100, 100, shape, generator=GEN, dtype=torch.int32)
    srci = torch.randint(-100, 100, idx.shape, generator=GEN, dtype=torch.int32)
    opt, _ = both("aten::scatter_add.out", [xi, dim, idx, srci], xi)
    assert torch.equal(opt, torch.scatter_add(xi, dim, idx, srci))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("shape,dim,k,include_self", [CASES[0] + (True,), CASES[2] + (False,),
                                                      CASES[3] + (False,), CASES[4] + (True,)])
def test_scatter_reduce(threads, reduce, include_self, shape, dim, k):
    x = torch.randn(shape, generator=GEN)
    idx = index_for(shape, dim, k)
    src = torch.randn(idx.shape, generator=GEN)
    if reduce == "prod":  # keep products of repeats finite and away from 0
        src = 1 + src / 8
    src.view(-1)[::4099] = float("nan")  # amax / amin: NaN wins
    args = [x, dim, idx, src, reduce, include_self]
    opt, portable = both("aten::scatter_reduce.two_out", args, x)
    bitwise_equal(opt, portable)
    ref = torch.scatter_reduce(x, dim, idx, src, reduce, include_self=include_self)
    torch.testing.assert_close(opt, ref, atol=1e-5, rtol=1e-5, equal_nan=True)
    xi = torch.randint(-50, 50, shape, generator=GEN, dtype=torch.int64)
    srci = torch.randint(-50, 50, idx.shape, generator=GEN, dtype=torch.int64)
    if reduce == "prod":
        srci = srci.sign()  # no overflow
    args = [xi, dim, idx, srci, reduce, include_self]
    opt, portable = both("aten::scatter_reduce.two_out", args, xi)
    assert torch.equal(opt, portable)  # mean floors, as torch
    assert torch.equal(opt, torch.scatter_reduce(xi, dim, idx, srci, reduce, include_self=include_self))


def test_in_place_and_fallbacks(threads):
    x = torch.randn(256, 2048, generator=GEN)
    idx = index_for(x.shape, 1, 2048)
    src = torch.randn(idx.shape, generator=GEN)
    expect = both("aten::scatter_add.out", [x, 1, idx, src], x)[1]
    inplace = x.clone()  # out is self's memory: updated in place
    run_kernel("aten::scatter_add.out", [inplace, 1, idx, src, inplace], library="optimized")
    bitwise_equal(inplace, expect)
    # Index smaller than self outside dim, channels-last self, a 0-d self: the portable kernel.
    small = index_for((200, 2048), 1, 100)
    ref = torch.scatter_add(x, 1, small, src[:200, :100])
    bitwise_equal(both("aten::scatter_add.out", [x, 1, small, src[:200, :100].contiguous()], x)[0], ref)
    x4 = torch.randn(2, 3, 4, 5, generator=GEN).to(memory_format=torch.channels_last)
    i4 = index_for(x4.shape, 1, 3)
    out = torch.empty_like(x4)
    run_kernel("aten::gather.out", [x4, 1, i4, False, out], library="optimized")
    assert torch.equal(out, torch.gather(x4, 1, i4))
    out = torch.empty(())
    run_kernel("aten::scatter.value_out", [torch.tensor(1.0), 0, torch.tensor(0), 5.0, out],
               library="optimized")
    assert out.item() == 5.0


@pytest.mark.parametrize("op,args", [
    ("aten::gather.out", lambda x, i, s: [x, 1, i, False]),
    ("aten::scatter.src_out", lambda x, i, s: [x, 1, i, s]),
    ("aten::scatter.value_out", lambda x, i, s: [x, 1, i, 1.0]),
    ("aten::scatter_add.out", lambda x, i, s: [x, 1, i, s]),
    ("aten::scatter_reduce.two_out", lambda x, i, s: [x, 1, i, s, "amax", True]),
])
def test_bad_index_fails_with_the_portable_message(threads, op, args):
    x = torch.randn(32, 40000, generator=GEN)
    idx = index_for(x.shape, 1, 40000)
    idx[27, 1234] = 40000
    src = torch.randn(idx.shape, generator=GEN)
    with pytest.raises(RuntimeError, match=f"{op}: index 40000 is out of bounds"):
        run_kernel(op, args(x, idx, src) + [torch.empty_like(x)], library="optimized")
    if op != "aten::gather.out":  # updated in place: checked before anything is written
        inplace = x.clone()
        idx[27, 1234] = -1
        with pytest.raises(RuntimeError, match=f"{op}: index -1 is out of bounds"):
            run_kernel(op, args(inplace, idx, src) + [inplace], library="optimized")
        assert torch.equal(inplace, x)
