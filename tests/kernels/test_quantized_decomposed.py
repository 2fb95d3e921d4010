"""quantized_decomposed quantize/dequantize kernels against torch.ops.quantized_decomposed.

Tolerances: quantized outputs exact (same float32 arithmetic and round-half-even as torch's
decomposition); dequantized outputs exact for float32 scales, within 1 float32 ulp (rtol 2e-7)
for float64 scales (torch rounds the float64 product to float32 the same way, but fused
compiler code may differ in the last bit). Covers per tensor (default and .tensor forms), per
channel on every axis, negative axes, channels-last inputs, uint8/int8/int16/int32, edge sizes
and values exactly halfway between quantization steps.
"""

import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
from kernel_harness import run_kernel

QD = torch.ops.quantized_decomposed
# c10 ScalarType numbers (ScalarType arguments arrive as ints).
SCALAR_TYPE = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.float32: 6}
RANGES = {torch.uint8: (0, 255), torch.int8: (-128, 127), torch.int16: (-32768, 32767),
          torch.int32: (-(2**20), 2**20)}
SHAPES = [(0,), (1,), (7,), (3, 5), (2, 3, 4, 5), (1, 8, 3, 3), (2, 1, 33)]


def floats(shape, g, scale=4.0):
    x = torch.randn(shape, generator=g) * scale
    if x.numel() > 3:  # values exactly between two steps exercise round-half-even
        x.view(-1)[:3] = torch.tensor([0.25, -0.75, 1.25]) * 0.5
    return x


@pytest.mark.parametrize("dtype", list(RANGES))
@pytest.mark.parametrize("shape", SHAPES)
def test_quantize_dequantize_per_tensor(dtype, shape):
    g = torch.Generator().manual_seed(hash((str(dtype), shape)) % 2**31)
    qmin, qmax = RANGES[dtype]
    x = floats(shape, g)
    for scale, zp in [(0.25, 0), (0.05, 3), (0.0173, qmin + 5)]:
        zp = max(min(zp, qmax), qmin)
        expected = QD.quantize_per_tensor(x, scale, zp, qmin, qmax, dtype)
        out = torch.empty(shape, dtype=dtype)
        run_kernel("quantized_decomposed::quantize_per_tensor.out",
                   [x, scale, zp, qmin, qmax, SCALAR_TYPE[dtype], out])
        assert torch.equal(out, expected), f"quantize {dtype} {shape} scale={scale} zp={zp}"
        out_t = torch.empty(shape, dtype=dtype)
        run_kernel("quantized_decomposed::quantize_per_tensor.Tensor_out",
                   [x, torch.tensor([scale], dtype=torch.float64), torch.tensor([zp]), qmin, qmax,
                    SCALAR_TYPE[dtype], out_t])
        assert torch.equal(out_t, expected)

        back = QD.dequantize_per_tensor(expected, scale, zp, qmin, qmax, dtype)
        got = torch.empty(shape)
        run_kernel("quantized_decomposed::dequantize_per_tensor.out",
                   [expected, scale, zp, qmin, qmax, SCALAR_TYPE[dtype], None, got])
        assert torch.equal(got, back), f"dequantize {dtype} {shape}"
        got_t = torch.empty(shape)
        run_kernel("quantized_decomposed::dequantize_per_tensor.Tensor_out",
                   [expected, torch.tensor(scale), torch.tensor(zp, dtype=torch.int32), qmin, qmax,
                    SCALAR_TYPE[dtype], SCALAR_TYPE[torch.float32], got_t])
        assert torch.equal(got_t, back)


def test_per_tensor_channels_last_and_clamping():
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(2, 5, 3, 4, generator=g) * 100).contiguous(memory_format=torch.channels_last)
    expected = QD.quantize_per_tensor(x, 0.1, -3, -128, 127, torch.int8)
    out = torch.empty_like(x, dtype=torch.int8)  # channels-last too
    run_kernel("quantized_decomposed::quantize_per_tensor.out", [x, 0.1, -3, -128, 127, 1, out])
    assert torch.equal(out, expected)
    assert int(out.min()) == -128 and int(out.max()) == 127  # saturates
    back = torch.empty_like(x)
    run_kernel("quantized_decomposed::dequantize_per_tensor.out", [out, 0.1, -3, -128, 127, 1, None, back])
    assert torch.equal(back, QD.dequantize_per_tensor(expected, 0.1, -3, -128, 127, torch.int8))


