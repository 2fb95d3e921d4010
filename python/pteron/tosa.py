"""TOSA lowering from Python: write .tosa files, run them on the TOSA reference model.

    python -m pteron.tosa resnet-8 --profile INT -o out/       # zoo model -> out/resnet-8.int.tosa
    python -m pteron.tosa model.pt2 --profile FP -o out/

`lower(pt2, profile, ...)` lowers what the profile takes (select_tosa_nodes: the supported
nodes, one convex region) and returns the native dict: ok, reason, tosa (bytes), inputs and
outputs (TOSA names, shapes, dim orders, int8 scale/zero point), refusals. The .tosa file is
written with a sidecar NAME.json describing the I/O (for the Ethos-U and VGF backends' tests).

The TOSA reference model lives in Arm's own venv (.venv-arm, tools/arm/requirements-arm.txt):
its numpy/flatbuffers pins clash with pteron's, so `ReferenceModel` runs it as a subprocess
that stays up for many graphs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from pteron._paths import arm_venv

_SERVER = Path(__file__).with_name("_tosa_ref_server.py")


def arm_python() -> Path | None:
    """The python of Arm's tools venv: $PTERON_ARM_VENV, the build tree's link to the venv it was
    configured with, a checkout's .venv-arm, or `python -m pteron.arm_tools install`'s."""
    venv = arm_venv()
    py = venv / "bin" / "python" if venv is not None else None
    return py if py is not None and py.exists() else None


def _native():
    import pteron_native

    if not hasattr(pteron_native, "tosa_lower_pt2"):
        raise RuntimeError("this pteron build has no TOSA lowering (tosa.fbs not found at "
                           "configure time: make venv-arm)")
    return pteron_native


def lower(pt2: str | Path, profile: str = "INT", scheme: str = "", calibration=(),
          int8_io: bool = False, sample=()) -> dict:
    """Lowers the TOSA-supported nodes of a .pt2 (quantized with `scheme` when given)."""
    cal = [np.ascontiguousarray(a) for a in calibration]
    smp = [np.ascontiguousarray(a) for a in sample]
    return _native().tosa_lower_pt2(str(pt2), profile, scheme, cal, int8_io, smp)


def host_value(io: dict) -> np.ndarray:
    """An I/O entry's host_bytes as an array in the TOSA tensor's layout (NHWC for 4-D)."""
    dtype = np.int8 if io["dtype"] == "int8" else np.float32
    order = io["value_dim_order"]
    logical = io["logical_shape"]
    stored = np.frombuffer(io["host_bytes"], dtype=dtype).reshape([logical[d] for d in order])
    arr = stored.transpose(np.argsort(order))  # logical (row-major) view
    return np.ascontiguousarray(arr.transpose(io["dim_order"]))


class ReferenceModel:
    """The TOSA reference model (tosa-tools, in .venv-arm) as a long-lived subprocess."""

    def __init__(self, python: Path | None = None):
        python = python or arm_python()
        if python is None:
            raise RuntimeError("no .venv-arm with tosa-tools (make venv-arm, or set PTERON_ARM_VENV)")
        self._dir = tempfile.TemporaryDirectory(prefix="pteron-tosa-")
        self._proc = subprocess.Popen([str(python), str(_SERVER)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        self._count = 0

    def run(self, tosa: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Outputs of the graph for `inputs` (in graph input order); raises on an invalid graph."""
        self._count += 1
        base = Path(self._dir.name) / f"g{self._count}"
        base.mkdir()
        (base / "graph.tosa").write_bytes(tosa)
        paths = []
        for i, a in enumerate(inputs):
            p = base / f"in{i}.npy"
            np.save(p, np.ascontiguousarray(a))
            paths.append(str(p))
        self._proc.stdin.write(json.dumps({"dir": str(base), "inputs": paths}) + "\n")
        self._proc.stdin.flush()
        reply = json.loads(self._proc.stdout.readline())
        if reply["status"] != "ok":
            raise RuntimeError(f"TOSA reference model: {reply['status']}")
        return [np.load(p) for p in reply["outputs"]]

    def close(self):
        if self._proc.poll() is None:
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
        self._dir.cleanup()


def write(result: dict, path: str | Path) -> Path:
    """Writes result["tosa"] to path and the I/O description next to it (.json)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(result["tosa"])
    meta = {k: result[k] for k in ("tosa_ops", "nodes", "graph_nodes", "refusals")}
    meta["inputs"] = [{k: v for k, v in io.items() if k != "host_bytes"} for io in result["inputs"]]
    meta["outputs"] = [{k: v for k, v in io.items() if k != "host_bytes"}
                       for io in result["outputs"]]
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    return path


def zoo_calibration(name: str, samples: int = 8, seed: int = 0) -> list[np.ndarray]:
    """Calibration data for a zoo model: its example input plus small noise, samples on axis 0."""
    import torch

    from pteron import zoo

    _, inputs = zoo.get(name)
    g = torch.Generator().manual_seed(seed)
    out = []
    for x in inputs:
        out.append(np.stack([(x + 0.1 * torch.randn(x.shape, generator=g)).numpy()
                             for _ in range(samples)]))
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pteron.tosa", description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a zoo model name or a .pt2 path")
    parser.add_argument("--profile", choices=["INT", "FP"], default="INT")
    parser.add_argument("--scheme", default="ethos-u",
                        help="quantization scheme for INT (default ethos-u)")
    parser.add_argument("-o", "--output-dir", default=".")
    args = parser.parse_args(argv)

    from pteron import zoo

    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if args.model in zoo.names():
        name = args.model
        pt2 = out_dir / f"{name}.pt2"
        if not pt2.exists():
            zoo.export(name, pt2)
        calibration = zoo_calibration(name) if args.profile == "INT" else []
    else:
        pt2 = Path(args.model)
        name = pt2.stem
        if args.profile == "INT":
            print("error: INT from a .pt2 needs calibration data; use a zoo model name",
                  file=sys.stderr)
            return 1
        calibration = []
    result = lower(pt2, args.profile, args.scheme if args.profile == "INT" else "", calibration,
                   int8_io=args.profile == "INT")
    for r in result["refusals"]:
        print(f"kept on the CPU: {r}", file=sys.stderr)
    if not result["ok"]:
        print(f"error: {result['reason']}", file=sys.stderr)
        return 1
    path = write(result, out_dir / f"{name}.{args.profile.lower()}.tosa")
    print(f"{path}: {result['tosa_ops']} TOSA ops from {result['nodes']} of "
          f"{result['graph_nodes']} nodes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
