"""What the Ethos-U end-to-end tests share: the CLI run that must succeed, and the check that a
program's Ethos-U region, run through the backend's tool on its own (emulated driver), equals bit
for bit the TOSA reference model run on the region's TOSA form taken from the payload."""

import subprocess
from pathlib import Path

import numpy as np
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[3]


def cli(*args):
    r = subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def ethos_u_tool() -> str:
    return str(REPO / "build" / "backends" / "ethos_u" / "pteron-ethos-u")


def assert_region_matches_reference(program: bytes, work: Path, x_nhwc: np.ndarray, reference):
    # The delegate's payload inside the program (its PEU1 flatbuffer; trailing bytes of the
    # file are ignored by the verifier), run through the backend on its own, and its TOSA form.
    payload = work / "region.peu"
    payload.write_bytes(program[program.index(b"PEU1") - 4:])
    subprocess.run([ethos_u_tool(), "tosa", payload, work / "region.tosa"], check=True)
    np.savez(work / "region_in.npz", in0=x_nhwc)
    r = subprocess.run([ethos_u_tool(), "run", payload, work / "region_in.npz", work / "region_out.npz"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = np.load(work / "region_out.npz")["out0"]
    (expected,) = reference.run((work / "region.tosa").read_bytes(), [x_nhwc])
    assert expected.dtype == np.int8
    np.testing.assert_array_equal(got, expected)
