"""torchao's affine quantization primitives and aten::_int_mm on pteron's portable kernels
(kernels/portable/op_torchao_affine.cpp, op_int_mm.cpp), against torchao's and torch's own
functions. The same float32 operations in the same order: results are compared exactly
(torch.equal), NaN included.
"""

import pteron
import pytest
import torch
from kernel_harness import run_kernel

from torchao.quantization.quant_primitives import (  # noqa: E402
    _choose_qparams_affine,
    _dequantize_affine,
    _quantize_affine,
)

CODE = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.float32: 6}


def qparams(x, mapping, block, dtype, qmin=None, qmax=None, eps=None, zero_dtype=None, keepdim=False):
    scale, zero = _choose_qparams_affine(x, mapping, block, dtype, qmin, qmax, eps, torch.float32,
                                         zero_dtype, keepdim)
    got_scale, got_zero = torch.full_like(scale, float("nan")), torch.empty_like(zero)
    run_kernel("torchao::choose_qparams_affine.out",
               [x, mapping, block, CODE[dtype], qmin, qmax, eps, CODE[torch.float32],
                None if zero_dtype is None else CODE[zero_dtype], keepdim, got_scale, got_zero])
    return (scale, zero), (got_scale, got_zero)


CASES = [  # shape, block_size: per token, per group, per tensor, 3-d, blocks along two dims
    ((5, 64), [1, 64]), ((4, 96), [1, 32]), ((6, 10), [6, 10]), ((2, 3, 16), [1, 1, 16]),
    ((8, 12), [4, 3]), ((7, 5), [7, 1])]


@pytest.mark.parametrize("shape,block", CASES)
@pytest.mark.parametrize("mapping,dtype,zero_dtype", [
    ("SYMMETRIC", torch.int8, torch.int8), ("ASYMMETRIC", torch.int8, None),
    ("ASYMMETRIC", torch.uint8, torch.int32), ("SYMMETRIC_NO_CLIPPING_ERR", torch.int8, torch.int8)])
def test_choose_quantize_dequantize_are_torchaos(shape, block, mapping, dtype, zero_dtype):
    g = torch.Generator().manual_seed(sum(shape) + len(mapping))
    x = torch.randn(*shape, generator=g) * 3
    x.view(-1)[3] = 0.0  # an exact zero, and a block of one sign below
    x.view(-1)[-min(4, x.numel()):] = x.view(-1)[-min(4, x.numel()):].abs()
    (scale, zero), got = qparams(x, mapping, block, dtype, zero_dtype=zero_dtype,
                                 keepdim=block == [1, 64])
    assert torch.equal(got[0], scale) and torch.equal(got[1], zero), (got, scale, zero)
    q = _quantize_affine(x, block, scale, zero, dtype)
    got_q = torch.empty_like(q)
    run_kernel("torchao::quantize_affine.out", [x, block, scale, zero, CODE[dtype], None, None, got_q])
    assert torch.equal(got_q, q)
    dq = _dequantize_affine(q, block, scale, zero, dtype)
    got_dq = torch.full_like(dq, float("nan"))
    run_kernel("torchao::dequantize_affine.out",
               [q, block, scale, zero, CODE[dtype], None, None, CODE[torch.float32], got_dq])
    assert torch.equal(got_dq, dq)


def test_ranges_eps_and_no_zero_point():
    """int4 values stored in int8 (quant_min -8, quant_max 7), a tiny eps floor on an all-zero
    block, and dequantizing with a zero point of None (symmetric weights, as torchao's weight
    export has them; its quantize needs the zeros)."""
    x = torch.randn(3, 64, generator=torch.Generator().manual_seed(3))
    x[1] = 0.0
    (scale, zero), got = qparams(x, "SYMMETRIC", [1, 32], torch.int8, -8, 7, eps=1e-6,
                                 zero_dtype=torch.int8)
    assert torch.equal(got[0], scale) and torch.equal(got[1], zero)
    q = _quantize_affine(x, [1, 32], scale, zero, torch.int8, -8, 7)
    got_q = torch.empty_like(q)
    run_kernel("torchao::quantize_affine.out", [x, [1, 32], scale, zero, CODE[torch.int8], -8, 7, got_q])
    assert torch.equal(got_q, q) and int(q.min()) >= -8 and int(q.max()) <= 7
    dq = _dequantize_affine(q, [1, 32], scale, None, torch.int8, -8, 7)
    got_dq = torch.empty_like(dq)
    run_kernel("torchao::dequantize_affine.out",
               [q, [1, 32], scale, None, CODE[torch.int8], -8, 7, CODE[torch.float32], got_dq])
    assert torch.equal(got_dq, dq)


def test_nan_propagates_as_torch():
    x = torch.randn(2, 8)
    x[0, 3] = float("nan")
    (scale, zero), got = qparams(x, "SYMMETRIC", [1, 8], torch.int8, zero_dtype=torch.int8)
    assert torch.isnan(got[0][0]) and torch.equal(got[0][1:], scale[1:])


