"""The optimized library's aten::convolution.out, pteron::convolution_relu.out,
pteron::convolution_clamp.out, pteron::convolution_silu.out, pteron::convolution_hardswish.out,
pteron::convolution_scaled.out and pteron::convolution_add_relu.out against
torch.nn.functional.conv2d (+ other, relu, clamp, silu, hardswish, an input channel scale), and
the compiler pass that makes the fused ops (conv + ReLU, conv + hardtanh / clamp, conv + SiLU,
conv + hardswish, a squeeze-excite gate + conv, and resnet's conv + residual add + ReLU).

The SGEMM path (float32, 2-D NCHW, groups == 1) is checked over kernel sizes 1/3/5/7, strides
1/2, padding, dilation, odd sizes, batch 2, with and without bias, with 1 and 2 threads, and with
im2col split into several pixel blocks (large K x pixels), and computed transposed (fewer pixels
than output channels). Depthwise convolutions (groups == Cin == Cout) take the SIMD rows: kernel
3/5, stride 1/2/3, padding, dilation, rows narrower and wider than a vector; outputs under 64 wide
run channel-minor blocks of 16 channels, tails and bands of rows included; large depthwise
kernels (7x7 to 11x11 in channel blocks, 17x17 on rows). Grouped convolutions with several input
channels a group (ShuffleNet, RegNet, ResNeXt) run one SGEMM per image and group, fused like the
others. 1-D convolutions ([N, C, W]) run as 2-D ones of height 1 on both paths, and the pass fuses
them too. Transposed convolutions (1-D and 2-D: strides, output padding, dilation, groups,
overlapping and disjoint taps, fused activations) run an SGEMM and col2im. Inputs neither
takes (channels-last, float64, a depthwise channel multiplier) go to the portable kernel and
must still match. Bad inputs raise RuntimeError naming the op.

Tolerance: float32 rtol 1e-4, atol 1e-4 * sqrt(K) with K = Cin * kh * kw (sums of K products in
another order than torch's).
"""

import math

import pteron
import pytest
import torch
import torch.nn.functional as F
from kernel_harness import assert_close, run_kernel

CONV = "aten::convolution.out"
CONV_RELU = "pteron::convolution_relu.out"
CONV_CLAMP = "pteron::convolution_clamp.out"
CONV_SILU = "pteron::convolution_silu.out"
CONV_HARDSWISH = "pteron::convolution_hardswish.out"
CLAMP = (-0.5, 0.75)  # both bounds bite on these random outputs


def rand(*shape, seed=0, dtype=torch.float32):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


def with_activation(op, ref):
    """The fused op's activation applied to the convolution's reference, and the op's extra
    arguments (convolution_clamp's bounds)."""
    if op == CONV_RELU:
        return torch.relu(ref), []
    if op == CONV_CLAMP:
        return torch.clamp(ref, *CLAMP), list(CLAMP)
    if op == CONV_SILU:
        return F.silu(ref), []
    if op == CONV_HARDSWISH:
        return F.hardswish(ref), []
    return ref, []


