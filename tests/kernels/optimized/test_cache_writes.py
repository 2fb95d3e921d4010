"""The optimized library's index_put and index_copy, the KV-cache writes (transformers' static
cache: cache[:, :, pos] = states, or cache.index_copy_(2, pos, states)): indexed rows memcpy'd,
nothing moved when out is self's memory (the state buffer, as the planner places a cache
update). Checked exactly against torch and against the portable kernels, out apart and out
in place, every dtype, index at each dim, negative and int32 indices (index_put), repeated
indices (the last write wins, as in portable), 1 and 2 threads on shapes that split over
threads. Everything else (accumulate, broadcast values, masks, several index tensors, other dim
orders) and every error goes to the portable kernel: same results, same messages, out left
untouched. Tolerance: none (elements move).
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import ALL_DTYPES, rand, random_order, with_dim_order

OPT = dict(library="optimized")


def gen(seed):
    return torch.Generator().manual_seed(seed)


def both_libraries(name, self, args, expected):
    """The optimized kernel with out apart and with out = self, and the portable kernel: all
    equal to `expected` exactly."""
    for library in ("optimized", "portable"):
        out = torch.full_like(expected, 0)
        run_kernel(name, [self, *args, out], library=library)
        assert torch.equal(out, expected), f"{name} {library}: out apart"
        in_place = self.clone()
        run_kernel(name, [in_place, *args, in_place], library=library)
        assert torch.equal(in_place, expected), f"{name} {library}: in place"


@pytest.mark.parametrize("dim", [0, 1, 2, 3])
def test_index_put_rows(dim):
    g = gen(dim)
    for dtype in ALL_DTYPES:
        cache = rand((2, 3, 16, 8), dtype, g)
        for pos in (torch.tensor([5]), torch.tensor([0, -1, 1]), torch.tensor([2, 1], dtype=torch.int32),
                    torch.tensor([1, 1])):  # repeated: the last row written wins
            pos = pos % cache.shape[dim] if dim != 2 else pos
            shape = list(cache.shape)
            shape[dim] = len(pos)
            values = rand(shape, dtype, g)
            indices = [None] * dim + [pos]
            expected = cache.clone()
            for i, p in enumerate(pos.tolist()):  # sequential writes: defined for repeats
                expected.index_copy_(dim, torch.tensor([p % cache.shape[dim]]), values.narrow(dim, i, 1))
            if len(set((pos % cache.shape[dim]).tolist())) == len(pos):
                assert torch.equal(expected, torch.ops.aten.index_put(cache, indices, values))
            both_libraries("aten::index_put.out", cache, [indices, values, False], expected)


@pytest.mark.parametrize("dim", [0, 2, -1])
def test_index_copy_rows(dim):
    g = gen(10 + dim)
    for dtype in ALL_DTYPES:
        cache = rand((2, 3, 16, 8), dtype, g)
        n = cache.shape[dim]
        for pos in (torch.tensor([5 % n]), torch.tensor([0, n - 1, 1]), torch.tensor(3 % n)):
            shape = list(cache.shape)
            shape[dim] = pos.numel()
            source = rand(shape, dtype, g)
            expected = torch.index_copy(cache, dim, pos, source)
            both_libraries("aten::index_copy.out", cache, [dim, pos, source], expected)


def test_large_writes_split_over_threads(threads):
    # [8, 16, 256, 128] float32 cache, 64 positions written: 1M elements, several slices/thread.
    g = gen(20)
    cache = torch.randn(8, 16, 256, 128, generator=g)
    pos = torch.randperm(256, generator=g)[:64]
    values = torch.randn(8, 16, 64, 128, generator=g)
    expected = torch.ops.aten.index_put(cache, [None, None, pos], values)
    both_libraries("aten::index_put.out", cache, [[None, None, pos], values, False], expected)
    both_libraries("aten::index_copy.out", cache, [2, pos, values], torch.index_copy(cache, 2, pos, values))


def test_other_forms_go_to_portable():
    g = gen(30)
    x = rand((5, 4, 3), torch.float32, g)
    rows = torch.tensor([4, -5, 2])
    cases = [
        ([rows], rand((3, 4, 3), torch.float32, g), True),           # accumulate
        ([rows], rand((3,), torch.float32, g), False),               # broadcast values
        ([rand((5, 4, 3), torch.bool, g)], torch.tensor(7.0), False),  # bool mask
        ([rows, None, torch.zeros(3, dtype=torch.int64)], rand((3, 4), torch.float32, g), False),
        ([torch.tensor([[0], [2]])], rand((2, 1, 4, 3), torch.float32, g), False),  # 2-d index
    ]
    for indices, values, accumulate in cases:
        expected = torch.ops.aten.index_put(x, indices, values, accumulate)
        both_libraries("aten::index_put.out", x, [indices, values, accumulate], expected)
    # Other dim orders: the portable kernel's strided walk.
    xl = with_dim_order(x, random_order(3, g))
    values = with_dim_order(rand((5, 2, 3), torch.float32, g), [2, 0, 1])
    idx = torch.tensor([3, 0])
    expected = torch.ops.aten.index_put(x, [None, idx], values)
    both_libraries("aten::index_put.out", xl, [[None, idx], values, False], expected)
    src = with_dim_order(rand((5, 4, 2), torch.float32, g), [1, 2, 0])
    expected = torch.index_copy(x, 2, torch.tensor([2, 0]), src)
    both_libraries("aten::index_copy.out", xl, [2, torch.tensor([2, 0]), src], expected)


@pytest.mark.parametrize("name,args,message", [
    ("aten::index_put.out", [[None, torch.tensor([0, 4])], torch.ones(4, 2, 2), False],
     "aten::index_put.out: index 4 is out of bounds"),
    ("aten::index_put.out", [[None, torch.tensor([-5])], torch.ones(4, 1, 2), False],
     "aten::index_put.out: index -5 is out of bounds"),
    ("aten::index_put.out", [[None, torch.tensor([0])], torch.ones(4, 1, 2, dtype=torch.float64), False],
     "aten::index_put.out: values has dtype float64"),
    ("aten::index_copy.out", [1, torch.tensor([4]), torch.ones(4, 1, 2)],
     "aten::index_copy.out: index 4 is out of bounds"),
    ("aten::index_copy.out", [1, torch.tensor([-1]), torch.ones(4, 1, 2)],
     "aten::index_copy.out: index -1 is out of bounds"),
    ("aten::index_copy.out", [1, torch.tensor([1], dtype=torch.int32), torch.ones(4, 1, 2)],
     "aten::index_copy.out: index must be int64"),
])
def test_errors_are_the_portable_kernels_and_leave_out_untouched(name, args, message):
    x = torch.zeros(4, 4, 2)
    for library in ("optimized", "portable"):
        out = torch.full((4, 4, 2), 3.0)
        with pytest.raises(RuntimeError, match=message):
            run_kernel(name, [x, *args, out], library=library)
        assert torch.equal(out, torch.full((4, 4, 2), 3.0)), library