@pytest.mark.parametrize("op,args,message", [
    ("torchao::quantize_affine.out", "block", "block_size\\[1\\] = 5 does not divide the input's size 8"),
    ("torchao::quantize_affine.out", "rank", "block_size has 1 entries for a 2-d input"),
    ("torchao::quantize_affine.out", "scales", "scale has 3 values for 2 blocks"),
    ("torchao::dequantize_affine.out", "dtype", "input is int8, input_dtype says uint8"),
    ("torchao::choose_qparams_affine.out", "mapping", "mapping_type must be SYMMETRIC"),
])
def test_bad_arguments_are_one_line(op, args, message):
    """A program's arguments are not trusted: each mismatch is one error naming it."""
    x, q = torch.randn(2, 8), torch.zeros(2, 8, dtype=torch.int8)
    scale, block = torch.ones(2), [1, 8]
    if args == "block":
        block = [1, 5]
    elif args == "rank":
        block = [8]
    elif args == "scales":
        scale = torch.ones(3)
    with pytest.raises(RuntimeError, match=message) as e:
        if op.startswith("torchao::quantize"):
            run_kernel(op, [x, block, scale, None, CODE[torch.int8], None, None, torch.empty_like(q)])
        elif op.startswith("torchao::dequantize"):
            run_kernel(op, [q, block, scale, None, CODE[torch.uint8], None, None, 6, torch.empty(2, 8)])
        else:
            run_kernel(op, [x, "AFFINE", block, CODE[torch.int8], None, None, None, 6, None, False,
                            torch.empty(2), torch.empty(2, dtype=torch.int32)])
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("library", ["portable", "optimized"])
@pytest.mark.parametrize("a_dtype", [torch.int8, torch.uint8])
@pytest.mark.parametrize("transposed", [True, False])
def test_int_mm_is_exact(library, a_dtype, transposed):
    """17 x 300 by 300 x 33: edge tiles both ways; the weight transposed as torchao passes it,
    or row-major as constant folding leaves it (the optimized kernel transposes it back)."""
    g = torch.Generator().manual_seed(7)
    lo, hi = (-128, 128) if a_dtype == torch.int8 else (0, 256)
    a = torch.randint(lo, hi, (17, 300), generator=g, dtype=torch.int32).to(a_dtype)
    w = torch.randint(-128, 128, (33, 300), generator=g, dtype=torch.int32).to(torch.int8)
    b = w.t() if transposed else w.t().contiguous()  # torchao passes the weight transposed
    want = a.to(torch.int64) @ b.to(torch.int64)
    got = torch.empty(17, 33, dtype=torch.int32)
    run_kernel("aten::_int_mm.out", [a, b, got], library=library)
    assert torch.equal(got.to(torch.int64), want)


def test_int_mm_wraps_as_int32():
    """K * 255 * 127 past 2^31: the int32 accumulator wraps (modulo 2^32), on both libraries."""
    k = 70000
    a, b = torch.full((4, k), 255, dtype=torch.uint8), torch.full((k, 4), 127, dtype=torch.int8)
    want = torch.tensor((255 * 127 * k + 2**31) % 2**32 - 2**31, dtype=torch.int32)
    for library in ("portable", "optimized"):
        got = torch.empty(4, 4, dtype=torch.int32)
        run_kernel("aten::_int_mm.out", [a, b.t().contiguous().t(), got], library=library)
        assert torch.equal(got, torch.full((4, 4), int(want), dtype=torch.int32)), library


def test_int_mm_checks_shapes():
    with pytest.raises(RuntimeError, match=r"cannot multiply \[2, 3\] by \[4, 5\]"):
        run_kernel("aten::_int_mm.out", [torch.zeros(2, 3, dtype=torch.int8),
                                         torch.zeros(4, 5, dtype=torch.int8),
                                         torch.empty(2, 5, dtype=torch.int32)])


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(64, 128)
        self.down = torch.nn.Linear(128, 32)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_int8_dynamic_activation_int8_weight_program_is_torchaos(kernels):
    """torchao's Int8DynamicActivationInt8WeightConfig (its standard CPU int8 recipe): per-token
    symmetric int8 activations, int8 weights, aten::_int_mm, on the default and on the portable
    kernels alone; the program gives torchao eager's numbers."""
    from torchao.quantization import Int8DynamicActivationInt8WeightConfig, quantize_

    torch.manual_seed(0)
    model, x = Block().eval(), torch.randn(6, 64)
    quantize_(model, Int8DynamicActivationInt8WeightConfig())
    with torch.no_grad():
        want = model(x)
    ep = torch.export.export(model, (x,))
    assert any(n.target == torch.ops.aten._int_mm.default for n in ep.run_decompositions({}).graph.nodes)
    lowered = pteron.to_edge_transform_and_lower(ep, **({"kernels": kernels} if kernels else {}))
    got = torch.as_tensor(lowered.load().forward(x)[0])
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6 * float(want.abs().max()))
