"""upsample_nearest2d / upsample_bilinear2d lowered to TOSA RESIZE, on the TOSA reference model.

FP: the reference model's fp32 result against torch eager within 1e-5 (absolute plus relative
to the output's magnitude). INT: a PT2E-form graph (int8 input -> dequantize -> upsample ->
quantize -> int8 output) against a scalar reference of TOSA's integer arithmetic written here
in numpy, bit for bit: nearest copies int8 values; bilinear sums the four int8 taps with
integer weights (N = scale_y_n * scale_x_n in total), subtracts N * zero point and rescales by
1/N (a power of two for 2x: exact), so the int8 result is round-half-up of the exact
interpolation. It is also within one step of torch's float interpolation of the dequantized
input. pteron's TOSA executor (pteron-tosa-run) must match the reference model bit for bit on
the int8 graphs. None of this needs the portable upsample kernels: no host run is involved.
"""

import subprocess

import numpy as np
import pytest
import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401  (registers quantized_decomposed)
import torch.nn.functional as F
from pteron import tosa
from test_tosa_executor import tosa_run

torch.manual_seed(0)
qd = torch.ops.quantized_decomposed


@pytest.fixture(scope="module")
def ref():
    model = tosa.ReferenceModel()
    yield model
    model.close()


class Fn(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _lower(fn, x, path, profile):
    ep = torch.export.export(Fn(fn).eval(), (x,)).run_decompositions()
    torch.export.save(ep, path)
    r = tosa.lower(path, profile)
    assert r["ok"], r["reason"]
    assert r["refusals"] == [], r["refusals"]
    return r


FP_CASES = {
    "nearest_2x": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "nearest_3x2": lambda x: F.interpolate(x, scale_factor=(3, 2), mode="nearest"),
    "nearest_size_down": lambda x: F.interpolate(x, size=(4, 3), mode="nearest"),
    "nearest_size_up_odd": lambda x: F.interpolate(x, size=(11, 9), mode="nearest"),
    "bilinear_2x": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "bilinear_2x_align": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True),
    "bilinear_size": lambda x: F.interpolate(x, size=(13, 7), mode="bilinear"),
    "bilinear_size_align": lambda x: F.interpolate(x, size=(9, 17), mode="bilinear", align_corners=True),
}


@pytest.mark.parametrize("case", sorted(FP_CASES))
def test_fp_resize_matches_torch(ref, tmp_path, case):
    x = torch.randn(2, 3, 6, 5)
    r = _lower(FP_CASES[case], x, tmp_path / "m.pt2", "FP")
    io_in, io_out = r["inputs"][0], r["outputs"][0]
    out = ref.run(r["tosa"], [np.ascontiguousarray(x.numpy().transpose(io_in["dim_order"]))])[0]
    want = np.ascontiguousarray(FP_CASES[case](x).numpy().transpose(io_out["dim_order"]))
    assert out.shape == want.shape
    err = np.abs(out - want).max()
    assert err <= 1e-5 * (1 + np.abs(want).max()), err


def _axis(in_size, out_size, bilinear, align):
    """TOSA (n, d, offset) of one axis, as the lowering chooses them (reduced fraction)."""
    if bilinear and align:
        n, d, off = out_size - 1, in_size - 1, 0
    else:
        n, d, off = 2 * out_size, 2 * in_size, (in_size - out_size) if bilinear else -out_size
    g = np.gcd(np.gcd(n, d), abs(off))
    return n // g, d // g, off // g


def _tosa_resize_int8(q, out_hw, bilinear, align):
    """TOSA 1.0 RESIZE on int8 NHWC `q` (int64 result: int8 values for nearest, the N-weighted
    sums for bilinear) with the lowering's scale and offset."""
    _, ih, iw, _ = q.shape
    (ny, dy_, oy_), (nx, dx_, ox_) = _axis(ih, out_hw[0], bilinear, align), _axis(iw, out_hw[1], bilinear, align)
    q = q.astype(np.int64)
    out = np.zeros((q.shape[0], out_hw[0], out_hw[1], q.shape[3]), np.int64)
    for oy in range(out_hw[0]):
        y = oy * dy_ + oy_
        iy, dy = y // ny, y % ny
        for ox in range(out_hw[1]):
            x = ox * dx_ + ox_
            ix, dx = x // nx, x % nx
            if not bilinear:
                sy = min(max(iy + (2 * dy >= ny), 0), ih - 1)
                sx = min(max(ix + (2 * dx >= nx), 0), iw - 1)
                out[:, oy, ox] = q[:, sy, sx]
                continue
            y0, y1 = min(max(iy, 0), ih - 1), min(max(iy + 1, 0), ih - 1)
            x0, x1 = min(max(ix, 0), iw - 1), min(max(ix + 1, 0), iw - 1)
            out[:, oy, ox] = (q[:, y0, x0] * (ny - dy) * (nx - dx) + q[:, y0, x1] * (ny - dy) * dx
                              + q[:, y1, x0] * dy * (nx - dx) + q[:, y1, x1] * dy * dx)
    return out, ny * nx