def run_conv(op, x, w, b, stride, padding, dilation, groups=1, out=None):
    ref, bounds = with_activation(op, F.conv2d(x, w, b, stride, padding, dilation, groups))
    if out is None:
        out = torch.full(ref.shape, float("nan"), dtype=ref.dtype)
    run_kernel(op, [x, w, b, list(stride), list(padding), list(dilation), False, [0, 0], groups,
                    *bounds, out], library="optimized")
    k = w.shape[1] * w.shape[2] * w.shape[3]
    assert_close(out, ref, atol=1e-4 * math.sqrt(k), rtol=1e-4,
                 what=f"{op} x{tuple(x.shape)} w{tuple(w.shape)} s{stride} p{padding} d{dilation}")
    return out


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP, CONV_SILU, CONV_HARDSWISH])
@pytest.mark.parametrize("n,cin,h,w,cout,k,stride,pad,dil,bias", [
    (1, 3, 17, 19, 8, 1, 1, 0, 1, True),  # pointwise: the input is the col matrix
    (2, 5, 9, 11, 7, 1, 2, 0, 1, False),  # strided 1x1 (resnet's downsample)
    (1, 4, 13, 13, 16, 3, 1, 1, 1, True),
    (2, 6, 15, 10, 9, 3, 2, 1, 1, True),  # odd sizes, batch 2
    (1, 3, 21, 23, 5, 5, 1, 2, 1, False),
    (1, 3, 30, 30, 12, 7, 2, 3, 1, True),  # resnet's stem
    (1, 2, 12, 14, 3, 3, 1, 2, 2, True),  # dilation
    (1, 3, 8, 9, 4, 3, 1, 0, 1, True),  # no padding
    (1, 2, 5, 5, 3, 5, 1, 0, 1, True),  # one output pixel
    (1, 64, 40, 40, 64, 3, 1, 1, 1, True),  # K x pixels past one col block
    (2, 128, 28, 28, 32, 3, 1, 1, 1, False),  # several blocks, batch 2
    # Fewer pixels than channels: computed transposed (pixels x Cout), bias per column.
    (2, 32, 7, 7, 96, 3, 1, 1, 1, True),
    (1, 40, 5, 5, 64, 1, 1, 0, 1, True),  # pointwise, transposed
    (1, 24, 9, 9, 40, 3, 2, 1, 1, False),  # strided, transposed, no bias
])
def test_matches_torch(threads, op, n, cin, h, w, cout, k, stride, pad, dil, bias):
    x, wt = rand(n, cin, h, w, seed=1), rand(cout, cin, k, k, seed=2)
    b = rand(cout, seed=3) if bias else None
    out = run_conv(op, x, wt, b, (stride, stride), (pad, pad), (dil, dil))
    if op == CONV_RELU:
        assert (out >= 0).all()


