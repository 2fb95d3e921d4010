"""TOSA graphs for the executor tests, built with tosa-tools' own serializer and run through the
TOSA reference model. Runs in .venv-arm (tosa-tools pins numpy/flatbuffers that clash with .venv):

    .venv-arm/bin/python tosa_op_cases.py OUT_DIR [NAME...]

writes OUT_DIR/NAME/{graph.tosa, inputs.npz, expected.npz} per case. CASES (names -> builders)
is importable without tosa-tools so pytest can parametrize over it.
"""

import sys
import zlib
from pathlib import Path

import numpy as np

# dtype names resolved lazily (tosa-tools is only importable in .venv-arm).
I8, I16, I32, F32 = "INT8", "INT16", "INT32", "FP32"
NP = {I8: np.int8, I16: np.int16, I32: np.int32, F32: np.float32}


class G:
    """A thin layer over TosaSerializer: named dtypes, constants from numpy, one-line ops."""

    def __init__(self, seed):
        import tosa_serializer as ts
        from tosa.DType import DType
        from tosa.Op import Op

        self.ts, self.DType, self.Op = ts, DType, Op
        self.s = ts.TosaSerializer(".")
        self.rng = np.random.default_rng(seed)
        self.inputs = []

    def dt(self, name):
        return getattr(self.DType, name)

    def input(self, shape, dtype, lo=None, hi=None):
        if dtype == F32:
            v = self.rng.standard_normal(shape).astype(np.float32)
        else:
            info = np.iinfo(NP[dtype])
            v = self.rng.integers(info.min if lo is None else lo, (info.max if hi is None else hi) + 1,
                                  shape).astype(NP[dtype])
        self.inputs.append(v)
        return self.s.addPlaceholder(list(shape), self.dt(dtype), None).name

    def const(self, values, dtype):
        v = np.asarray(values).astype(NP[dtype])
        return self.s.addConst(list(v.shape), self.dt(dtype), v).name

    def shape(self, values):
        return self.s.addConst([len(values)], self.DType.SHAPE, np.asarray(values, np.int64)).name

    def rand_const(self, shape, dtype, lo=-127, hi=127):
        if dtype == F32:
            return self.const(self.rng.standard_normal(shape).astype(np.float32), dtype)
        return self.const(self.rng.integers(lo, hi + 1, shape), dtype)

    def zp(self, v, dtype):
        return self.const([v], dtype)

    def op(self, op, inputs, shape, dtype, attr=None, output=False):
        t = self.s.addOutput(shape, self.dt(dtype)) if output else self.s.addIntermediate(shape, self.dt(dtype))
        self.s.addOperator(getattr(self.Op, op), inputs, [t.name], attr)
        return t.name

    def attr(self):
        return self.ts.TosaSerializerAttribute()

    def rescale(self, x, shape, in_dt, out_dt, mult, shift, izp=0, ozp=0, scale32=True,
                double_round=True, per_channel=False, in_unsigned=False, out_unsigned=False,
                output=False):
        from tosa.RoundingMode import RoundingMode

        a = self.attr()
        a.RescaleAttribute(scale32, RoundingMode.DOUBLE_ROUND if double_round else RoundingMode.SINGLE_ROUND,
                           per_channel, in_unsigned, out_unsigned)
        m = self.const(mult, I32 if scale32 else I16)
        s = self.const(shift, I8)
        return self.op("RESCALE", [x, m, s, self.zp(izp, in_dt), self.zp(ozp, out_dt)], shape, out_dt,
                       a, output)


def conv2d_int8(g):
    x = g.input([2, 9, 11, 5], I8)
    w = g.rand_const([7, 3, 3, 5], I8)
    b = g.rand_const([7], I32, -3000, 3000)
    a = g.attr()
    a.Conv2dAttribute([1, 1, 2, 1], [2, 1], [1, 2], False, g.DType.INT32)
    acc = g.op("CONV2D", [x, w, b, g.zp(-7, I8), g.zp(0, I8)], [2, 5, 10, 7], I32, a)
    mult = g.rng.integers(1 << 29, 1 << 31, 7)
    g.rescale(acc, [2, 5, 10, 7], I32, I8, mult, g.rng.integers(36, 42, 7), ozp=3, per_channel=True,
              output=True)


