"""Writes a small FP32 conv net as a TOSA 1.0 flatbuffer with tosa-tools' serializer, for the
VGF runtime tests: independent of pteron's TOSA lowering (backends/tosa), so a runtime failure
is never a lowering failure in disguise (test_vgf_lowering.py covers the lowered path).

Runs in the Arm tools venv (.venv-arm), never in .venv: `python make_tosa_fixture.py OUT_DIR`.
Writes OUT_DIR/convnet.tosa and OUT_DIR/convnet_weights.npz (the constants, so the test can
compute the same net with torch). Layout is TOSA's NHWC; weights are OHWI.

    x [1, 8, 8, 3] -> CONV2D 3x3 (3 -> 8, pad 1) -> CLAMP [0, inf) (relu)
                   -> CONV2D 1x1 (8 -> 4) -> y [1, 8, 8, 4]
"""

import sys

import numpy as np
import tosa_serializer as ts


def const(ser, array, name):
    return ser.addConst(list(array.shape), ts.DType.FP32, array, name)


def conv(ser, x, w, b, out_shape, pad):
    zp_in = ser.addConst([1], ts.DType.FP32, np.zeros([1], np.float32), w.name + "_zp_in")
    zp_w = ser.addConst([1], ts.DType.FP32, np.zeros([1], np.float32), w.name + "_zp_w")
    out = ser.addIntermediate(out_shape, ts.DType.FP32)
    attr = ts.TosaSerializerAttribute()
    attr.Conv2dAttribute([pad] * 4, [1, 1], [1, 1], False, ts.DType.FP32)
    ser.addOperator(ts.Op.CONV2D, [x.name, w.name, b.name, zp_in.name, zp_w.name], [out.name], attr)
    return out


def main(out_dir):
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal([8, 3, 3, 3]) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal([8]) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal([4, 1, 1, 8]) * 0.3).astype(np.float32)
    b2 = (rng.standard_normal([4]) * 0.1).astype(np.float32)

    ser = ts.TosaSerializer(out_dir)
    x = ser.addPlaceholder([1, 8, 8, 3], ts.DType.FP32, None)
    h = conv(ser, x, const(ser, w1, "w1"), const(ser, b1, "b1"), [1, 8, 8, 8], 1)
    relu = ser.addIntermediate([1, 8, 8, 8], ts.DType.FP32)
    attr = ts.TosaSerializerAttribute()
    lo = list(np.array([0.0], np.float32).tobytes())
    hi = list(np.array([np.finfo(np.float32).max], np.float32).tobytes())
    attr.ClampAttribute(lo, hi, ts.NanPropagationMode.PROPAGATE)
    ser.addOperator(ts.Op.CLAMP, [h.name], [relu.name], attr)
    y = conv(ser, relu, const(ser, w2, "w2"), const(ser, b2, "b2"), [1, 8, 8, 4], 0)
    out = ser.addOutput([1, 8, 8, 4], ts.DType.FP32)
    attr = ts.TosaSerializerAttribute()
    attr.IdentityAttribute()
    ser.addOperator(ts.Op.IDENTITY, [y.name], [out.name], attr)

    with open(f"{out_dir}/convnet.tosa", "wb") as f:
        f.write(ser.serialize())
    np.savez(f"{out_dir}/convnet_weights.npz", w1=w1, b1=b1, w2=w2, b2=b2)


if __name__ == "__main__":
    main(sys.argv[1])