def test_rectangular_kernel_and_mixed_stride(threads):
    x, w, b = rand(1, 3, 16, 20, seed=4), rand(6, 3, 3, 5, seed=5), rand(6, seed=6)
    run_conv(CONV, x, w, b, (2, 1), (1, 2), (1, 2))


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP, CONV_SILU, CONV_HARDSWISH])
@pytest.mark.parametrize("n,c,h,w,k,stride,pad,dil,bias", [
    (1, 32, 112, 112, 3, 1, 1, 1, True),  # mobilenet-v2's first depthwise (threaded)
    (2, 6, 10, 11, 3, 2, 1, 1, False),
    (1, 5, 15, 14, 5, 2, 2, 1, True),
    (1, 4, 9, 9, 3, 1, 2, 2, True),  # dilation
    (1, 3, 7, 8, 3, 3, 0, 1, True),  # stride 3: the generic row loop
    (1, 2, 2, 2, 3, 1, 1, 1, True),  # every output column at the border
    (1, 16, 7, 7, 3, 1, 1, 1, True),  # rows narrower than a vector (mobilenet-v2's last)
    (1, 8, 14, 37, 5, 1, 2, 1, False),  # 5x5 (EfficientNet's), one vector and a tail
    (1, 3, 9, 9, 3, 2, 0, 1, True),  # stride 2, no padding, odd width
    (1, 3, 8, 12, 3, 2, 3, 1, False),  # stride 2, odd padding, even width
    (1, 4, 6, 1, 3, 2, 1, 1, True),  # one input column
    # Outputs under 64 wide take channel blocks of 16 (every lane a channel), the others rows.
    (1, 40, 7, 7, 5, 1, 2, 1, True),  # EfficientNet's last 5x5: two blocks and a tail of 8
    (2, 20, 130, 30, 3, 1, 1, 1, True),  # tall: several bands of rows per block
    (1, 24, 56, 56, 3, 2, 1, 1, False),  # stride 2, a tail block
    (1, 17, 12, 12, 5, 1, 4, 2, True),  # 5x5 dilated
    (1, 5, 9, 140, 5, 2, 2, 1, True),  # 70 wide: rows, 5x5 stride 2
    (1, 3, 9, 240, 5, 4, 2, 1, True),  # 60 wide but a band's input rows too wide: rows
    # Large kernels: channel blocks up to 16x16 taps, plane rows past that.
    (1, 16, 30, 30, 7, 1, 3, 1, True),  # ConvNeXt's 7x7
    (1, 20, 24, 24, 9, 1, 4, 1, False),
    (1, 8, 25, 25, 11, 2, 5, 1, True),
    (1, 3, 40, 40, 17, 1, 8, 1, True),  # 289 taps: plane rows
])
def test_depthwise_matches_torch(threads, op, n, c, h, w, k, stride, pad, dil, bias):
    run_conv(op, rand(n, c, h, w, seed=18), rand(c, 1, k, k, seed=19),
             rand(c, seed=20) if bias else None, (stride, stride), (pad, pad), (dil, dil),
             groups=c)


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP, CONV_SILU, CONV_HARDSWISH])
@pytest.mark.parametrize("n,cin,length,cout,k,stride,pad,dil,groups,bias", [
    (1, 1, 400, 16, 80, 4, 0, 1, 1, True),  # a waveform front end: one channel, a wide window
    (2, 8, 37, 12, 3, 1, 1, 1, 1, False),  # batch 2, odd length
    (1, 16, 50, 16, 5, 2, 2, 2, 1, True),  # strided, dilated
    (1, 6, 20, 10, 1, 1, 0, 1, 1, True),  # pointwise
    (1, 32, 64, 32, 31, 1, 15, 1, 32, True),  # depthwise (a Conformer's convolution module)
    (2, 20, 33, 20, 3, 2, 1, 1, 20, False),  # depthwise, strided
])
def test_conv1d_matches_torch(threads, op, n, cin, length, cout, k, stride, pad, dil, groups,
                              bias):
    """1-D convolutions ([N, C, W]) take the same paths as 2-D ones of height 1."""
    x, w = rand(n, cin, length, seed=31), rand(cout, cin // groups, k, seed=32)
    b = rand(cout, seed=33) if bias else None
    ref, bounds = with_activation(op, F.conv1d(x, w, b, stride, pad, dil, groups))
    out = torch.full(ref.shape, float("nan"))
    run_kernel(op, [x, w, b, [stride], [pad], [dil], False, [0], groups, *bounds, out],
               library="optimized")
    assert_close(out, ref, atol=1e-4 * math.sqrt(w.shape[1] * k), rtol=1e-4,
                 what=f"{op} 1-D x{tuple(x.shape)} w{tuple(w.shape)}")


def test_conv1d_output_shape_is_checked():
    x, w = rand(1, 4, 20, seed=34), rand(6, 4, 3, seed=35)
    with pytest.raises(RuntimeError, match="aten::convolution.out"):
        run_kernel(CONV, [x, w, None, [1], [1], [1], False, [0], 1, torch.empty(1, 6, 1, 20)],
                   library="optimized")


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP, CONV_SILU, CONV_HARDSWISH])
@pytest.mark.parametrize("n,cin,h,w,cout,k,stride,pad,groups,bias", [
    (1, 8, 9, 9, 8, 3, 1, 1, 4, True),  # two channels a group
    (2, 32, 14, 14, 64, 3, 2, 1, 2, False),  # ShuffleNet-style: 2 groups, strided, batch 2
    (1, 64, 12, 12, 64, 3, 1, 1, 4, True),  # RegNet-style: 16-wide groups
    (1, 24, 7, 7, 48, 1, 1, 0, 3, True),  # grouped pointwise (ShuffleNet v1)
    (1, 128, 8, 8, 128, 3, 1, 1, 32, True),  # ResNeXt 32x4d
])
def test_grouped_matches_torch(threads, op, n, cin, h, w, cout, k, stride, pad, groups, bias):
    """Groups of several input channels: one SGEMM per image and group."""
    run_conv(op, rand(n, cin, h, w, seed=40), rand(cout, cin // groups, k, k, seed=41),
             rand(cout, seed=42) if bias else None, (stride, stride), (pad, pad), (1, 1),
             groups=groups)


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP])
@pytest.mark.parametrize("n,cin,h,w,cout,k,stride,pad,out_pad,dil,groups,bias", [
    (1, 64, 16, 16, 32, 2, 2, 0, 0, 1, 1, True),  # a U-Net's 2x upsampling: taps do not overlap
    (2, 16, 7, 9, 8, 4, 2, 1, 0, 1, 1, False),  # a GAN generator's: overlapping taps, batch 2
    (1, 8, 5, 6, 12, 3, 2, 1, 1, 1, 1, True),  # output padding
    (1, 6, 6, 5, 4, 3, 1, 2, 0, 2, 1, True),  # dilated, stride 1, padding beyond the taps
    (1, 8, 6, 6, 12, 3, 3, 0, 2, 1, 4, True),  # grouped, stride 3
    (1, 4, 1, 40, 6, 5, 4, 2, 3, 1, 2, True),  # height 1, wide stride
    (3, 8, 5, 4, 12, 3, 2, 1, 1, 2, 2, True),  # small images of a batch in one SGEMM, grouped
    (2, 4, 32, 40, 6, 4, 2, 1, 0, 1, 1, True),  # images of 1280 pixels: an SGEMM per image
])
def test_transposed_matches_torch(threads, op, n, cin, h, w, cout, k, stride, pad, out_pad, dil,
                                  groups, bias):
    """Transposed convolutions: an SGEMM per image and group (every image of the batch in one
    below 1024 pixels), then col2im."""
    x, wt = rand(n, cin, h, w, seed=50), rand(cin, cout // groups, k, k, seed=51)
    b = rand(cout, seed=52) if bias else None
    ref, bounds = with_activation(op, F.conv_transpose2d(x, wt, b, stride, pad, out_pad, groups,
                                                         dil))
    out = torch.full(ref.shape, float("nan"))
    run_kernel(op, [x, wt, b, [stride] * 2, [pad] * 2, [dil] * 2, True, [out_pad] * 2, groups,
                    *bounds, out], library="optimized")
    assert_close(out, ref, atol=1e-4 * math.sqrt(cin // groups * k * k), rtol=1e-4,
                 what=f"{op} transposed x{tuple(x.shape)} w{tuple(wt.shape)}")


def test_transposed_conv1d_matches_torch(threads):
    x, wt, b = rand(2, 16, 50, seed=53), rand(16, 8, 4, seed=54), rand(8, seed=55)
    ref = F.conv_transpose1d(x, wt, b, 2, 1)
    out = torch.full(ref.shape, float("nan"))
    run_kernel(CONV, [x, wt, b, [2], [1], [1], True, [0], 1, out], library="optimized")
    assert_close(out, ref, atol=1e-4 * math.sqrt(16 * 4), rtol=1e-4, what="conv_transpose1d")


@pytest.mark.parametrize("op", [CONV, CONV_RELU, CONV_CLAMP, CONV_SILU, CONV_HARDSWISH])
def test_inputs_without_fast_path_fall_back(op):
    # Depthwise with a channel multiplier (one input channel a group).
    run_conv(op, rand(2, 6, 10, 10, seed=7), rand(12, 1, 3, 3, seed=8), None, (2, 2), (1, 1),
             (1, 1), groups=6)
    # float64 goes to the portable kernel.
    run_conv(CONV, rand(1, 3, 7, 7, seed=10, dtype=torch.float64),
             rand(4, 3, 3, 3, seed=11, dtype=torch.float64), None, (1, 1), (1, 1), (1, 1))


def test_channels_last_falls_back_to_portable_error():
    # The portable kernel takes only NCHW: the optimized one must answer as it does.
    x = rand(1, 3, 8, 8, seed=12).to(memory_format=torch.channels_last)
    out = torch.empty(1, 4, 8, 8)
    with pytest.raises(RuntimeError, match="convolution"):
        run_kernel(CONV, [x, rand(4, 3, 3, 3, seed=13), None, [1, 1], [1, 1], [1, 1], False,
                          [0, 0], 1, out], library="optimized")


@pytest.mark.parametrize("op", [CONV, CONV_RELU])
def test_bad_inputs_name_the_op(op):
    name = op.split("::")[1].split(".")[0]
    x, w = rand(1, 3, 8, 8), rand(4, 3, 3, 3)
    cases = [
        ([x, rand(4, 5, 3, 3), None], torch.empty(1, 4, 8, 8)),  # channels differ
        ([x, w, rand(5)], torch.empty(1, 4, 8, 8)),  # bias size
        ([x, w, None], torch.empty(1, 4, 7, 8)),  # out of the wrong shape
    ]
    for tensors, out in cases:
        with pytest.raises(RuntimeError, match=name):
            run_kernel(op, tensors + [[1, 1], [1, 1], [1, 1], False, [0, 0], 1, out],
                       library="optimized")


@pytest.mark.parametrize("groups", [1, 4], ids=["sgemm", "depthwise"])
def test_nan_stays_through_fused_clamp(groups):
    x, w = rand(1, 4, 6, 6, seed=14), rand(4, 4 // groups, 3, 3, seed=15)
    x[0, 0, 2, 2] = float("nan")
    out = torch.empty(1, 4, 6, 6)
    run_kernel(CONV_CLAMP, [x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], groups, 0.0, 6.0,
                            out], library="optimized")
    ref = torch.clamp(F.conv2d(x, w, None, 1, 1, 1, groups), 0.0, 6.0)
    assert torch.equal(out.isnan(), ref.isnan()) and out.isnan().any()


def test_nan_stays_through_fused_relu():
    x, w = rand(1, 2, 6, 6, seed=14), rand(3, 2, 3, 3, seed=15)
    x[0, 0, 2, 2] = float("nan")
    out = torch.empty(1, 3, 6, 6)
    run_kernel(CONV_RELU, [x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, out],
               library="optimized")
    ref = torch.relu(F.conv2d(x, w, None, 1, 1))
    assert torch.equal(out.isnan(), ref.isnan()) and out.isnan().any()


class ConvNet(torch.nn.Module):
    def __init__(self, leak=False):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, bias=False)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.leak = leak

    def forward(self, x):
        h = self.c1(x)
        y = torch.relu(self.dw(torch.relu(self.c2(torch.relu(h)))))
        return (y, h + 1.0) if self.leak else y


@pytest.mark.parametrize("kernels,fused", [(("optimized", "portable"), 3), (("portable",), 0)])
def test_pass_fuses_only_with_the_optimized_library(kernels, fused):
    model, x = ConvNet().eval(), rand(2, 3, 16, 16, seed=16)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)
    ops = lowered.load().load_method("forward").instruction_names()
    # The depthwise conv's relu fuses too: its SIMD rows apply it.
    assert ops.count(CONV_RELU) == fused and ops.count("aten::relu.out") == 3 - fused
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)


