"""The optimized library's upsample_nearest2d, upsample_bilinear2d (plain and antialiased),
upsample_bicubic2d, reflection/replication pads, topk and stable sort against torch and against
the portable kernels, at 1 and 2 threads, on sizes that split over threads; other dtypes, layouts
and malformed arguments go to the portable kernel (same results and messages).

Tolerance: nearest, pads, topk and sort exact (copies; topk's and sort's values and indices
equal, ties, NaN and -0.0 included). Bilinear, bicubic and antialiased bilinear: float32 atol
1e-5 rtol 1e-5 against torch, and within 1e-6 of the portable kernel (the same sums, fused into
FMA here).
"""

import pytest
import torch
from kernel_harness import assert_close, run_kernel

A = torch.ops.aten
GEN = torch.Generator().manual_seed(0)


def rand(*shape):
    return torch.randn(shape, generator=GEN)


@pytest.mark.parametrize("shape,size,scales", [
    ((2, 16, 64, 64), None, [2.0, 2.0]),
    ((1, 3, 37, 29), [50, 90], None),
    ((1, 8, 40, 40), None, [0.5, 1.5]),
])
def test_nearest(threads, shape, size, scales):
    x = rand(*shape)
    ref = A.upsample_nearest2d.vec(x, size, scales)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_nearest2d.vec_out", [x, size, scales, out], library="optimized")
    assert torch.equal(out, ref)
    xi = (x * 10).to(torch.int16)  # any dtype: elements are copied
    out = torch.empty(ref.shape, dtype=torch.int16)
    run_kernel("aten::upsample_nearest2d.vec_out", [xi, size, scales, out], library="optimized")
    assert torch.equal(out, A.upsample_nearest2d.vec(xi.float(), size, scales).to(torch.int16))


@pytest.mark.parametrize("shape,size,scales", [
    ((2, 16, 64, 64), None, [2.0, 2.0]),
    ((1, 3, 37, 29), [50, 90], None),
    ((1, 8, 40, 40), None, [0.5, 1.5]),
    ((1, 4, 1, 7), [3, 1], None),
])
@pytest.mark.parametrize("align_corners", [False, True])
def test_bilinear(threads, shape, size, scales, align_corners):
    x = rand(*shape)
    ref = A.upsample_bilinear2d.vec(x, size, align_corners, scales)
    out, portable = torch.empty_like(ref), torch.empty_like(ref)
    run_kernel("aten::upsample_bilinear2d.vec_out", [x, size, align_corners, scales, out],
               library="optimized")
    run_kernel("aten::upsample_bilinear2d.vec_out", [x, size, align_corners, scales, portable])
    assert_close(out, ref, atol=1e-5, rtol=1e-5, what="vs torch")
    assert_close(out, portable, atol=1e-6, rtol=1e-6, what="vs portable")


def test_bilinear_out_form_and_fallbacks():
    x = rand(1, 2, 9, 9)
    ref = A.upsample_bilinear2d(x, [18, 5], False, None, None)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_bilinear2d.out", [x, [18, 5], False, None, None, out],
               library="optimized")
    assert_close(out, ref, atol=1e-5, rtol=1e-5)
    xl = x.to(memory_format=torch.channels_last)
    out = torch.empty_like(ref)
    run_kernel("aten::upsample_bilinear2d.out", [xl, [18, 5], False, None, None, out],
               library="optimized")
    assert_close(out, ref, atol=1e-5, rtol=1e-5)
    xd = x.double()
    out = torch.empty(ref.shape, dtype=torch.float64)
    run_kernel("aten::upsample_bilinear2d.out", [xd, [18, 5], False, None, None, out],
               library="optimized")
    assert_close(out, A.upsample_bilinear2d(xd, [18, 5], False, None, None), atol=1e-12, rtol=1e-12)
    with pytest.raises(RuntimeError, match="exactly one of output_size and scale_factors"):
        run_kernel("aten::upsample_bilinear2d.vec_out", [x, None, False, None, out], library="optimized")


@pytest.mark.parametrize("shape,size,scales", [
    ((2, 16, 32, 32), [64, 64], [2.0, 2.0]),
    ((1, 3, 37, 29), [50, 90], None),
    ((1, 8, 40, 40), [20, 60], [0.5, 1.5]),
    ((1, 4, 1, 7), [3, 1], None),
    ((1, 768, 14, 14), [16, 16], None),  # a ViT's position-embedding grid, 14 -> 16 patches a side
])
@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic(threads, shape, size, scales, align_corners):
    x = rand(*shape)
    sh, sw = scales or (None, None)
    ref = A.upsample_bicubic2d(x, size, align_corners, sh, sw)
    out, portable = torch.empty_like(ref), torch.empty_like(ref)
    run_kernel("aten::upsample_bicubic2d.out", [x, size, align_corners, sh, sw, out], library="optimized")
    run_kernel("aten::upsample_bicubic2d.out", [x, size, align_corners, sh, sw, portable])
    assert_close(out, ref, atol=1e-5, rtol=1e-5, what="vs torch")
    assert_close(out, portable, atol=1e-6, rtol=1e-6, what="vs portable")


