"""The optimized library's index.Tensor for one 1-D index tensor (an index_select: what
torch.export's default decompositions make of reflection / replication padding and x[:, idx])
against torch, exactly, at 1 and 2 threads: every dim indexed, whole rows and single elements,
negative and repeated indices, int32 and int64 indices; and what goes to the portable kernel
(several index tensors, a 2-D index, other dtypes, an index out of range and its error)."""

import pytest
import torch
from kernel_harness import run_kernel

GEN = torch.Generator().manual_seed(0)


def index(x, indices, library="optimized"):
    want = x[tuple(slice(None) if i is None else i for i in indices)]
    out = torch.empty_like(want)
    run_kernel("aten::index.Tensor_out", [x, indices, out], library=library)
    return out, want


@pytest.mark.parametrize("shape,dim", [((1, 32, 128, 128), 2), ((1, 32, 136, 128), 3), ((4, 100), 0),
                                       ((2, 3, 40), 1), ((64, 2000), 1), ((5,), 0)], ids=str)
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_one_index_tensor_matches_torch(threads, shape, dim, dtype):
    x = torch.randn(shape, generator=GEN)
    D = shape[dim]
    idx = torch.cat([torch.arange(D - 1, max(D - 4, -1), -1), torch.arange(D), torch.tensor([D - 2, -1, -D])]).to(dtype)
    indices = [None] * dim + [idx]
    out, want = index(x, indices)
    assert torch.equal(out, want)


def test_other_forms_give_the_portable_results():
    x = torch.randn(6, 7, 8, generator=GEN)
    i, j = torch.tensor([0, 5, 2]), torch.tensor([1, 1, 6])
    for indices in ([i, j], [None, torch.tensor([[0, 1], [2, 3]])], [None, None, j]):
        out, want = index(x, indices)
        portable, _ = index(x, indices, library="portable")
        assert torch.equal(out, want) and torch.equal(out, portable)
    ints = torch.arange(60, dtype=torch.int16).view(6, 10)
    out, want = index(ints, [None, j])
    assert torch.equal(out, want)


def test_an_index_out_of_range_gets_the_portable_error():
    x = torch.randn(4, 5, generator=GEN)
    with pytest.raises(RuntimeError, match="index"):
        run_kernel("aten::index.Tensor_out", [x, [None, torch.tensor([0, 5])], torch.empty(4, 2)],
                   library="optimized")