class ClampNet(torch.nn.Module):
    """ReLU6 (decomposed to hardtanh) after an ungrouped and a depthwise convolution, one-sided
    clamps, and a depthwise convolution with a channel multiplier, which the fast paths do not
    take (its clamp is not fused)."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.dw = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c2 = torch.nn.Conv2d(8, 8, 1)
        self.grouped = torch.nn.Conv2d(8, 16, 3, padding=1, groups=8)

    def forward(self, x):
        h = F.relu6(self.dw(F.relu6(self.c1(x))))
        y = torch.clamp(self.c2(h), min=-0.25)
        g = self.grouped(y)
        return torch.clamp(g, -1.0, 1.0), torch.clamp(self.c2(y), max=0.5) + 1.0


def test_pass_fuses_hardtanh_and_clamp():
    model, x = ClampNet().eval(), rand(2, 3, 12, 12, seed=21)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_CLAMP) == 4, ops  # c1, dw, c2 (min only), c2 again (max only)
    assert ops.count("aten::clamp.out") + ops.count("aten::hardtanh.out") == 1, ops  # multiplier
    with torch.no_grad():
        want = model(x)
    for got, ref in zip(lowered.load().forward(x), want):
        torch.testing.assert_close(got, ref, atol=1e-4, rtol=1e-4)


CONV_SCALED = "pteron::convolution_scaled.out"


@pytest.mark.parametrize("n,cin,hw,cout,k,stride,pad,per_image", [
    (1, 24, 14, 40, 1, 1, 0, True),  # pointwise, direct: B's rows scaled as packed
    (1, 96, 7, 160, 1, 1, 0, True),  # pointwise, transposed: A's columns scaled as packed
    (2, 8, 9, 6, 3, 1, 1, True),  # 3x3 direct: the im2col packer's rows, per-image scales
    (2, 32, 5, 48, 3, 2, 1, False),  # 3x3 transposed from a stored col, one scale for both
    (1, 300, 6, 20, 1, 1, 0, False),  # K past one 256-deep block
])
def test_scaled_input_matches_torch(threads, n, cin, hw, cout, k, stride, pad, per_image):
    x, w, b = rand(n, cin, hw, hw, seed=30), rand(cout, cin, k, k, seed=31), rand(cout, seed=32)
    scale = torch.sigmoid(rand(n if per_image else 1, cin, 1, 1, seed=33))
    ref = F.conv2d(x * scale, w, b, stride, pad)
    out = torch.full(ref.shape, float("nan"))
    run_kernel(CONV_SCALED, [x, w, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, scale,
                             out], library="optimized")
    assert_close(out, ref, atol=1e-4 * math.sqrt(cin * k * k), rtol=1e-4, what="convolution_scaled")


def test_scaled_input_refuses_what_it_does_not_take():
    x, w, out = rand(1, 8, 5, 5), rand(8, 8, 1, 1), torch.empty(1, 8, 5, 5)
    with pytest.raises(RuntimeError, match="convolution_scaled.*scale must be"):
        run_kernel(CONV_SCALED, [x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                 rand(1, 8, 5, 5), out], library="optimized")
    with pytest.raises(RuntimeError, match="convolution_scaled.*groups 1"):
        run_kernel(CONV_SCALED, [x, rand(8, 4, 1, 1), None, [1, 1], [0, 0], [1, 1], False,
                                 [0, 0], 2, rand(1, 8, 1, 1), out], library="optimized")


class SqueezeExciteProjection(torch.nn.Module):
    """MobileNetV3's and EfficientNet's block end: a squeeze-excite gate, then a 1x1 projection;
    a gate before a depthwise convolution stays a multiply."""

    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = torch.nn.Conv2d(16, 4, 1), torch.nn.Conv2d(4, 16, 1)
        self.project = torch.nn.Conv2d(16, 8, 1)
        self.dw = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)

    def forward(self, x):
        gate = torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean((2, 3), keepdim=True)))))
        return self.project(x * gate), self.dw(gate * x)


def test_pass_folds_a_squeeze_excite_gate_into_the_projection():
    model, x = SqueezeExciteProjection().eval(), rand(2, 16, 10, 10, seed=34)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_SCALED) == 1 and ops.count("aten::mul.out") == 1, ops
    with torch.no_grad():
        want = model(x)
    for got, ref in zip(lowered.load().forward(x), want):
        torch.testing.assert_close(got, ref, atol=1e-4, rtol=1e-4)


class SiluNet(torch.nn.Module):
    """EfficientNet's and YOLO's activation: F.silu and x * sigmoid(x) after an ungrouped, a
    depthwise and a pointwise convolution; a gated SiLU (times another tensor) stays unfused."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 24, 3, stride=2, padding=1)
        self.dw = torch.nn.Conv2d(24, 24, 5, padding=2, groups=24)
        self.pw = torch.nn.Conv2d(24, 16, 1)

    def forward(self, x):
        h = F.silu(self.c1(x))
        d = self.dw(h)
        h = d * torch.sigmoid(d)
        p = self.pw(h)
        return F.silu(p) * p.flip(-1)


