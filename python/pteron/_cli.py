"""The `pteron` command of an installed wheel: runs the CLI binary shipped inside the package
(site-packages/pteron/bin/pteron), which finds its targets and layers relative to itself."""

import os
import sys
from pathlib import Path


def main() -> None:
    exe = Path(__file__).resolve().parent / "bin" / "pteron"
    if not os.access(exe, os.X_OK):
        sys.exit(f"pteron: the CLI binary {exe} is missing (reinstall the pteron wheel)")
    os.execv(exe, ["pteron", *sys.argv[1:]])  # the binary finds itself via /proc/self/exe


if __name__ == "__main__":
    main()
