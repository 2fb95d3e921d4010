"""Shape and layout copy kernels against torch: every real dtype and bool, random shapes,
negative dims, 0-size and 0-d tensors, non-default dim orders on both sides.

Tolerance: none. Copies move bits, so results must equal torch's exactly.
"""

import pytest
import torch
from kernel_harness import run_kernel
from layout_helpers import (
    ALL_DTYPES,
    assert_equal,
    empty_with_dim_order,
    rand,
    random_order,
    with_dim_order,
)

aten = torch.ops.aten


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def run_into(name, args, expected, out_order=None):
    """Runs `name` with a fresh out (dim order `out_order`) appended and compares with expected."""
    order = out_order if out_order is not None else list(range(expected.dim()))
    out = empty_with_dim_order(expected.shape, expected.dtype, order)
    run_kernel(name, [*args, out])
    assert_equal(out, expected, f"{name} out_order={order}")


def random_layout_cases(shapes, seed):
    """(source, out dim order) pairs over `shapes`, every dtype, random dim orders."""
    g = gen(seed)
    for i, shape in enumerate(shapes):
        for dtype in ALL_DTYPES if i == 0 else ALL_DTYPES[i % 3 :: 3]:
            x = with_dim_order(rand(shape, dtype, g), random_order(len(shape), g))
            yield x, random_order(len(shape), g)


SHAPES = [(3, 4, 5), (2, 3, 4, 5), (7,), (), (0, 3), (1, 1, 6), (2, 1, 3, 1, 2)]


@pytest.mark.parametrize(
    "name", ["aten::clone.out", "aten::alias_copy.out", "aten::detach_copy.out"]
)
def test_same_shape_copies(name):
    for x, order in random_layout_cases(SHAPES, 1):
        args = [x, None] if name == "aten::clone.out" else [x]
        run_into(name, args, x.clone(), order)


def test_clone_channels_last_both_ways():
    g = gen(2)
    x = rand((2, 8, 5, 7), torch.float32, g)
    cl = x.to(memory_format=torch.channels_last)
    out = torch.empty_like(x, memory_format=torch.channels_last)
    run_kernel("aten::clone.out", [x, None, out])
    assert out.is_contiguous(memory_format=torch.channels_last) and torch.equal(out, x)
    out = torch.empty_like(x)
    run_kernel("aten::clone.out", [cl, None, out])
    assert torch.equal(out, x)


@pytest.mark.parametrize(
    "shape,size",
    [
        ((2, 3, 4), [6, 4]),
        ((2, 3, 4), [-1, 2]),
        ((24,), [2, -1, 3]),
        ((), [1]),
        ((1,), []),
        ((0, 3), [3, 0]),
        ((4, 1, 6), [4, 6]),
        ((2, 3, 4, 5), [2, 60]),
    ],
)
def test_view_copy(shape, size):
    for x, order in random_layout_cases([shape], 3):
        expected = aten.view_copy.default(x, size)
        run_into("aten::view_copy.out", [x, size], expected, random_order(expected.dim(), gen(4)))


def test_view_copy_bad_sizes():
    x = torch.zeros(2, 3)
    with pytest.raises(RuntimeError, match="aten::view_copy.out.*-1"):
        run_kernel("aten::view_copy.out", [x, [-1, -1], torch.empty(2, 3)])
    with pytest.raises(RuntimeError, match="aten::view_copy.out"):
        run_kernel("aten::view_copy.out", [x, [4, 2], torch.empty(4, 2)])
    with pytest.raises(RuntimeError, match="aten::view_copy.out"):
        run_kernel("aten::view_copy.out", [torch.zeros(0, 3), [0, -1], torch.empty(0, 3)])


@pytest.mark.parametrize(
    "shape", [(3, 4), (2, 3, 4, 5), (5,), (), (0, 2, 3), (64, 70), (4, 33, 40, 3)]
)
def test_permute_copy(shape):
    g = gen(5)
    for x, order in random_layout_cases([shape], 6):
        dims = random_order(len(shape), g)
        dims = [d - len(shape) if i % 2 else d for i, d in enumerate(dims)]  # mix negative dims
        run_into("aten::permute_copy.out", [x, dims], aten.permute_copy.default(x, dims), order)


def test_permute_copy_rejects_repeated_dim():
    with pytest.raises(RuntimeError, match="aten::permute_copy.out.*repeated"):
        run_kernel("aten::permute_copy.out", [torch.zeros(2, 3), [0, -2], torch.empty(2, 3)])