def conv2d_int8_raw_acc(g):
    x = g.input([1, 6, 6, 3], I8)
    w = g.rand_const([4, 1, 1, 3], I8)
    a = g.attr()
    a.Conv2dAttribute([0, 0, 0, 0], [1, 1], [1, 1], False, g.DType.INT32)
    g.op("CONV2D", [x, w, g.const([100], I32), g.zp(5, I8), g.zp(0, I8)], [1, 6, 6, 4], I32, a,
         output=True)


def depthwise_int8(g):
    x = g.input([1, 10, 8, 4], I8)
    w = g.rand_const([3, 3, 4, 2], I8)
    b = g.rand_const([8], I32, -500, 500)
    a = g.attr()
    a.DepthwiseConv2dAttribute([1, 0, 0, 1], [2, 2], [1, 1], False, g.DType.INT32)
    g.op("DEPTHWISE_CONV2D", [x, w, b, g.zp(12, I8), g.zp(0, I8)], [1, 5, 4, 8], I32, a,
         output=True)


def matmul_int8(g):
    x = g.input([2, 5, 7], I8)
    y = g.input([2, 7, 3], I8)
    g.op("MATMUL", [x, y, g.zp(-4, I8), g.zp(9, I8)], [2, 5, 3], I32, output=True)


def add_sub_int32_broadcast(g):
    x = g.input([2, 3, 1, 4], I32, -(1 << 20), 1 << 20)
    y = g.input([1, 3, 5, 4], I32, -(1 << 20), 1 << 20)
    g.op("ADD", [x, y], [2, 3, 5, 4], I32, output=True)
    g.op("SUB", [x, y], [2, 3, 5, 4], I32, output=True)


def mul_int32_shift(g):
    x = g.input([3, 8], I32, -(1 << 15), 1 << 15)
    y = g.input([3, 1], I32, -(1 << 15), 1 << 15)
    g.op("MUL", [x, y, g.const([9], I8)], [3, 8], I32, output=True)


def mul_int8(g):
    x = g.input([4, 6], I8)
    y = g.input([4, 6], I8)
    g.op("MUL", [x, y, g.const([0], I8)], [4, 6], I32, output=True)


def rescale_variants(g):
    x = g.input([2, 4, 6], I8)
    g.rescale(x, [2, 4, 6], I8, I32, [1 << 30], [30], izp=-3, double_round=False, output=True)
    y = g.input([3, 17], I32, -(1 << 22), 1 << 22)
    g.rescale(y, [3, 17], I32, I16, [23456], [20], scale32=False, double_round=False,
              output=True)
    g.rescale(y, [3, 17], I32, I8, [1518500250], [47], ozp=-5, double_round=True, output=True)
    u = g.input([5, 3], I8)
    g.rescale(u, [5, 3], I8, I8, [1 << 30], [30], izp=-128, ozp=0, in_unsigned=True,
              output=True)
    g.rescale(u, [5, 3], I8, I8, [1 << 30], [30], izp=0, ozp=-128, out_unsigned=True,
              output=True)


def clamp_int8_fp32(g):
    x = g.input([3, 4, 5], I8)
    a = g.attr()
    a.ClampAttribute(g.s.builder, np.array([-20], np.int8).tobytes(), np.array([50], np.int8).tobytes(),
                     1)
    g.op("CLAMP", [x], [3, 4, 5], I8, a, output=True)
    f = g.input([7, 3], F32)
    a = g.attr()
    a.ClampAttribute(g.s.builder, np.array([-0.5], np.float32).tobytes(),
                     np.array([0.75], np.float32).tobytes(), 1)
    g.op("CLAMP", [f], [7, 3], F32, a, output=True)


def avg_pool_int8(g):
    x = g.input([1, 7, 9, 3], I8)
    a = g.attr()
    a.AvgPool2dAttribute([3, 3], [2, 2], [1, 1, 1, 1], g.DType.INT32)
    g.op("AVG_POOL2D", [x, g.zp(-10, I8), g.zp(4, I8)], [1, 4, 5, 3], I8, a, output=True)
    a = g.attr()
    a.AvgPool2dAttribute([7, 9], [1, 1], [0, 0, 0, 0], g.DType.INT32)
    g.op("AVG_POOL2D", [x, g.zp(0, I8), g.zp(0, I8)], [1, 1, 1, 3], I8, a, output=True)


