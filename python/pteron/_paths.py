"""Where pteron's own files are, found from this package's location (no git, no sys.path edits).

The same relative names as the C++ tools use (runtime/host/self_location.h): an installed wheel
holds everything under site-packages/pteron/ (share/pteron/targets, ...); a checkout's build tree
has build/share/pteron/ beside build/python/pteron_native*.so.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _origins() -> list[Path]:
    """This package's folder and the folder of the native module (build/python in a checkout)."""
    dirs = [_PACKAGE]
    spec = importlib.util.find_spec("pteron_native")
    if spec is not None and spec.origin:
        dirs.append(Path(spec.origin).resolve().parent)
    return dirs


def find_near(*relatives: str) -> Path | None:
    """The first existing <ancestor>/<relative> over the ancestors of the package and the native
    module (nearest first), or None."""
    for origin in _origins():
        for folder in (origin, *origin.parents):
            for rel in relatives:
                candidate = folder / rel
                if candidate.exists():
                    return candidate
    return None


def cli_binary() -> Path | None:
    """The pteron CLI shipped with this package: an installed wheel's pteron/bin/pteron, a build
    tree's tools/cli/pteron (beside build/python), or None."""
    found = find_near("bin/pteron", "tools/cli/pteron")
    return found if found is not None and os.access(found, os.X_OK) else None


def user_arm_venv() -> Path:
    """The venv `python -m pteron.arm_tools install` makes: $XDG_DATA_HOME/pteron/venv-arm."""
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "pteron" / "venv-arm"


def arm_venv() -> Path | None:
    """Arm's tools venv: $PTERON_ARM_VENV, the build tree's share/pteron/arm-venv link, a
    checkout's .venv-arm, then the user's (python -m pteron.arm_tools install)."""
    if os.environ.get("PTERON_ARM_VENV"):
        return Path(os.environ["PTERON_ARM_VENV"])
    found = find_near("share/pteron/arm-venv", ".venv-arm")
    if found is not None:
        return found
    user = user_arm_venv()
    return user if user.exists() else None
