import os
import sys

# Kernel tests import their harness by name.
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "kernels"))
