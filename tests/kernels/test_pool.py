"""Pooling kernels against torch: max_pool2d_with_indices.out (values and int64 indices, NaN
and -inf windows, dilation), avg_pool2d.out (ceil_mode, padding with and without
count_include_pad, divisor_override) and _adaptive_avg_pool2d.out (uneven windows); 3-D and
4-D inputs.

Tolerance: max pooling is exact; averages rtol 1e-6, atol 1e-6 (float32 sums in another order);
float16/bfloat16 rtol 1e-2, atol 1e-2.
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

GEN = torch.Generator().manual_seed(0)
MAXPOOL = "aten::max_pool2d_with_indices.out"
AVGPOOL = "aten::avg_pool2d.out"
ADAPTIVE = "aten::_adaptive_avg_pool2d.out"


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape, generator=GEN).to(dtype)


def run_max_pool(x, kernel, stride, padding, dilation, ceil_mode):
    ref, ref_idx = torch.ops.aten.max_pool2d_with_indices(x, kernel, stride, padding, dilation,
                                                          ceil_mode)
    out, idx = torch.empty_like(ref), torch.empty_like(ref_idx)
    run_kernel(MAXPOOL, [x, kernel, stride, padding, dilation, ceil_mode, out, idx])
    return (out, idx), (ref, ref_idx)


# (input shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((1, 1, 1, 1), [1, 1], [1, 1], [0, 0], [1, 1], False),
    ((1, 64, 112, 112), [3, 3], [2, 2], [1, 1], [1, 1], False),  # resnet stem
    ((2, 3, 9, 7), [2, 2], [], [0, 0], [1, 1], False),  # empty stride = kernel
    ((2, 3, 9, 7), [3, 2], [2, 1], [1, 1], [1, 1], True),
    ((1, 2, 10, 11), [3, 3], [2, 2], [1, 0], [2, 2], False),
    ((1, 2, 8, 8), [3, 3], [3, 3], [1, 1], [1, 1], True),  # ceil drops the last window
    ((3, 5, 6), [2], [2], [1], [1], True),  # 3-D input, one-value lists
]


@pytest.mark.parametrize("shape,kernel,stride,padding,dilation,ceil_mode", MAX_CASES)
def test_max_pool(shape, kernel, stride, padding, dilation, ceil_mode):
    (out, idx), (ref, ref_idx) = run_max_pool(rand(*shape), kernel, stride, padding, dilation,
                                              ceil_mode)
    assert_close(out, ref, atol=0, rtol=0, what=f"max_pool {shape} values")
    assert torch.equal(idx, ref_idx), f"max_pool {shape} indices"


def test_max_pool_nan_and_ties():
    x = torch.tensor([[[[1.0, float("nan"), 3.0, 3.0],
                        [float("nan"), 0.0, 3.0, -float("inf")],
                        [-float("inf"), -float("inf"), 2.0, 2.0],
                        [-float("inf"), -float("inf"), 2.0, 2.0]]]])
    (out, idx), (ref, ref_idx) = run_max_pool(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    torch.testing.assert_close(out, ref, atol=0, rtol=0, equal_nan=True)
    assert torch.equal(idx, ref_idx), f"indices {idx} != {ref_idx}"


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_max_pool_dtypes(dtype):
    (out, idx), (ref, ref_idx) = run_max_pool(rand(1, 3, 7, 7, dtype=dtype), [3, 3], [2, 2],
                                              [1, 1], [1, 1], False)
    assert_close(out, ref, atol=0, rtol=0, what=f"max_pool {dtype}")
    assert torch.equal(idx, ref_idx)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64])
def test_max_pool_integers(dtype):
    # torch's CPU max_pool2d/3d take integer dtypes; ties (few distinct values, the dtype's lowest
    # included) keep the first position, as torch's.
    g = torch.Generator().manual_seed(5)
    lowest = torch.iinfo(dtype).min
    x = torch.randint(0, 3, (2, 3, 7, 6), generator=g).to(dtype) + lowest
    (out, idx), (ref, ref_idx) = run_max_pool(x, [3, 2], [2, 1], [1, 1], [1, 2], True)
    assert torch.equal(out, ref) and torch.equal(idx, ref_idx), dtype
    x3 = torch.randint(0, 3, (1, 2, 5, 4, 6), generator=g).to(dtype) + lowest
    ref, ref_idx = torch.ops.aten.max_pool3d_with_indices(x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], False)
    out, idx = torch.empty_like(ref), torch.empty_like(ref_idx)
    run_kernel("aten::max_pool3d_with_indices.out", [x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], [1, 1, 2], False, out, idx])
    assert torch.equal(out, ref) and torch.equal(idx, ref_idx), dtype
    with pytest.raises(RuntimeError, match=f"{MAXPOOL}: dtypes bool -> bool not supported"):
        b = torch.zeros(1, 1, 4, 4, dtype=torch.bool)
        run_kernel(MAXPOOL, [b, [2, 2], [2, 2], [0, 0], [1, 1], False, torch.empty(1, 1, 2, 2, dtype=torch.bool),
                             torch.empty(1, 1, 2, 2, dtype=torch.int64)])


def test_max_pool_rejects_large_padding():
    with pytest.raises(RuntimeError, match=f"{MAXPOOL}: pad should be at most half"):
        run_kernel(MAXPOOL, [rand(1, 1, 5, 5), [2, 2], [1, 1], [2, 2], [1, 1], False,
                             torch.empty(1, 1, 8, 8), torch.empty(1, 1, 8, 8, dtype=torch.int64)])


def test_max_pool_rejects_wrong_indices_dtype():
    with pytest.raises(RuntimeError, match=f"{MAXPOOL}: indices must be int64"):
        run_kernel(MAXPOOL, [rand(1, 1, 4, 4), [2, 2], [2, 2], [0, 0], [1, 1], False,
                             torch.empty(1, 1, 2, 2), torch.empty(1, 1, 2, 2, dtype=torch.int32)])


# (input shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)
AVG_CASES = [
    ((1, 1, 1, 1), [1, 1], [1, 1], [0, 0], False, True, None),
    ((2, 3, 8, 8), [2, 2], [2, 2], [0, 0], False, True, None),
    ((1, 4, 7, 9), [3, 3], [2, 2], [1, 1], False, True, None),
    ((1, 4, 7, 9), [3, 3], [2, 2], [1, 1], False, False, None),
    ((1, 4, 7, 9), [3, 3], [2, 2], [1, 1], True, True, None),  # last window clipped by input
    ((1, 4, 7, 9), [3, 3], [2, 2], [1, 1], True, False, None),
    ((1, 2, 6, 6), [3, 2], [], [1, 0], False, True, 5),
    ((2, 5, 5), [2, 2], [2, 2], [1, 1], True, False, None),  # 3-D input
    ((1, 1280, 7, 7), [7, 7], [7, 7], [0, 0], False, True, None),  # global pooling
]


@pytest.mark.parametrize("shape,kernel,stride,padding,ceil_mode,include_pad,divisor", AVG_CASES)
def test_avg_pool(shape, kernel, stride, padding, ceil_mode, include_pad, divisor):
    x = rand(*shape)
    ref = torch.ops.aten.avg_pool2d(x.double(), kernel, stride, padding, ceil_mode, include_pad,
                                    divisor).float()
    out = torch.empty_like(ref)
    run_kernel(AVGPOOL, [x, kernel, stride, padding, ceil_mode, include_pad, divisor, out])
    assert_close(out, ref, atol=1e-6, rtol=1e-6, what=f"avg_pool {shape} k{kernel} s{stride} "
                 f"p{padding} ceil={ceil_mode} pad={include_pad} div={divisor}")


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.bfloat16])
def test_avg_pool_dtypes(dtype):
    x = rand(1, 3, 6, 6, dtype=dtype)
    ref = torch.ops.aten.avg_pool2d(x.double(), [2, 2], [2, 2], [1, 1], True, False).to(dtype)
    out = torch.empty_like(ref)
    run_kernel(AVGPOOL, [x, [2, 2], [2, 2], [1, 1], True, False, None, out])
    assert_close(out, ref, atol=1e-2, rtol=1e-2, what=f"avg_pool {dtype}")


def test_avg_pool_int64_truncates_as_torch():
    # torch's CPU avg_pool2d/3d take int64: an int64 sum divided with C++'s truncation (toward
    # zero for negative sums), whatever the divisor rule.
    g = torch.Generator().manual_seed(4)
    x2 = torch.randint(-50, 50, (2, 3, 7, 6), generator=g)
    x3 = torch.randint(-50, 50, (1, 2, 5, 4, 6), generator=g)
    for include_pad in (True, False):
        for divisor in (None, 3, -1):
            ref = torch.ops.aten.avg_pool2d(x2, [3, 2], [2, 2], [1, 1], True, include_pad, divisor)
            out = torch.empty_like(ref)
            run_kernel(AVGPOOL, [x2, [3, 2], [2, 2], [1, 1], True, include_pad, divisor, out])
            assert torch.equal(out, ref), (include_pad, divisor)
            ref = torch.ops.aten.avg_pool3d(x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], False, include_pad, divisor)
            out = torch.empty_like(ref)
            run_kernel("aten::avg_pool3d.out", [x3, [2, 3, 2], [1, 2, 2], [1, 1, 0], False, include_pad, divisor, out])
            assert torch.equal(out, ref), (include_pad, divisor)
    with pytest.raises(RuntimeError, match=f"{AVGPOOL}: dtypes int32 -> int32 not supported"):
        x = x2.int()
        run_kernel(AVGPOOL, [x, [2, 2], [2, 2], [0, 0], False, True, None, torch.empty(2, 3, 3, 3, dtype=torch.int32)])


def test_avg_pool_rejects_zero_divisor():
    with pytest.raises(RuntimeError, match=f"{AVGPOOL}: divisor must be not zero"):
        run_kernel(AVGPOOL, [rand(1, 1, 4, 4), [2, 2], [2, 2], [0, 0], False, True, 0,
                             torch.empty(1, 1, 2, 2)])


def test_avg_pool_rejects_wrong_out_shape():
    with pytest.raises(RuntimeError, match=AVGPOOL):
        run_kernel(AVGPOOL, [rand(1, 1, 4, 4), [2, 2], [2, 2], [0, 0], False, True, None,
                             torch.empty(1, 1, 3, 3)])


@pytest.mark.parametrize("shape,size", [((1, 1280, 7, 7), [1, 1]), ((2, 3, 10, 9), [3, 4]),
                                        ((2, 3, 5, 5), [7, 6]), ((4, 9, 8), [4, 3]),
                                        ((1, 2, 1, 1), [2, 3])])
def test_adaptive_avg_pool(shape, size):
    x = rand(*shape)
    ref = torch.ops.aten._adaptive_avg_pool2d(x.double(), size).float()
    out = torch.empty_like(ref)
    run_kernel(ADAPTIVE, [x, size, out])
    assert_close(out, ref, atol=1e-6, rtol=1e-6, what=f"adaptive_avg_pool {shape} -> {size}")


def test_adaptive_avg_pool_half():
    x = rand(1, 3, 9, 9, dtype=torch.float16)
    ref = torch.ops.aten._adaptive_avg_pool2d(x.double(), [2, 2]).half()
    out = torch.empty_like(ref)
    run_kernel(ADAPTIVE, [x, [2, 2], out])
    assert_close(out, ref, atol=1e-2, rtol=1e-2, what="adaptive_avg_pool half")


def test_pool_rejects_channels_last():
    x = rand(1, 3, 4, 4).to(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match=f"{ADAPTIVE}: only the default"):
        run_kernel(ADAPTIVE, [x, [1, 1], torch.empty(1, 3, 1, 1)])


def test_pool_rejects_2d_input():
    with pytest.raises(RuntimeError, match=f"{ADAPTIVE}: expected 3-D or 4-D input"):
        run_kernel(ADAPTIVE, [rand(4, 4), [1, 1], torch.empty(1, 1)])
