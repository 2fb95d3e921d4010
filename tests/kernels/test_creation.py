"""Creation and conversion kernels (full, full_like, scalar_tensor, fill, arange, _to_copy,
cumsum) against torch: dtypes, dim orders, 0-d and 0-size tensors.

Tolerances: fills, copies and integer results exact; arange float32 within 1e-6 relative
(torch's vectorised arange rounds differently by up to an ulp); cumsum float32/float64 within
1e-5 relative / 1e-5 absolute (both accumulate in double), float16 within 2e-3 / 1e-3 and
bfloat16 within 1.6e-2 / 1e-2 (one ulp of the storage type).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

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


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("value", [0, 3, -2, 1.5, True, float("inf")])
def test_full(dtype, value):
    for size in [(), (0,), (3,), (2, 3, 4)]:
        try:
            expected = torch.full(size, value, dtype=dtype)
        except RuntimeError:  # torch refuses (inf into an integer tensor); so must we
            with pytest.raises(RuntimeError, match=r"aten::full\.out"):
                run_kernel("aten::full.out", [list(size), value, torch.empty(size, dtype=dtype)])
            continue
        out = torch.empty(size, dtype=dtype)
        run_kernel("aten::full.out", [list(size), value, out])
        assert_close(out, expected, atol=0, rtol=0, what=f"full {size} {value!r}")


def test_full_int64_exact_beyond_double():
    out = torch.empty(2, dtype=torch.int64)
    run_kernel("aten::full.out", [[2], 2**62 + 1, out])
    assert out.tolist() == [2**62 + 1] * 2


def test_full_like_and_fill_keep_out_layout():
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    out = torch.empty(2, 3, 4, 5, dtype=torch.int32).to(memory_format=torch.channels_last)
    run_kernel("aten::full_like.out", [x, 7, None, out])
    assert_close(out, torch.full_like(x, 7, dtype=torch.int32), atol=0, rtol=0, what="full_like")
    out = torch.empty(2, 3, 4, 5)
    run_kernel("aten::fill.Scalar_out", [x, -0.25, out])
    assert_close(out, torch.full_like(x, -0.25), atol=0, rtol=0, what="fill.Scalar")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill_tensor_and_scalar_tensor(dtype):
    x = torch.zeros(3, 4, dtype=dtype)
    value = torch.tensor(2.5, dtype=torch.float64)
    out = torch.empty_like(x)
    run_kernel("aten::fill.Tensor_out", [x, value, out])
    assert_close(out, torch.ops.aten.fill.Tensor(x, value), atol=0, rtol=0, what="fill.Tensor")
    out = torch.empty((), dtype=dtype)
    run_kernel("aten::scalar_tensor.out", [5, out])
    assert_close(out, torch.scalar_tensor(5, dtype=dtype), atol=0, rtol=0, what="scalar_tensor")


ARANGE_CASES = [
    (0, 10, 1),
    (0, 10, 3),
    (2, -7, -2),
    (0, 1, 0.1),
    (-1.5, 2.25, 0.25),
    (1, 1, 1),
    (0, 5.5, 1),
    (10, 0, -0.3),
    (0.5, 5, 1),
    (-3, 4, 2),
    (0, 1, 1 / 3),
]


@pytest.mark.parametrize("start,end,step", ARANGE_CASES)
@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.uint8,
    ],
)
def test_arange_start(start, end, step, dtype):
    if not dtype.is_floating_point and step != int(step):
        return  # torch truncates the step to 0 there (test_arange_fractional_step_into_int64)
    try:
        expected = torch.arange(start, end, step, dtype=dtype)
    except RuntimeError:
        return  # a negative range into uint8
    out = torch.empty(expected.shape, dtype=dtype)
    run_kernel("aten::arange.start_out", [start, end, step, out])
    if dtype in (torch.float16, torch.bfloat16):
        # torch rounds each vector's first element to the storage type before adding the
        # lanes' steps, so elements may differ by one ulp of the largest magnitude.
        eps = torch.finfo(dtype).eps
        atol, rtol = eps * max(abs(start), abs(end)), eps
    else:
        atol = rtol = 1e-6 if dtype.is_floating_point else 0
    assert_close(out, expected, atol=atol, rtol=rtol, what=f"arange({start}, {end}, {step})")


def test_arange_fractional_step_into_int64():
    with pytest.raises(ValueError, match="step must be nonzero"):
        torch.arange(0, 1, 0.1, dtype=torch.int64)
    with pytest.raises(RuntimeError, match=r"aten::arange\.start_out.*nonzero"):
        run_kernel("aten::arange.start_out", [0, 1, 0.1, torch.empty(10, dtype=torch.int64)])


@pytest.mark.parametrize("end", [0, 1, 7, 6.5])
@pytest.mark.parametrize("dtype", [torch.int64, torch.float32])
def test_arange_end(end, dtype):
    expected = torch.arange(end, dtype=dtype)
    out = torch.empty(expected.shape, dtype=dtype)
    run_kernel("aten::arange.out", [end, out])
    assert_close(out, expected, atol=0, rtol=0, what=f"arange({end})")


def test_arange_rejects_wrong_length_and_bad_steps():
    with pytest.raises(RuntimeError, match=r"aten::arange\.start_out"):
        run_kernel("aten::arange.start_out", [0, 1, 0.1, torch.empty(11)])  # torch makes 10
    with pytest.raises(RuntimeError, match=r"aten::arange\.start_out.*nonzero"):
        run_kernel("aten::arange.start_out", [0, 5, 0, torch.empty(5)])
    with pytest.raises(RuntimeError, match=r"aten::arange\.start_out.*step sign"):
        run_kernel("aten::arange.start_out", [0, 5, -1, torch.empty(5)])
    with pytest.raises(RuntimeError, match=r"aten::arange\.out.*bool"):
        run_kernel("aten::arange.out", [2, torch.empty(2, dtype=torch.bool)])


def to_copy_sources(g):
    yield torch.randn(3, 5, generator=g) * 300  # beyond int8/uint8 ranges: C++ casts
    yield torch.tensor([0.0, -0.0, 1.5, -2.5, 0.499, 65504.0, 1e-8, 3.0e5])
    yield torch.randint(-(2**40), 2**40, (7,), generator=g)
    yield torch.randint(-128, 127, (2, 3, 4), generator=g, dtype=torch.int8)
    yield torch.rand(4, 4, generator=g) > 0.5
    yield (torch.randn(2, 3, generator=g) * 50).to(torch.float16)
    yield (torch.randn(2, 3, generator=g) * 50).to(torch.bfloat16)
    yield torch.tensor(2.75, dtype=torch.float64)
    yield torch.empty(0, 3, dtype=torch.int32)


def is_undefined_cast(x, dtype):
    """C++ float -> int casts outside the target range are undefined; torch's results then
    depend on how it vectorises, so those elements are not compared."""
    if not x.dtype.is_floating_point or dtype.is_floating_point or dtype == torch.bool:
        return torch.zeros(x.shape, dtype=torch.bool)
    info = torch.iinfo(dtype)
    xd = x.double().trunc()
    return (xd < info.min) | (xd > info.max)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_to_copy_all_dtypes(dtype):
    g = torch.Generator().manual_seed(0)
    for x in to_copy_sources(g):
        expected = x.to(dtype)
        out = torch.empty_like(expected)
        run_kernel("aten::_to_copy.out", [x, False, None, out])
        keep = ~is_undefined_cast(x, dtype)
        assert_close(out[keep], expected[keep], atol=0, rtol=0, what=f"{x.dtype} -> {dtype}")


@pytest.mark.parametrize("layouts", [("cl", "contig"), ("contig", "cl"), ("cl", "cl")])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_to_copy_dim_orders(layouts, dtype):
    fmt = {"cl": torch.channels_last, "contig": torch.contiguous_format}
    x = torch.randn(2, 3, 4, 5).to(memory_format=fmt[layouts[0]])
    out = torch.empty(2, 3, 4, 5, dtype=dtype).to(memory_format=fmt[layouts[1]])
    memory_format = 2 if layouts[1] == "cl" else 0  # ignored: out's own layout is written
    run_kernel("aten::_to_copy.out", [x, False, memory_format, out])
    assert_close(out, x.to(dtype), atol=0, rtol=0, what=f"_to_copy {layouts}")
    assert out.is_contiguous(memory_format=fmt[layouts[1]])


def test_to_copy_rejects_bad_inputs():
    with pytest.raises(RuntimeError, match=r"aten::_to_copy\.out"):
        run_kernel("aten::_to_copy.out", [torch.randn(2, 3), False, None, torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match=r"aten::_to_copy\.out argument 1"):
        run_kernel("aten::_to_copy.out", [torch.randn(2, 3), 0.5, None, torch.empty(2, 3)])


def cumsum_tolerance(dtype):
    if dtype == torch.float16:
        return 1e-3, 2e-3
    if dtype == torch.bfloat16:
        return 1e-2, 1.6e-2
    if dtype.is_floating_point:
        return 1e-5, 1e-5
    return 0, 0


@pytest.mark.parametrize(
    "shape", [(), (0,), (7,), (3, 5), (2, 3, 4), (4, 0, 2), (2, 70, 3), (3, 1, 80)]
)
@pytest.mark.parametrize(
    "dtype",
    [
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.int32,
        torch.bool,
    ],
)
def test_cumsum(shape, dtype):
    g = torch.Generator().manual_seed(1)
    x = (
        (torch.randn(shape, generator=g) * 4).to(dtype)
        if dtype != torch.bool
        else torch.rand(shape, generator=g) > 0.5
    )
    for dim in range(-max(len(shape), 1), max(len(shape), 1)):
        expected = torch.cumsum(x, dim)
        out = torch.empty_like(expected)
        run_kernel("aten::cumsum.out", [x, dim, None, out])
        atol, rtol = cumsum_tolerance(dtype)
        assert_close(out, expected, atol=atol, rtol=rtol, what=f"cumsum {shape} dim {dim}")


def test_cumsum_dtype_argument():
    x = torch.tensor([[1, 0, 1], [1, 1, 0]], dtype=torch.int32)  # e.g. an attention mask
    expected = torch.cumsum(x, 1, dtype=torch.float32)
    out = torch.empty_like(expected)
    run_kernel("aten::cumsum.out", [x, 1, 6, out])  # 6 = c10 Float
    assert_close(out, expected, atol=0, rtol=0, what="cumsum dtype=float32")
    with pytest.raises(RuntimeError, match=r"aten::cumsum\.out.*dtype"):
        run_kernel("aten::cumsum.out", [x, 1, 4, out])  # 4 = Long, but out is float32


@pytest.mark.parametrize("dim", [0, 1, 2, 3])
def test_cumsum_channels_last(dim):
    x = torch.randn(2, 3, 4, 5).to(memory_format=torch.channels_last)
    for fmt in [torch.channels_last, torch.contiguous_format]:
        out = torch.empty(2, 3, 4, 5).to(memory_format=fmt)
        run_kernel("aten::cumsum.out", [x, dim, None, out])
        assert_close(out, torch.cumsum(x, dim), atol=1e-5, rtol=1e-5, what=f"cumsum cl dim {dim}")


def test_cumsum_rejects_bad_inputs():
    with pytest.raises(RuntimeError, match=r"aten::cumsum\.out.*out of range"):
        run_kernel("aten::cumsum.out", [torch.randn(2, 3), 2, None, torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match=r"aten::cumsum\.out"):
        run_kernel("aten::cumsum.out", [torch.randn(2, 3), 0, None, torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match=r"aten::cumsum\.out argument 1"):
        run_kernel("aten::cumsum.out", [torch.randn(2, 3), 0.5, None, torch.empty(2, 3)])


def test_fill_family_rejects_bad_inputs():
    with pytest.raises(RuntimeError, match=r"aten::full\.out"):
        run_kernel("aten::full.out", [[2, 3], 1.0, torch.empty(3, 2)])
    with pytest.raises(RuntimeError, match=r"aten::full\.out.*overflow"):
        run_kernel("aten::full.out", [[2], 300, torch.empty(2, dtype=torch.int8)])
    with pytest.raises(RuntimeError, match=r"aten::full\.out argument 0"):
        run_kernel("aten::full.out", [2, 1.0, torch.empty(2)])
    with pytest.raises(RuntimeError, match=r"aten::fill\.Tensor_out.*0-d"):
        run_kernel("aten::fill.Tensor_out", [torch.empty(2), torch.ones(2), torch.empty(2)])
    with pytest.raises(RuntimeError, match=r"aten::scalar_tensor\.out"):
        run_kernel("aten::scalar_tensor.out", [1, torch.empty(1)])
    with pytest.raises(RuntimeError, match=r"aten::full_like\.out"):
        run_kernel("aten::full_like.out", [torch.empty(2, 3), 1, None, torch.empty(2, 2)])


def test_to_copy_float16_bfloat16_bit_exact():
    """Every float16/bfloat16 value, and floats around every rounding boundary, convert with
    round-to-nearest-even exactly as torch does (NaNs compared as NaN)."""
    halves = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    bf16s = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    g = torch.Generator().manual_seed(3)
    random_bits = torch.randint(-(2**31), 2**31, (1 << 16,), generator=g, dtype=torch.int64)
    floats = torch.cat(
        [
            halves.float(),
            bf16s.float(),
            random_bits.to(torch.int32).view(torch.float32),
            (halves.float().view(torch.int32) + 0x1000).view(
                torch.float32
            ),  # float16 halfway points
            (halves.float().view(torch.int32) + 0x0FFF).view(torch.float32),
            (bf16s.float().view(torch.int32) + 0x8000).view(
                torch.float32
            ),  # bfloat16 halfway points
        ]
    )
    for x, dtype in [
        (halves, torch.float32),
        (bf16s, torch.float32),
        (floats, torch.float16),
        (floats, torch.bfloat16),
        (halves, torch.bfloat16),
        (bf16s, torch.float16),
    ]:
        out = torch.empty(x.shape, dtype=dtype)
        run_kernel("aten::_to_copy.out", [x, False, None, out])
        what = f"{x.dtype} -> {dtype}"
        torch.testing.assert_close(
            out,
            x.to(dtype),
            atol=0,
            rtol=0,
            equal_nan=True,
            msg=lambda m, what=what: f"{what}: {m}",
        )