INT_CASES = {  # name: (fn, output size of a 6x5 input, bilinear, align_corners)
    "nearest_2x": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), (12, 10), False, False),
    "nearest_size_odd": (lambda x: F.interpolate(x, size=(11, 9), mode="nearest"), (11, 9), False, False),
    "bilinear_2x": (lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), (12, 10), True, False),
    "bilinear_4x": (lambda x: F.interpolate(x, scale_factor=4, mode="bilinear"), (24, 20), True, False),
}
S, ZP = 0.05, 3  # the same input and output parameters: the rescale is exactly 1/N


def _int_graph(fn):
    def graph(xq):
        x = qd.dequantize_per_tensor.default(xq, S, ZP, -128, 127, torch.int8)
        return qd.quantize_per_tensor.default(fn(x), S, ZP, -128, 127, torch.int8)
    return graph


@pytest.mark.parametrize("case", sorted(INT_CASES))
def test_int8_resize_is_bit_exact_with_the_scalar_reference(ref, tmp_path, case):
    fn, out_hw, bilinear, align = INT_CASES[case]
    xq = torch.randint(-128, 128, (2, 4, 6, 5), dtype=torch.int8)
    r = _lower(_int_graph(fn), xq, tmp_path / "m.pt2", "INT")
    io_in, io_out = r["inputs"][0], r["outputs"][0]
    assert io_in["dtype"] == io_out["dtype"] == "int8"
    q_nhwc = np.ascontiguousarray(xq.numpy().transpose(io_in["dim_order"]))
    out = ref.run(r["tosa"], [q_nhwc])[0]
    acc, n = _tosa_resize_int8(q_nhwc, out_hw, bilinear, align)
    if bilinear:
        want = np.clip(np.floor_divide(acc - n * ZP + n // 2, n) + ZP, -128, 127)  # round half up
    else:
        want = acc
    np.testing.assert_array_equal(out, want.astype(np.int8))
    # Against torch's float interpolation of the dequantized input: within one int8 step.
    real = fn((xq.to(torch.float32) - ZP) * S).numpy().transpose(io_out["dim_order"])
    steps = np.abs(out.astype(np.float64) - (real / S + ZP).clip(-128, 127))
    assert steps.max() <= 0.5 + 1e-6 if not bilinear else steps.max() <= 1.0, steps.max()

    # pteron's TOSA executor on the same graph: bit-exact with the reference model.
    graph, inputs, got = tmp_path / "g.tosa", tmp_path / "in.npz", tmp_path / "out.npz"
    graph.write_bytes(r["tosa"])
    np.savez(inputs, q_nhwc)
    run = subprocess.run([tosa_run(), str(graph), str(inputs), str(got)], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0, run.stderr
    np.testing.assert_array_equal(next(iter(np.load(got).values())), out)


def test_int8_bilinear_with_other_output_parameters_is_within_one_step(ref, tmp_path):
    """Output scale and zero point differ from the input's and 4 -> 7 is not a power-of-two
    weight sum: the RESCALE by s_in / (N s_out) rounds once; within one step of torch."""
    def graph(xq):
        x = qd.dequantize_per_tensor.default(xq, 0.04, -5, -128, 127, torch.int8)
        y = F.interpolate(x, size=(7, 9), mode="bilinear")
        return qd.quantize_per_tensor.default(y, 0.03, 7, -128, 127, torch.int8)

    xq = torch.randint(-128, 128, (1, 3, 4, 5), dtype=torch.int8)
    r = _lower(graph, xq, tmp_path / "m.pt2", "INT")
    io_in, io_out = r["inputs"][0], r["outputs"][0]
    out = ref.run(r["tosa"], [np.ascontiguousarray(xq.numpy().transpose(io_in["dim_order"]))])[0]
    real = F.interpolate((xq.to(torch.float32) + 5) * 0.04, size=(7, 9), mode="bilinear")
    want = (real / 0.03 + 7).clamp(-128, 127).numpy().transpose(io_out["dim_order"])
    assert np.abs(out - want).max() <= 1.0


def test_resize_refusals_name_the_constraint(tmp_path):
    x = torch.randn(1, 2, 4, 4)
    ep = torch.export.export(Fn(lambda v: F.interpolate(v, scale_factor=1.3, mode="bilinear")).eval(),
                             (x,)).run_decompositions()
    torch.export.save(ep, tmp_path / "m.pt2")
    r = tosa.lower(tmp_path / "m.pt2", "FP")
    text = " ".join(str(x) for x in r["refusals"]) + str(r.get("reason", ""))
    assert "scale factor that does not give the output size exactly" in text, text
