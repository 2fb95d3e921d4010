import os
import sys

import pytest

# Kernel tests import their harness by name; every test finds the CLI through pteron_cli.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "kernels"))
sys.path.insert(0, os.path.dirname(__file__))

# Host compiles read this machine's cost-model calibration (`pteron tune`) when one is cached;
# tests compile without one unless they name a file, so a developer's cache never changes them.
os.environ.setdefault("PTERON_CALIBRATION", "off")


@pytest.fixture(scope="session")
def zoo_pt2(tmp_path_factory):
    """zoo_pt2(name): the zoo model's core-ATen .pt2 (pteron.zoo.export), exported once per test
    session and shared by every test file that compiles zoo models (OPT-125M's export alone takes
    tens of seconds)."""
    from pteron import zoo

    folder = tmp_path_factory.mktemp("zoo-pt2")
    paths = {}

    def get(name):
        if name not in paths:
            paths[name] = zoo.export(name, folder / f"{name}.pt2", log=lambda _msg: None)
        return paths[name]

    return get
