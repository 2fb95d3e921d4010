"""Zoo tests import the repository's `models/` and `python/pteron` packages by path, so they run
with a plain `pytest tests/models` from the repository root.

Tests marked `slow` (minutes: the OPT-125M export) are deselected unless PTERON_SLOW_TESTS=1.
"""

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "python"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes minutes; runs only with PTERON_SLOW_TESTS=1")
    # torch 2.13's own pytree code warns about its deprecated LeafSpec during export.
    config.addinivalue_line("filterwarnings", "ignore:.*LeafSpec.*:FutureWarning")


def pytest_collection_modifyitems(config, items):
    if os.environ.get("PTERON_SLOW_TESTS") == "1":
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