def test_pass_fuses_silu():
    model, x = SiluNet().eval(), rand(2, 3, 20, 20, seed=22)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_SILU) == 2, ops  # c1 and dw; pw's SiLU is gated
    assert ops.count("pteron::silu_mul.out") == 1, ops
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)


class HardswishBlock(torch.nn.Module):
    """MobileNetV3's late block: 1x1 expand + hardswish, depthwise 5x5 + hardswish, a squeeze-excite
    gate through a hardsigmoid, 1x1 project; nn.Hardswish and F.hardsigmoid reach pteron as their
    core-ATen decompositions (add, clamps, mul, div), which the compiler recomposes first."""

    def __init__(self):
        super().__init__()
        self.expand = torch.nn.Conv2d(8, 32, 1)
        self.dw = torch.nn.Conv2d(32, 32, 5, padding=2, groups=32)
        self.fc1, self.fc2 = torch.nn.Conv2d(32, 8, 1), torch.nn.Conv2d(8, 32, 1)
        self.project = torch.nn.Conv2d(32, 8, 1)
        self.act = torch.nn.Hardswish()

    def forward(self, x):
        h = self.act(self.dw(self.act(self.expand(x))))
        gate = F.hardsigmoid(self.fc2(torch.relu(self.fc1(h.mean((2, 3), keepdim=True)))))
        return x + self.project(h * gate)


