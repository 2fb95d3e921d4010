"""Arm's tools for the Ethos-U and VGF paths (Vela, the ML SDK model converter, the TOSA reference
model, the VGF emulation layer), in their own venv: their numpy/flatbuffers pins clash with
torch's environment, so they are not a pip extra of pteron.

    python -m pteron.arm_tools install    # venv at $XDG_DATA_HOME/pteron/venv-arm (~/.local/share)
    python -m pteron.arm_tools where      # the venv pteron uses, if any

pteron finds the venv by itself afterwards (vela, model-converter: runtime/host/self_location.h;
the reference model: pteron.tosa). The pins are the checkout's tools/arm/requirements-arm.txt,
shipped in the wheel as pteron/requirements-arm.txt.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from pteron._paths import arm_venv, find_near, user_arm_venv


def requirements() -> Path:
    found = find_near("requirements-arm.txt", "tools/arm/requirements-arm.txt")
    if found is None:
        raise SystemExit("pteron.arm_tools: requirements-arm.txt not found beside the package")
    return found


def install(venv: Path) -> None:
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", "-r", str(requirements())], check=True)
    print(f"Arm tools installed in {venv}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pteron.arm_tools", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("install", help="make the Arm tools venv")
    p.add_argument("--venv", type=Path, default=user_arm_venv())
    sub.add_parser("where", help="print the Arm tools venv pteron uses")
    args = ap.parse_args(argv)
    if args.cmd == "install":
        install(args.venv)
    else:
        venv = arm_venv()
        if venv is None:
            raise SystemExit("no Arm tools venv (python -m pteron.arm_tools install)")
        print(venv)


if __name__ == "__main__":
    main()