def max_pool_int8(g):
    x = g.input([2, 8, 6, 4], I8)
    a = g.attr()
    a.MaxPool2dAttribute([2, 3], [2, 2], [0, 0, 1, 0], 1)
    g.op("MAX_POOL2D", [x], [2, 4, 3, 4], I8, a, output=True)


def data_movement(g):
    x = g.input([2, 3, 4], I8)
    g.op("RESHAPE", [x, g.shape([6, 4])], [6, 4], I8, output=True)
    a = g.attr()
    a.TransposeAttribute([2, 0, 1])
    g.op("TRANSPOSE", [x], [4, 2, 3], I8, a, output=True)
    g.op("PAD", [x, g.shape([0, 1, 2, 0, 1, 3]), g.const([-9], I8)], [3, 5, 8], I8, output=True)
    y = g.input([2, 2, 4], I8)
    a = g.attr()
    a.ConcatAttribute(1)
    g.op("CONCAT", [x, y, x], [2, 8, 4], I8, a, output=True)
    g.op("SLICE", [x, g.shape([1, 1, 0]), g.shape([1, 2, 3])], [1, 2, 3], I8, output=True)


def reductions(g):
    x = g.input([3, 5, 4], I32, -(1 << 20), 1 << 20)
    a = g.attr()
    a.ReduceSumAttribute(1)
    g.op("REDUCE_SUM", [x], [3, 1, 4], I32, a, output=True)
    y = g.input([3, 5, 4], I8)
    a = g.attr()
    a.ReduceMaxAttribute(2, 1)
    g.op("REDUCE_MAX", [y], [3, 5, 1], I8, a, output=True)


def softmax_int_pieces(g):
    """The forms the INT softmax lowering adds: int32 MUL with shifts 16 and 30 whose int64
    products exceed 32 bits, a [1, 1] constant minus a row vector, and
    a RESCALE to int8 at zero point 127 that saturates."""
    s = g.input([2, 1], I32, 1 << 16, 1 << 20)  # S * R >> 16 stays below 2^31
    r = g.input([2, 1], I32, 1 << 18, 3 << 25)
    p = g.op("MUL", [s, r, g.const([16], I8)], [2, 1], I32, output=True)
    dev = g.op("SUB", [g.const([[1 << 30]], I32), p], [2, 1], I32, output=True)
    g.op("MUL", [r, dev, g.const([30], I8)], [2, 1], I32, output=True)
    e = g.input([2, 12], I32, 0, 65535)
    g.op("MUL", [e, g.input([2, 1], I32, 1 << 18, 1 << 30), g.const([16], I8)], [2, 12], I32,
         output=True)
    d = g.input([2, 12], I32, -300, 0)
    g.rescale(d, [2, 12], I32, I8, [1 << 30], [30], ozp=127, double_round=False, output=True)


def table_int8_int16(g):
    x = g.input([4, 16], I8)
    g.op("TABLE", [x, g.rand_const([256], I8, -128, 127)], [4, 16], I8, output=True)
    y = g.input([3, 11], I16)
    # The reference model requires neighbouring int16 entries to differ by an int16 slope.
    smooth = np.clip(np.cumsum(g.rng.integers(-300, 300, 513)), -32768, 32767)
    g.op("TABLE", [y, g.const(smooth, I16)], [3, 11], I32, output=True)


def fp32_ops(g):
    x = g.input([1, 6, 5, 3], F32)
    a = g.attr()
    a.Conv2dAttribute([1, 1, 1, 1], [1, 1], [1, 1], False, g.DType.FP32)
    g.op("CONV2D", [x, g.rand_const([4, 3, 3, 3], F32), g.rand_const([4], F32), g.zp(0, F32),
                    g.zp(0, F32)], [1, 6, 5, 4], F32, a, output=True)
    a = g.attr()
    a.AvgPool2dAttribute([2, 2], [2, 2], [0, 0, 0, 1], g.DType.FP32)
    g.op("AVG_POOL2D", [x, g.zp(0, F32), g.zp(0, F32)], [1, 3, 3, 3], F32, a, output=True)
    m = g.input([1, 4, 6], F32)
    n = g.input([1, 6, 2], F32)
    g.op("MATMUL", [m, n, g.zp(0, F32), g.zp(0, F32)], [1, 4, 2], F32, output=True)
    g.op("ADD", [m, m], [1, 4, 6], F32, output=True)


