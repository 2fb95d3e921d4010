"""Shared by the optimized kernels' tests: `threads` runs a test at 1 and 2 threads (the
kernels split their work over threads at 2; results must not depend on it), and puts the
thread count back afterwards."""

import pteron_native
import pytest


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    pteron_native.set_num_threads(request.param)
    yield request.param
    pteron_native.set_num_threads(0)