@pytest.mark.parametrize(
    "shape,size",
    [
        ((3, 1), [3, 4]),
        ((1,), [2, 3, 5]),
        ((), [4, 2]),
        ((2, 1, 3), [-1, 5, -1]),
        ((2, 3), [0, 2, 3]),
        ((1, 4), [3, -1]),
    ],
)
def test_expand_copy(shape, size):
    for x, order in random_layout_cases([shape], 7):
        expected = aten.expand_copy.default(x, size)
        run_into(
            "aten::expand_copy.out",
            [x, size, False],
            expected,
            random_order(expected.dim(), gen(8)),
        )


def test_expand_copy_bad_size():
    with pytest.raises(RuntimeError, match="aten::expand_copy.out.*cannot expand"):
        run_kernel("aten::expand_copy.out", [torch.zeros(2, 3), [2, 4], False, torch.empty(2, 4)])
    with pytest.raises(RuntimeError, match="aten::expand_copy.out"):
        run_kernel("aten::expand_copy.out", [torch.zeros(3), [-1, 3], False, torch.empty(1, 3)])


def test_unsqueeze_and_squeeze():
    for x, _ in random_layout_cases([(3, 1, 4), (1,), (), (2, 1, 1, 3)], 9):
        r = x.dim()
        for d in range(-r - 1, r + 1):
            e = aten.unsqueeze_copy.default(x, d)
            run_into("aten::unsqueeze_copy.out", [x, d], e, random_order(e.dim(), gen(d + 20)))
        run_into("aten::squeeze_copy.out", [x], aten.squeeze_copy.default(x))
        for d in range(-max(r, 1), max(r, 1)):
            run_into("aten::squeeze_copy.dim_out", [x, d], aten.squeeze_copy.dim(x, d))
        dims = [0, -1] if r > 1 else [0]
        run_into("aten::squeeze_copy.dims_out", [x, dims], aten.squeeze_copy.dims(x, dims))


def test_squeeze_dims_rejects_repeated_dim():
    with pytest.raises(RuntimeError, match="aten::squeeze_copy.dims_out: dim 1 repeated"):
        run_kernel("aten::squeeze_copy.dims_out", [torch.zeros(2, 1), [1, -1], torch.empty(2)])


def test_unsqueeze_rejects_bad_dim():
    with pytest.raises(RuntimeError, match="aten::unsqueeze_copy.out.*out of range"):
        run_kernel("aten::unsqueeze_copy.out", [torch.zeros(2, 3), 3, torch.empty(2, 3, 1)])


def test_transpose_and_t():
    for x, order in random_layout_cases([(3, 5), (2, 3, 4), (6,), (), (40, 37)], 10):
        r = x.dim()
        for d0, d1 in [(0, -1), (-1, 0), (0, 0)] + ([(1, 2)] if r == 3 else []):
            if r == 0 and (d0, d1) != (0, -1):
                continue
            e = aten.transpose_copy.int(x, d0, d1)
            run_into("aten::transpose_copy.int_out", [x, d0, d1], e, random_order(r, gen(11)))
        if r <= 2:
            run_into("aten::t_copy.out", [x], aten.t_copy.default(x), random_order(r, gen(12)))


def test_t_copy_rejects_3d():
    with pytest.raises(RuntimeError, match="aten::t_copy.out"):
        run_kernel("aten::t_copy.out", [torch.zeros(2, 3, 4), torch.empty(4, 3, 2)])


SLICES = [
    (0, None, None, 1),
    (1, 1, 4, 2),
    (-1, -3, None, 1),
    (0, -100, 100, 3),
    (1, 5, 2, 1),
    (0, None, -1, 2),
    (2, 3, 1000, 1),
    (1, 0, 6, 7),
    (0, 10, 20, 1),
    (-2, -1, -5, 1),
    (0, 0, 9, 2**40),
]


@pytest.mark.parametrize("dim,start,end,step", SLICES)
def test_slice_copy(dim, start, end, step):
    for x, order in random_layout_cases([(5, 6, 4), (4, 0, 3)], 13):
        e = aten.slice_copy.Tensor(x, dim, start, end, step)
        run_into("aten::slice_copy.Tensor_out", [x, dim, start, end, step], e, order)


def test_slice_copy_bad_inputs():
    with pytest.raises(RuntimeError, match="aten::slice_copy.Tensor_out.*step"):
        run_kernel("aten::slice_copy.Tensor_out", [torch.zeros(4), 0, 0, 4, 0, torch.empty(0)])
    with pytest.raises(RuntimeError, match="aten::slice_copy.Tensor_out.*0-d"):
        run_kernel("aten::slice_copy.Tensor_out", [torch.tensor(1.0), 0, 0, 1, 1, torch.empty(())])


