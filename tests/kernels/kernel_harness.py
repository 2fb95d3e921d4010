"""Calls one pteron kernel on torch tensors and compares with torch.

Out tensors are allocated here and written in place by the kernel (zero copy through DLPack).
"""

import pteron_native
import torch


def run_kernel(name, args, library="portable", dynamic=()):
    """Runs kernel `name` from `library` with `args` (tensors, scalars, lists, None) in schema
    order. The tests in this folder check the portable kernels; tests/kernels/optimized passes
    library="optimized". The tensors at positions `dynamic` are passed as bounded-dynamic (the
    array is the upper bound, as planned for data-dependent outputs); returns their shapes after
    the call."""
    return [tuple(s) for s in pteron_native.run_kernel(name, list(args), library, list(dynamic))]


def assert_close(actual, expected, atol, rtol, what=""):
    assert actual.shape == expected.shape, f"{what}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, msg=lambda m: f"{what}: {m}")