def test_pass_fuses_hardswish_and_folds_the_gate():
    model, x = HardswishBlock().eval(), rand(2, 8, 14, 14, seed=30) * 4
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_HARDSWISH) == 2, ops  # expand and dw
    assert ops.count("pteron::convolution_scaled.out") == 1, ops  # the gate into the projection
    assert ops.count("aten::hardsigmoid.out") == 1, ops
    for decomposed in ("aten::clamp.out", "aten::div.out", "aten::mul.out"):
        assert decomposed not in ops, ops
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)


def test_conv_also_read_elsewhere_is_not_fused():
    model, x = ConvNet(leak=True).eval(), rand(1, 3, 12, 12, seed=17)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_RELU) == 2  # c2's and dw's; c1's output h is also returned
    outs = lowered.load().forward(x)
    with torch.no_grad():
        y, s = model(x)
    torch.testing.assert_close(outs[0], y, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(outs[1], s, atol=1e-4, rtol=1e-4)


CONV_ADD_RELU = "pteron::convolution_add_relu.out"


@pytest.mark.parametrize("n,cin,hw,cout,k,stride,pad,bias", [
    (1, 16, 14, 16, 3, 1, 1, True),  # direct form: other written into the output first
    (2, 8, 9, 12, 3, 2, 1, False),
    (1, 24, 8, 64, 3, 1, 1, True),  # transposed form: other added as the result is transposed
    (1, 40, 5, 64, 1, 1, 0, False),  # pointwise, transposed
    (2, 6, 11, 5, 1, 1, 0, True),  # pointwise, direct
])
def test_conv_add_relu_matches_torch(threads, n, cin, hw, cout, k, stride, pad, bias):
    x, w = rand(n, cin, hw, hw, seed=21), rand(cout, cin, k, k, seed=22)
    b = rand(cout, seed=23) if bias else None
    conv = F.conv2d(x, w, b, stride, pad)
    other = rand(*conv.shape, seed=24)
    ref = torch.relu(conv + other)
    out = torch.full(ref.shape, float("nan"))
    run_kernel(CONV_ADD_RELU, [x, w, b, [stride] * 2, [pad] * 2, [1, 1], False, [0, 0], 1, other,
                               out], library="optimized")
    assert_close(out, ref, atol=1e-4 * math.sqrt(cin * k * k), rtol=1e-4, what="conv_add_relu")


def test_conv_add_relu_falls_back_and_checks_other():
    # Depthwise takes the portable convolution, then the add and ReLU.
    x, w, other = rand(1, 4, 8, 8, seed=25), rand(4, 1, 3, 3, seed=26), rand(1, 4, 8, 8, seed=27)
    out = torch.empty(1, 4, 8, 8)
    run_kernel(CONV_ADD_RELU, [x, w, None, [1, 1], [1, 1], [1, 1], False, [0, 0], 4, other, out],
               library="optimized")
    ref = torch.relu(F.conv2d(x, w, None, 1, 1, 1, 4) + other)
    assert_close(out, ref, atol=1e-4, rtol=1e-4, what="depthwise conv_add_relu")
    with pytest.raises(RuntimeError, match="convolution_add_relu"):
        run_kernel(CONV_ADD_RELU, [rand(1, 3, 8, 8), rand(4, 3, 3, 3), None, [1, 1], [1, 1],
                                   [1, 1], False, [0, 0], 1, rand(1, 4, 8, 7),
                                   torch.empty(1, 4, 8, 8)], library="optimized")


class AudioBlock(torch.nn.Module):
    """1-D convolutions: a strided front end, a depthwise one and a residual block."""

    def __init__(self):
        super().__init__()
        self.front = torch.nn.Conv1d(1, 8, 40, stride=4)
        self.dw = torch.nn.Conv1d(8, 8, 9, padding=4, groups=8)
        self.c = torch.nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.front(x))
        h = torch.clamp(self.dw(h), -1.0, 1.0)
        return torch.relu(self.c(h) + h)