def mini_network(g):
    """conv -> rescale -> clamp -> depthwise -> rescale -> avg pool -> reshape -> matmul ->
    rescale: intermediates whose lifetimes end let the planner reuse bytes."""
    x = g.input([1, 12, 12, 3], I8)
    a = g.attr()
    a.Conv2dAttribute([1, 0, 1, 0], [2, 2], [1, 1], False, g.DType.INT32)
    c = g.op("CONV2D", [x, g.rand_const([8, 3, 3, 3], I8), g.rand_const([8], I32, -900, 900),
                        g.zp(-1, I8), g.zp(0, I8)], [1, 6, 6, 8], I32, a)
    r = g.rescale(c, [1, 6, 6, 8], I32, I8, g.rng.integers(1 << 29, 1 << 31, 8), [38] * 8, ozp=-128,
                  per_channel=True)
    a = g.attr()
    a.ClampAttribute(g.s.builder, np.array([-128], np.int8).tobytes(), np.array([127], np.int8).tobytes(), 1)
    r = g.op("CLAMP", [r], [1, 6, 6, 8], I8, a)
    a = g.attr()
    a.DepthwiseConv2dAttribute([1, 1, 1, 1], [1, 1], [1, 1], False, g.DType.INT32)
    d = g.op("DEPTHWISE_CONV2D", [r, g.rand_const([3, 3, 8, 1], I8), g.rand_const([8], I32, -99, 99),
                                  g.zp(-128, I8), g.zp(0, I8)], [1, 6, 6, 8], I32, a)
    d = g.rescale(d, [1, 6, 6, 8], I32, I8, [1 << 30], [39], ozp=-128)
    a = g.attr()
    a.AvgPool2dAttribute([6, 6], [1, 1], [0, 0, 0, 0], g.DType.INT32)
    p = g.op("AVG_POOL2D", [d, g.zp(-128, I8), g.zp(-128, I8)], [1, 1, 1, 8], I8, a)
    p = g.op("RESHAPE", [p, g.shape([1, 1, 8])], [1, 1, 8], I8)
    m = g.op("MATMUL", [p, g.rand_const([1, 8, 5], I8), g.zp(-128, I8), g.zp(0, I8)], [1, 1, 5], I32,
             )
    g.rescale(m, [1, 1, 5], I32, I8, [1 << 30], [40], ozp=7, output=True)


CASES = {f.__name__: f for f in [
    conv2d_int8, conv2d_int8_raw_acc, depthwise_int8, matmul_int8, add_sub_int32_broadcast,
    mul_int32_shift, mul_int8, rescale_variants, clamp_int8_fp32, avg_pool_int8, max_pool_int8,
    data_movement, reductions, table_int8_int16, fp32_ops, mini_network, softmax_int_pieces,
]}
# Cases whose outputs are float: compared within a tolerance (summation order differs).
FLOAT_CASES = {"fp32_ops", "clamp_int8_fp32"}


def write_case(out_dir: Path, name: str, seed: int) -> None:
    import tosa_reference_model as trm

    g = G(seed)
    CASES[name](g)
    graph = g.s.serialize()
    outs, status = trm.run(bytes(graph), g.inputs)
    if outs is None or "VALID" not in str(status):
        raise SystemExit(f"{name}: the reference model rejected the graph ({status})")
    d = out_dir / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "graph.tosa").write_bytes(graph)
    np.savez(d / "inputs.npz", **{f"in{i}": v for i, v in enumerate(g.inputs)})
    np.savez(d / "expected.npz", **{f"out{i}": np.asarray(v) for i, v in enumerate(outs)})


def main(argv):
    for p in (Path(sys.prefix) / "lib").glob("python3*/site-packages/serializer"):
        sys.path.insert(0, str(p))  # tosa_serializer lives in serializer/
    out_dir = Path(argv[1])
    names = argv[2:] or list(CASES)
    for name in names:
        write_case(out_dir, name, seed=zlib.crc32(name.encode()))


if __name__ == "__main__":
    main(sys.argv)
