"""Calls one pteron kernel on torch tensors and compares with torch.

Out tensors are allocated here and written in place by the kernel (zero copy through DLPack).
"""

import pteron_native
import torch


def run_kernel(name, args, library="portable"):
    """Runs kernel `name` from `library` with `args` (tensors, scalars, lists, None) in schema
    order. The tests in this folder check the portable kernels; tests/kernels/optimized passes
    library="optimized"."""
    pteron_native.run_kernel(name, list(args), library)


def assert_close(actual, expected, atol, rtol, what=""):
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, msg=lambda m: f"{what}: {m}")