def test_bicubic_fallbacks():
    x = rand(1, 2, 9, 9)
    ref = A.upsample_bicubic2d(x, [18, 5], False, None, None)
    out = torch.empty_like(ref).to(memory_format=torch.channels_last)
    run_kernel("aten::upsample_bicubic2d.out", [x.to(memory_format=torch.channels_last), [18, 5], False, None,
                                                None, out], library="optimized")
    assert_close(out, ref, atol=1e-5, rtol=1e-5)
    xd = x.double()
    out = torch.empty(ref.shape, dtype=torch.float64)
    run_kernel("aten::upsample_bicubic2d.out", [xd, [18, 5], False, None, None, out], library="optimized")
    assert_close(out, A.upsample_bicubic2d(xd, [18, 5], False, None, None), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("mode", ["reflection", "replication"])
@pytest.mark.parametrize("k,shape,pad", [
    (2, (1, 64, 128, 128), [1, 1, 1, 1]),
    (2, (2, 3, 17, 9), [3, 2, 0, 5]),
    (1, (4, 33), [5, 7]),
    (3, (1, 2, 5, 6, 7), [1, 2, 3, 0, 2, 4]),
    (2, (3, 4, 6), [0, 0, 2, 1]),
])
def test_pads(threads, mode, k, shape, pad):
    for dtype in (torch.float32, torch.int64, torch.uint8, torch.float16):
        x = (rand(*shape) * 50).to(dtype)
        ref = getattr(A, f"{mode}_pad{k}d")(x, pad)
        out = torch.empty_like(ref)
        run_kernel(f"aten::{mode}_pad{k}d.out", [x, pad, out], library="optimized")
        assert torch.equal(out, ref), f"{mode} {k}d {shape} {dtype}"


def test_pad_fallbacks_and_errors():
    x = rand(1, 2, 6, 6)
    ref = A.reflection_pad2d(x, [-1, 2, 1, -2])  # cropping: portable
    out = torch.empty_like(ref)
    run_kernel("aten::reflection_pad2d.out", [x, [-1, 2, 1, -2], out], library="optimized")
    assert torch.equal(out, ref)
    with pytest.raises(RuntimeError, match="aten::reflection_pad2d.out: padding .6, 0. must be less"):
        run_kernel("aten::reflection_pad2d.out", [x, [6, 0, 0, 0], torch.empty(1, 2, 6, 12)],
                   library="optimized")


@pytest.mark.parametrize("shape,k,dim", [((100000,), 100, 0), ((8, 5000), 10, 1), ((3, 640), 10, -1),
                                         ((64, 9, 3), 1, 0)])
@pytest.mark.parametrize("largest", [True, False])
def test_topk(threads, shape, k, dim, largest):
    x = rand(*shape)
    x.view(-1)[:: 97] = x.view(-1)[7]  # ties
    ref_v, ref_i = A.topk(x, k, dim, largest, True)
    v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
    run_kernel("aten::topk.values", [x, k, dim, largest, True, v, i], library="optimized")
    assert torch.equal(v, ref_v) and torch.equal(i, ref_i)


def test_topk_nan_and_fallbacks():
    x = rand(5000)
    x[[3, 1000, 4999]] = float("nan")
    for largest in (True, False):
        ref_v, ref_i = A.topk(x, 20, 0, largest)
        v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
        run_kernel("aten::topk.values", [x, 20, 0, largest, True, v, i], library="optimized")
        torch.testing.assert_close(v, ref_v, equal_nan=True, atol=0, rtol=0)
        assert torch.equal(i, ref_i)
    ref_v, ref_i = A.topk(x, 2000, 0)  # k * 64 > n: portable (nth_element)
    v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
    run_kernel("aten::topk.values", [x, 2000, 0, True, True, v, i], library="optimized")
    torch.testing.assert_close(v, ref_v, equal_nan=True, atol=0, rtol=0)
    with pytest.raises(RuntimeError, match="aten::topk.values: k -3 out of range"):
        run_kernel("aten::topk.values", [x, -3, 0, True, True, v, i], library="optimized")


@pytest.mark.parametrize("shape,dim", [((100000,), 0), ((6, 3000), 1), ((40, 300), -1), ((3, 500, 2), 1)])
@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort(threads, shape, dim, descending):
    x = (rand(*shape) * 4).round()  # many ties
    flat = x.view(-1)
    flat[::53] = float("nan")
    flat[1::61] = -0.0
    flat[2::67] = float("inf")
    flat[3::71] = -float("inf")
    ref_v, ref_i = A.sort.stable(x, stable=True, dim=dim, descending=descending)
    v, i = torch.empty_like(ref_v), torch.empty_like(ref_i)
    run_kernel("aten::sort.values_stable", [x, True, dim, descending, v, i], library="optimized")
    torch.testing.assert_close(v, ref_v, equal_nan=True, atol=0, rtol=0)
    assert torch.equal(i, ref_i)
    # Not stable: the portable kernel (std::sort's tie order, as torch's).
    ref_v, ref_i = A.sort.stable(x, stable=False, dim=dim, descending=descending)
    run_kernel("aten::sort.values_stable", [x, False, dim, descending, v, i], library="optimized")
    assert torch.equal(i, ref_i)


@pytest.mark.parametrize("shape,size", [((1, 64, 128, 128), [64, 64]), ((2, 3, 37, 29), [11, 50]),
                                        ((1, 4, 20, 20), [20, 7]), ((1, 2, 9, 9), [30, 9])])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("op", ["_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa"])
def test_antialiased_resize(threads, shape, size, align_corners, op):
    x = rand(*shape)
    ref = getattr(A, op)(x, size, align_corners, None, None)
    out, portable = torch.empty_like(ref), torch.empty_like(ref)
    args = [x, size, align_corners, None, None]
    run_kernel(f"aten::{op}.out", args + [out], library="optimized")
    run_kernel(f"aten::{op}.out", args + [portable])
    assert_close(out, ref, atol=1e-5, rtol=1e-5, what="vs torch")
    assert_close(out, portable, atol=1e-6, rtol=1e-6, what="vs portable")
