"""ExecuTorch dim-order copy ops against torch: dim_order_ops::_to_dim_order_copy.out (dtype and
layout conversion) and dim_order_ops::_clone_dim_order.out (layout only).

Tolerance: none. Conversions must match torch's `.to()` bit for bit (values are chosen inside
every destination type's range, where C++ and torch casts agree).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import (
    ALL_DTYPES,
    assert_equal,
    empty_with_dim_order,
    rand,
    with_dim_order,
)

TO = "dim_order_ops::_to_dim_order_copy.out"
CLONE = "dim_order_ops::_clone_dim_order.out"
CONTIGUOUS = [0, 1, 2, 3]
CHANNELS_LAST = [0, 2, 3, 1]


def gen(seed):
    return torch.Generator().manual_seed(seed)


def source(shape, dtype, g):
    # Non-negative, so casts into uint8 are defined in C++ as they are in torch.
    x = rand(shape, dtype, g)
    return x.abs() if dtype not in (torch.bool, torch.uint8) else x


@pytest.mark.parametrize("src_dtype", ALL_DTYPES)
def test_to_dim_order_copy_converts_every_dtype_pair(src_dtype):
    g = gen(1)
    x = source((2, 3, 4, 5), src_dtype, g)
    for dst_dtype in ALL_DTYPES:
        expected = x.to(dst_dtype)
        out = torch.empty_like(expected)
        run_kernel(TO, [x, False, CONTIGUOUS, out])
        assert_equal(out, expected, f"{src_dtype} -> {dst_dtype}")


@pytest.mark.parametrize(
    "src_order,dst_order",
    [(CONTIGUOUS, CHANNELS_LAST), (CHANNELS_LAST, CONTIGUOUS), (CHANNELS_LAST, CHANNELS_LAST)],
)
@pytest.mark.parametrize(
    "shape", [(2, 3, 4, 5), (1, 16, 7, 9), (3, 1, 2, 2), (2, 0, 3, 3), (1, 64, 1, 1)]
)
def test_to_dim_order_copy_changes_layout(src_order, dst_order, shape):
    g = gen(2)
    for src_dtype, dst_dtype in [
        (torch.float32, torch.float32),
        (torch.float32, torch.float16),
        (torch.int64, torch.float32),
        (torch.bool, torch.bool),
        (torch.bfloat16, torch.float32),
    ]:
        x = with_dim_order(source(shape, src_dtype, g), src_order)
        out = empty_with_dim_order(shape, dst_dtype, dst_order)
        run_kernel(TO, [x, False, dst_order, out])
        assert_equal(out, x.to(dst_dtype), f"{src_order}->{dst_order} {src_dtype}->{dst_dtype}")
        expected_cl = dst_order == CHANNELS_LAST and shape[1] > 1 and 0 not in shape
        assert out.is_contiguous(memory_format=torch.channels_last) or not expected_cl


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (2, 0)])
def test_to_dim_order_copy_other_ranks(shape):
    g = gen(3)
    x = source(shape, torch.float32, g)
    out = torch.empty(shape, dtype=torch.int32)
    run_kernel(TO, [x, False, list(range(len(shape))), out])
    assert_equal(out, x.to(torch.int32))


def test_to_dim_order_copy_none_keeps_self_layout():
    g = gen(4)
    x = source((2, 3, 4, 5), torch.float32, g).to(memory_format=torch.channels_last)
    out = torch.empty_like(x, dtype=torch.float16)  # keeps channels-last
    run_kernel(TO, [x, False, None, out])
    assert_equal(out, x.to(torch.float16))
    with pytest.raises(RuntimeError, match=f"{TO}: dim_order is None"):
        run_kernel(TO, [x, False, None, torch.empty(2, 3, 4, 5)])


def test_to_dim_order_copy_rejects_mismatched_dim_order():
    x = torch.zeros(2, 3, 4, 5)
    with pytest.raises(RuntimeError, match=f"{TO}: out's dim order does not match"):
        run_kernel(TO, [x, False, CHANNELS_LAST, torch.empty(2, 3, 4, 5)])
    with pytest.raises(RuntimeError, match=f"{TO}: dim_order is not a permutation"):
        run_kernel(TO, [x, False, [0, 1, 1, 3], torch.empty(2, 3, 4, 5)])
    with pytest.raises(RuntimeError, match=f"{TO}: dim_order has 3 entries"):
        run_kernel(TO, [x, False, [0, 1, 2], torch.empty(2, 3, 4, 5)])
    with pytest.raises(RuntimeError, match=f"{TO}: out size 4 at dim 2|{TO}.*shape"):
        run_kernel(TO, [x, False, CONTIGUOUS, torch.empty(2, 3, 5, 4)])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_clone_dim_order(dtype):
    g = gen(5)
    x = rand((3, 5, 6, 7), dtype, g)
    for src_order in (CONTIGUOUS, CHANNELS_LAST):
        for dst_order in (CONTIGUOUS, CHANNELS_LAST):
            xs = with_dim_order(x, src_order)
            out = empty_with_dim_order(x.shape, dtype, dst_order)
            run_kernel(CLONE, [xs, False, dst_order, out])
            assert_equal(out, x, f"{src_order}->{dst_order}")
    out = torch.empty_like(x)
    run_kernel(CLONE, [x, False, None, out])
    assert_equal(out, x)


def test_clone_dim_order_rejects_dtype_change():
    with pytest.raises(RuntimeError, match=f"{CLONE}: out has dtype float16"):
        run_kernel(
            CLONE, [torch.zeros(2, 3), False, [0, 1], torch.empty(2, 3, dtype=torch.float16)]
        )