@pytest.mark.parametrize("scale_dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("dtype", [torch.int8, torch.uint8, torch.int16])
@pytest.mark.parametrize("shape", [(4,), (3, 5), (6, 3, 3, 3), (2, 7, 1, 4), (1, 3, 0)])
def test_quantize_dequantize_per_channel(scale_dtype, dtype, shape):
    g = torch.Generator().manual_seed(len(shape) * 31 + shape[0])
    qmin, qmax = RANGES[dtype]
    x = floats(shape, g)
    for axis in range(-len(shape), len(shape)):
        n = shape[axis]
        scales = (torch.rand(n, generator=g, dtype=torch.float64) * 0.1 + 0.01).to(scale_dtype)
        zps = torch.randint(qmin // 2, qmax // 2 + 1, (n,), generator=g) if dtype != torch.int8 else \
            torch.zeros(n, dtype=torch.int64)
        # torch's decomposition returns a permuted layout for axis != 0; compare values.
        expected = QD.quantize_per_channel(x, scales, zps, axis % len(shape), qmin, qmax, dtype).contiguous()
        out = torch.empty(shape, dtype=dtype)
        run_kernel("quantized_decomposed::quantize_per_channel.out",
                   [x, scales, zps, axis, qmin, qmax, SCALAR_TYPE[dtype], out])
        assert torch.equal(out, expected), f"quantize_per_channel {shape} axis={axis}"
        back = QD.dequantize_per_channel(expected, scales, zps, axis % len(shape), qmin, qmax, dtype)
        got = torch.empty(shape)
        run_kernel("quantized_decomposed::dequantize_per_channel.out",
                   [expected, scales, zps, axis, qmin, qmax, SCALAR_TYPE[dtype], None, got])
        torch.testing.assert_close(got, back, atol=0, rtol=2e-7)
        no_zp = QD.dequantize_per_channel(expected, scales, None, axis % len(shape), qmin, qmax, dtype)
        run_kernel("quantized_decomposed::dequantize_per_channel.out",
                   [expected, scales, None, axis, qmin, qmax, SCALAR_TYPE[dtype], None, got])
        torch.testing.assert_close(got, no_zp, atol=0, rtol=2e-7)


def test_per_channel_channels_last():
    g = torch.Generator().manual_seed(3)
    x = torch.randn(4, 6, 3, 3, generator=g).contiguous(memory_format=torch.channels_last)
    scales = torch.rand(6, generator=g) * 0.05 + 0.01
    zps = torch.zeros(6, dtype=torch.int64)
    expected = QD.quantize_per_channel(x, scales, zps, 1, -127, 127, torch.int8)
    out = torch.empty_like(x, dtype=torch.int8)
    run_kernel("quantized_decomposed::quantize_per_channel.out", [x, scales, zps, 1, -127, 127, 1, out])
    assert torch.equal(out, expected)


def test_int32_full_range_saturates():
    # float(2**31 - 1) rounds to 2**31, which int32 cannot hold: the kernels saturate (torch's
    # own cast there is undefined, so this is checked against the bounds, not against torch).
    x = torch.tensor([1e12, -1e12, 3.0])
    out = torch.empty(3, dtype=torch.int32)
    run_kernel("quantized_decomposed::quantize_per_tensor.out", [x, 1.0, 0, -(2**31), 2**31 - 1, 3, out])
    assert out.tolist() == [2**31 - 1, -(2**31), 3]
    run_kernel("quantized_decomposed::quantize_per_channel.out",
               [x, torch.ones(3), torch.zeros(3, dtype=torch.int64), 0, -(2**31), 2**31 - 1, 3, out])
    assert out.tolist() == [2**31 - 1, -(2**31), 3]


def test_bad_inputs_name_the_op():
    x = torch.randn(4, 3)
    q = torch.empty(4, 3, dtype=torch.int8)
    cases = [
        ("quantized_decomposed::quantize_per_tensor.out", [x.double(), 0.1, 0, -128, 127, 1, q], "float32"),
        ("quantized_decomposed::quantize_per_tensor.out", [x, 0.1, 0, -128, 127, 0, q], "dtype"),
        ("quantized_decomposed::quantize_per_tensor.out", [x, 0.0, 0, -128, 127, 1, q], "scale"),
        ("quantized_decomposed::quantize_per_tensor.out", [x, 0.1, 0, -300, 127, 1, q], "range"),
        ("quantized_decomposed::quantize_per_tensor.out",
         [x, 0.1, 0, -128, 127, 1, torch.empty(3, 4, dtype=torch.int8)], "quantize_per_tensor"),
        ("quantized_decomposed::quantize_per_tensor.Tensor_out",
         [x, torch.tensor([0.1, 0.2]), torch.tensor([0]), -128, 127, 1, q], "one element"),
        ("quantized_decomposed::dequantize_per_tensor.out",
         [q, 0.1, 0, -128, 127, 0, None, torch.empty(4, 3)], "dtype"),
        ("quantized_decomposed::dequantize_per_tensor.out",
         [q, 0.1, 0, -128, 127, 1, None, torch.empty(4, 3, dtype=torch.float64)], "float32"),
        ("quantized_decomposed::quantize_per_channel.out",
         [x, torch.ones(4), torch.zeros(4, dtype=torch.int64), 1, -128, 127, 1, q], "scales"),
        ("quantized_decomposed::quantize_per_channel.out",
         [x, torch.ones(4), torch.zeros(4, dtype=torch.int64), 2, -128, 127, 1, q], "axis"),
        ("quantized_decomposed::dequantize_per_channel.out",
         [q, torch.ones(3), None, 1, -128, 127, 1, None, torch.empty(4, 4)], "dequantize_per_channel"),
    ]
    for name, args, words in cases:
        with pytest.raises(RuntimeError, match=f"{name.split('.')[0]}.*{words}|{words}.*") as info:
            run_kernel(name, args)
        assert name.split(".")[0] in str(info.value), str(info.value)
