"""Zoo tests import the repository's `models/` and `python/pteron` packages by path, so they run
with a plain `pytest tests/models` from the repository root.
"""

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
for path in (REPO, REPO / "python"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))


def pytest_configure(config):
    # torch 2.13's own pytree code warns about its deprecated LeafSpec during export.
    config.addinivalue_line("filterwarnings", "ignore:.*LeafSpec.*:FutureWarning")
