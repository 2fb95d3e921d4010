import os
import sys

# Kernel tests import their harness by name; every test finds the CLI through pteron_cli.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "kernels"))
sys.path.insert(0, os.path.dirname(__file__))
