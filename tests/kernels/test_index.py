"""Indexing kernels against torch: index_select, index.Tensor, gather, embedding, over every
dtype, int64/int32 indices, negative dims, 0-size and 0-d tensors and non-default dim orders.

Tolerance: none (indexing moves elements). Out-of-range indices must raise RuntimeError naming
the op and the bad index, never crash.
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import (
    ALL_DTYPES,
    assert_equal,
    empty_with_dim_order,
    rand,
    random_order,
    with_dim_order,
)

aten = torch.ops.aten


def gen(seed):
    return torch.Generator().manual_seed(seed)


def run_into(name, args, expected, out_order=None):
    order = out_order if out_order is not None else list(range(expected.dim()))
    out = empty_with_dim_order(expected.shape, expected.dtype, order)
    run_kernel(name, [*args, out])
    assert_equal(out, expected, f"{name} out_order={order}")


@pytest.mark.parametrize("shape", [(5, 4, 3), (7,), (3, 0, 2), (6, 40)])
def test_index_select(shape):
    g = gen(1)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand(shape, dtype, g), random_order(len(shape), g))
        for dim in range(-len(shape), len(shape)):
            n = x.shape[dim]
            for idx_dtype in (torch.int64, torch.int32):
                idx = torch.randint(0, max(n, 1), (6,), generator=g, dtype=idx_dtype)[
                    : 6 if n else 0
                ]
                e = torch.index_select(x, dim, idx)
                run_into("aten::index_select.out", [x, dim, idx], e, random_order(e.dim(), g))


def test_index_select_0d_index_and_self():
    g = gen(2)
    x = rand((4, 3), torch.float32, g)
    idx = torch.tensor(2)
    run_into("aten::index_select.out", [x, 0, idx], torch.index_select(x, 0, idx))
    s = torch.tensor(3.5)
    run_into(
        "aten::index_select.out",
        [s, 0, torch.tensor([0])],
        torch.index_select(s, 0, torch.tensor([0])),
    )


@pytest.mark.parametrize("bad", [4, -1, 1 << 40])
def test_index_select_rejects_out_of_range(bad):
    idx = torch.tensor([0, bad, 1])
    with pytest.raises(RuntimeError, match=f"aten::index_select.out: index {bad} is out of bounds"):
        run_kernel("aten::index_select.out", [torch.zeros(4, 2), 0, idx, torch.empty(3, 2)])


def test_index_select_rejects_float_index():
    with pytest.raises(RuntimeError, match="aten::index_select.out: index must be int64 or int32"):
        run_kernel(
            "aten::index_select.out", [torch.zeros(4, 2), 0, torch.zeros(2), torch.empty(2, 2)]
        )


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather(dim):
    g = gen(3)
    for dtype in ALL_DTYPES:
        x = with_dim_order(rand((4, 5, 6), dtype, g), random_order(3, g))
        ishape = [3, 4, 5]
        ishape[dim] = 7
        idx = torch.randint(0, x.shape[dim], ishape, generator=g)
        idx = with_dim_order(idx, random_order(3, g))
        e = torch.gather(x, dim, idx)
        run_into("aten::gather.out", [x, dim, idx, False], e, random_order(3, g))


def test_gather_edge_shapes():
    g = gen(4)
    x = rand((3, 4), torch.int64, g)
    idx = torch.zeros((0, 4), dtype=torch.int64)
    run_into("aten::gather.out", [x, 0, idx, False], torch.gather(x, 0, idx))
    s = torch.tensor(2.0)
    run_into(
        "aten::gather.out", [s, 0, torch.tensor(0), False], torch.gather(s, 0, torch.tensor(0))
    )
    v = rand((5,), torch.float16, g)
    i = torch.tensor([4, 0, 0, 3])
    run_into("aten::gather.out", [v, -1, i, False], torch.gather(v, -1, i))
    # Found by the op-database suite (wrong on portable and optimized): int32 indices, and an
    # empty index of any dtype and rank, as torch accepts them.
    i32 = torch.tensor([[2, 0, 1, 1]], dtype=torch.int32)
    run_into("aten::gather.out", [x, 0, i32, False], torch.gather(x, 0, i32.long()))
    empty_u8 = torch.zeros((0,), dtype=torch.uint8)
    run_into("aten::gather.out", [x, 1, empty_u8, False], torch.empty(0, dtype=x.dtype))


def test_gather_rejects_out_of_range_and_bad_shapes():
    x = torch.zeros(3, 4)
    with pytest.raises(
        RuntimeError, match="aten::gather.out: index -1 is out of bounds for dimension 1"
    ):
        run_kernel("aten::gather.out", [x, 1, torch.tensor([[0, -1]]), False, torch.empty(1, 2)])
    with pytest.raises(
        RuntimeError, match="aten::gather.out: index 3 is out of bounds for dimension 0"
    ):
        run_kernel("aten::gather.out", [x, 0, torch.tensor([[3]]), False, torch.empty(1, 1)])
    with pytest.raises(RuntimeError, match="aten::gather.out: index size 5 exceeds"):
        run_kernel(
            "aten::gather.out",
            [x, 0, torch.zeros(1, 5, dtype=torch.int64), False, torch.empty(1, 5)],
        )
    with pytest.raises(RuntimeError, match="aten::gather.out: index must be int64 or int32"):
        run_kernel(
            "aten::gather.out",
            [x, 0, torch.zeros(1, 2, dtype=torch.float32), False, torch.empty(1, 2)],
        )


@pytest.mark.parametrize("ishape", [(5,), (2, 3), (), (0,), (2, 1, 4)])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_embedding(ishape, idx_dtype):
    g = gen(5)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.int8):
        w = rand((10, 7), dtype, g)
        idx = torch.randint(0, 10, ishape, generator=g, dtype=idx_dtype)
        e = torch.nn.functional.embedding(idx, w, padding_idx=2)
        run_into("aten::embedding.out", [w, idx, 2, False, False], e, random_order(e.dim(), g))
    wt = rand((7, 10), torch.float32, g).t()  # weight stored column-major
    idx = torch.randint(0, 10, ishape, generator=g, dtype=idx_dtype)
    run_into(
        "aten::embedding.out", [wt, idx, -1, False, False], torch.nn.functional.embedding(idx, wt)
    )


@pytest.mark.parametrize("bad", [10, -1, 1 << 33])
def test_embedding_rejects_out_of_range(bad):
    idx = torch.tensor([[1, 2], [bad, 0]])
    with pytest.raises(RuntimeError, match=f"aten::embedding.out: index {bad} is out of bounds"):
        run_kernel(
            "aten::embedding.out", [torch.zeros(10, 3), idx, -1, False, False, torch.empty(2, 2, 3)]
        )


def index_cases(g):
    """(self shape, indices builder) covering int, broadcast, None, separated and mask cases."""

    def i(*shape, hi):
        return torch.randint(-hi, hi, shape, generator=g)

    return [
        ((5, 4, 3), lambda: [i(6, hi=5)]),
        ((5, 4, 3), lambda: [None, i(2, 3, hi=4)]),
        ((5, 4, 3), lambda: [i(2, 1, hi=5), i(1, 4, hi=4)]),
        ((5, 4, 3), lambda: [i(4, hi=5), None, i(4, hi=3)]),  # separated: B goes first
        ((5, 4, 3), lambda: [None, None, i(2, 2, hi=3)]),
        ((5, 4, 3, 2), lambda: [None, i(3, hi=4), i(1, hi=3)]),
        ((5, 4, 3), lambda: [i(3, hi=5).to(torch.int32), i(3, hi=4), i(3, hi=3)]),
        ((5, 4, 3), lambda: [torch.tensor(2), None, i(3, hi=3)]),
        ((5, 4), lambda: [i(0, hi=5)]),
        ((6,), lambda: [i(2, 2, 2, hi=6)]),
        ((5, 4, 3), lambda: [torch.rand(5, 4, generator=g) > 0.5]),
        ((5, 4, 3), lambda: [None, torch.rand(4, generator=g) > 0.3]),
        ((5, 4, 3), lambda: [torch.rand(5, generator=g) > 2.0]),  # mask with no true element
    ]


def test_index_tensor():
    g = gen(6)
    for shape, build in index_cases(g):
        for dtype in ALL_DTYPES[::3] + [torch.bool]:
            x = with_dim_order(rand(shape, dtype, g), random_order(len(shape), g))
            indices = build()
            e = aten.index.Tensor(x, indices)
            run_into("aten::index.Tensor_out", [x, indices], e, random_order(e.dim(), g))


def test_index_tensor_rejects_out_of_range():
    x = torch.zeros(5, 4)
    with pytest.raises(
        RuntimeError, match="aten::index.Tensor_out: index 4 is out of bounds for dimension 1"
    ):
        run_kernel("aten::index.Tensor_out", [x, [None, torch.tensor([0, 4])], torch.empty(5, 2)])
    with pytest.raises(RuntimeError, match="aten::index.Tensor_out: index -6 is out of bounds"):
        run_kernel("aten::index.Tensor_out", [x, [torch.tensor([-6])], torch.empty(1, 4)])


def test_index_tensor_rejects_unsupported():
    x = torch.zeros(5, 4)
    with pytest.raises(RuntimeError, match="aten::index.Tensor_out: index 0 has dtype float32"):
        run_kernel("aten::index.Tensor_out", [x, [torch.zeros(2)], torch.empty(2, 4)])
    with pytest.raises(RuntimeError, match="aten::index.Tensor_out: index shapes do not broadcast"):
        run_kernel(
            "aten::index.Tensor_out",
            [x, [torch.tensor([0, 1]), torch.tensor([0, 1, 2])], torch.empty(3)],
        )
    with pytest.raises(RuntimeError, match="aten::index.Tensor_out: too many indices"):
        run_kernel("aten::index.Tensor_out", [x, [None, None, torch.tensor([0])], torch.empty(1)])
    with pytest.raises(RuntimeError, match="aten::index.Tensor_out: mask of size 3"):
        run_kernel(
            "aten::index.Tensor_out", [x, [torch.ones(3, dtype=torch.bool)], torch.empty(3, 4)]
        )
