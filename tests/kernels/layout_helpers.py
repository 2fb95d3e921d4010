"""Tensor factories for layout-sensitive kernel tests: every dtype, any dim order."""

import torch

ALL_DTYPES = [
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.bool,
]


def rand(shape, dtype, g):
    """Random values that every dtype represents exactly (so copies compare bit for bit)."""
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g) * 8).to(dtype)
    lo = 0 if dtype == torch.uint8 else -100
    return torch.randint(lo, 100, shape, generator=g).to(dtype)


def with_dim_order(t, order):
    """Same values as `t`, stored densely with dims in memory order `order` (outermost first)."""
    inverse = [order.index(d) for d in range(len(order))]
    return t.permute(order).contiguous().permute(inverse)


def empty_with_dim_order(shape, dtype, order):
    return with_dim_order(torch.empty(shape, dtype=dtype), order)


def random_order(rank, g):
    return torch.randperm(rank, generator=g).tolist() if rank else []


def assert_equal(actual, expected, what=""):
    assert actual.shape == expected.shape, (
        f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    )
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert torch.equal(actual, expected), f"{what}: values differ"