def test_select_copy():
    for x, _ in random_layout_cases([(3, 4, 5), (6,), (2, 0, 3)], 14):
        for d in range(-x.dim(), x.dim()):
            n = x.shape[d]
            for i in {0, n - 1, -n, -1} if n else set():
                e = aten.select_copy.int(x, d, i)
                run_into("aten::select_copy.int_out", [x, d, i], e, random_order(e.dim(), gen(15)))


def test_select_copy_rejects_bad_index():
    with pytest.raises(RuntimeError, match="aten::select_copy.int_out: index 3 out of range"):
        run_kernel("aten::select_copy.int_out", [torch.zeros(2, 3), 1, 3, torch.empty(2)])
    with pytest.raises(RuntimeError, match="aten::select_copy.int_out: index -4"):
        run_kernel("aten::select_copy.int_out", [torch.zeros(2, 3), -1, -4, torch.empty(2)])


def run_list_into(name, args, expected_list, g):
    outs = [empty_with_dim_order(e.shape, e.dtype, random_order(e.dim(), g)) for e in expected_list]
    run_kernel(name, [*args, outs])
    for i, (o, e) in enumerate(zip(outs, expected_list)):
        assert_equal(o, e, f"{name} out[{i}]")


def test_split_ops():
    g = gen(16)
    for x, _ in random_layout_cases([(7, 4, 3), (5, 0)], 17):
        for dim in (0, -1):
            n = x.shape[dim]
            sizes = [n // 3, n - n // 3 - 1, 1] if n >= 2 else [n]
            run_list_into(
                "aten::split_with_sizes_copy.out",
                [x, sizes, dim],
                aten.split_with_sizes_copy.default(x, sizes, dim),
                g,
            )
            for split in (1, 2, 3, 10):
                run_list_into(
                    "aten::split_copy.Tensor_out",
                    [x, split, dim],
                    aten.split_copy.Tensor(x, split, dim),
                    g,
                )
            if n:  # the harness cannot pass an empty tensor list (it becomes an int list)
                run_list_into(
                    "aten::unbind_copy.int_out", [x, dim], aten.unbind_copy.int(x, dim), g
                )


def test_split_ops_bad_inputs():
    x = torch.zeros(5, 2)
    with pytest.raises(RuntimeError, match="aten::split_with_sizes_copy.out.*add up"):
        run_kernel("aten::split_with_sizes_copy.out", [x, [2, 2], 0, [torch.empty(2, 2)] * 2])
    with pytest.raises(RuntimeError, match="aten::split_copy.Tensor_out.*outs"):
        run_kernel("aten::split_copy.Tensor_out", [x, 2, 0, [torch.empty(2, 2)] * 2])
    with pytest.raises(RuntimeError, match=r"aten::split_copy.Tensor_out: out\[2\]"):
        run_kernel(
            "aten::split_copy.Tensor_out",
            [x, 2, 0, [torch.empty(2, 2), torch.empty(2, 2), torch.empty(2, 2)]],
        )
    with pytest.raises(RuntimeError, match="aten::unbind_copy.int_out"):
        run_kernel("aten::unbind_copy.int_out", [x, 1, [torch.empty(5)]])


def test_cat():
    g = gen(18)
    for dtype in ALL_DTYPES:
        parts = [rand((2, k, 3), dtype, g) for k in (1, 0, 4, 2)]
        parts = [with_dim_order(p, random_order(3, g)) for p in parts]
        for dim in (1, -2):
            run_into("aten::cat.out", [parts, dim], torch.cat(parts, dim), random_order(3, g))
    a = rand((2, 3, 4, 5), torch.float32, g).to(memory_format=torch.channels_last)
    b = rand((2, 1, 4, 5), torch.float32, g)
    run_into("aten::cat.out", [[a, b], 1], torch.cat([a, b], 1), [0, 2, 3, 1])


def test_cat_skips_legacy_empty_and_converts_dtypes():
    g = gen(19)
    x = rand((2, 3), torch.float32, g)
    run_into("aten::cat.out", [[torch.empty(0), x, torch.empty(0)], 0], torch.cat([x, x[:0]]))
    run_into("aten::cat.out", [[torch.empty(0), torch.empty(0)], 0], torch.empty(0))
    i, f = rand((2, 3), torch.int32, g), rand((1, 3), torch.float64, g)
    run_into("aten::cat.out", [[i, f], 0], torch.cat([i, f], 0))


def test_cat_rejects_mismatched_shapes():
    with pytest.raises(RuntimeError, match="aten::cat.out: tensor 1 has size 4 at dim 1"):
        run_kernel("aten::cat.out", [[torch.zeros(2, 3), torch.zeros(2, 4)], 0, torch.empty(4, 3)])


@pytest.mark.parametrize("shape", [(2, 3), (4,), (), (2, 0, 3), (2, 3, 4, 5)])
def test_stack(shape):
    g = gen(20)
    for dtype in ALL_DTYPES[::2]:
        parts = [
            with_dim_order(rand(shape, dtype, g), random_order(len(shape), g)) for _ in range(3)
        ]
        for dim in range(-len(shape) - 1, len(shape) + 1):
            e = torch.stack(parts, dim)
            run_into("aten::stack.out", [parts, dim], e, random_order(e.dim(), g))


def test_stack_rejects_shape_mismatch():
    with pytest.raises(RuntimeError, match="aten::stack.out: tensor 1 differs"):
        run_kernel("aten::stack.out", [[torch.zeros(2), torch.zeros(3)], 0, torch.empty(2, 2)])


PADS = [[1, 2], [0, 0, 3, 1], [-1, 2], [2, -3, 1, 1], [1, 1, 1, 1, 1, 1], [-2, -2], [0, 5, -1, 0]]


@pytest.mark.parametrize("pad", PADS)
def test_constant_pad_nd(pad):
    g = gen(21)
    for x, order in random_layout_cases([(2, 3, 4, 5), (3, 6, 4)], 22):
        value = True if x.dtype == torch.bool else (2.5 if x.dtype.is_floating_point else 7)
        e = aten.constant_pad_nd.default(x, pad, value)
        run_into("aten::constant_pad_nd.out", [x, pad, value], e, random_order(e.dim(), g))


def test_constant_pad_nd_bad_inputs():
    with pytest.raises(RuntimeError, match="aten::constant_pad_nd.out.*even"):
        run_kernel("aten::constant_pad_nd.out", [torch.zeros(3), [1], 0, torch.empty(4)])
    with pytest.raises(RuntimeError, match="aten::constant_pad_nd.out.*gives size -1"):
        run_kernel("aten::constant_pad_nd.out", [torch.zeros(3), [-2, -2], 0, torch.empty(0)])


@pytest.mark.parametrize(
    "shape,repeats",
    [
        ((2, 3), [2, 3]),
        ((3,), [2, 1, 2]),
        ((), [3]),
        ((), []),
        ((2, 1, 3), [1, 4, 2]),
        ((2, 3), [0, 2]),
        ((4, 5), [2, 2, 3]),
    ],
)
def test_repeat(shape, repeats):
    for x, _ in random_layout_cases([shape], 23):
        e = aten.repeat.default(x, repeats)
        run_into("aten::repeat.out", [x, repeats], e, random_order(e.dim(), gen(24)))


def test_repeat_rejects_too_few_repeats():
    with pytest.raises(RuntimeError, match="aten::repeat.out"):
        run_kernel("aten::repeat.out", [torch.zeros(2, 3), [2], torch.empty(2, 3)])


@pytest.mark.parametrize(
    "shape,r", [((1, 8, 3, 4), 2), ((2, 18, 2, 3), 3), ((4, 5, 6), 1), ((9, 2, 2), 3)]
)
def test_pixel_shuffle_roundtrip(shape, r):
    g = gen(25)
    for dtype in (torch.float32, torch.int64, torch.bool):
        x = rand(shape, dtype, g)
        for order in (list(range(len(shape))), random_order(len(shape), g)):
            xs = with_dim_order(x, order)
            e = torch.pixel_shuffle(x, r)
            run_into("aten::pixel_shuffle.out", [xs, r], e, order)
            run_into("aten::pixel_unshuffle.out", [e, r], torch.pixel_unshuffle(e, r), order)


def test_pixel_shuffle_rejects_bad_channels():
    with pytest.raises(RuntimeError, match="aten::pixel_shuffle.out.*divisible"):
        run_kernel("aten::pixel_shuffle.out", [torch.zeros(1, 6, 2, 2), 2, torch.empty(1, 1, 4, 4)])


def test_copies_reject_dtype_mismatch():
    with pytest.raises(RuntimeError, match="aten::permute_copy.out: out has dtype int32"):
        run_kernel(
            "aten::permute_copy.out",
            [torch.zeros(2, 3), [1, 0], torch.empty(3, 2, dtype=torch.int32)],
        )