class GroupedBlock(torch.nn.Module):
    """A RegNet-style bottleneck: 1x1, grouped 3x3, 1x1, residual."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(16, 16, 1)
        self.b = torch.nn.Conv2d(16, 16, 3, padding=1, groups=4)
        self.c = torch.nn.Conv2d(16, 16, 1)

    def forward(self, x):
        return torch.relu(x + self.c(torch.relu(self.b(torch.relu(self.a(x))))))


def test_pass_fuses_grouped_convolutions():
    model, x = GroupedBlock().eval(), rand(2, 16, 10, 10, seed=43)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_RELU) == 2 and ops.count(CONV_ADD_RELU) == 1, ops
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)


def test_pass_fuses_1d_convolutions():
    model, x = AudioBlock().eval(), rand(2, 1, 800, seed=36)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)),
                                                 kernels=("optimized", "portable"))
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_RELU) == 1 and ops.count(CONV_CLAMP) == 1
    assert ops.count(CONV_ADD_RELU) == 1 and "aten::convolution.out" not in ops
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)


class ResidualBlock(torch.nn.Module):
    """resnet's BasicBlock shape: the downsample branch comes after the second conv."""

    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(4, 8, 3, stride=2, padding=1)
        self.c2 = torch.nn.Conv2d(8, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(4, 8, 1, stride=2)

    def forward(self, x):
        out = self.c2(torch.relu(self.c1(x)))
        return torch.relu(out + self.down(x))


@pytest.mark.parametrize("kernels,fused", [(("optimized", "portable"), 1), (("portable",), 0)])
def test_pass_fuses_residual_add_relu(kernels, fused):
    model, x = ResidualBlock().eval(), rand(2, 4, 12, 12, seed=28)
    lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (x,)), kernels=kernels)
    ops = lowered.load().load_method("forward").instruction_names()
    assert ops.count(CONV_ADD_RELU) == fused and ops.count("aten::add.out") == 1 - fused
    assert ops.count(CONV_RELU) == fused
    with torch.no_grad():
        torch.testing.assert_close(lowered.load().forward(x)[0], model(x), atol=1e-4, rtol=1e-4)
