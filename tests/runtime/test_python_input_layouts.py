"""Inputs laid out otherwise than the program's input run as in eager, which takes any strides:
a dim of size 1 may have any stride (the same bytes, passed as they are), and a transposed,
sliced, reversed, broadcast or channels-last value is copied into the program's layout first.
An input the model writes into is written back into the caller's view, as eager changes it.
Arrays numpy hands to no C library as they are (read-only, another byte order, unaligned) run
too; a read-only array the model would write into is refused before anything changes.
Results exact (float32 elementwise arithmetic, the same operations as eager)."""

import numpy as np
import pytest
import torch

import pteron


class Scale(torch.nn.Module):
    def forward(self, x, y):
        return x * 2 + y


class AddInPlace(torch.nn.Module):
    def forward(self, x):
        x.add_(1)
        return x * 3


class Conv(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x):
        return self.conv(x) + x.mean()


def load(model, example):
    ep = pteron.export(model, example)
    return pteron.to_edge_transform_and_lower(ep, progress=False).load()


@pytest.fixture(scope="module")
def program():
    return load(Scale(), (torch.randn(50, 1), torch.randn(50, 3)))


def test_a_size_one_dim_may_have_any_stride(program):
    x, y = torch.randn(1, 50).T, torch.randn(50, 3)
    assert x.stride() == (1, 50)
    assert torch.equal(torch.as_tensor(program.forward(x, y)[0]), Scale()(x, y))
    x = torch.randn(50, 1, 1)[:, :, 0]  # strides (1, 1)
    assert torch.equal(torch.as_tensor(program.forward(x, y)[0]), Scale()(x, y))


@pytest.mark.parametrize(
    "view",
    [
        lambda: torch.randn(3, 50).T,  # transposed
        lambda: torch.randn(50, 6)[:, ::2],  # sliced
        lambda: torch.randn(50, 3).flip(0).contiguous().flip(0),  # dense, as a control
        lambda: torch.randn(1, 3).expand(50, 3),  # broadcast (stride 0)
    ],
)
def test_a_torch_view_in_another_layout_runs_as_in_eager(program, view):
    x, y = torch.randn(50, 1), view()
    before = y.clone()
    assert torch.equal(program.forward(x, y)[0], Scale()(x, y))
    assert torch.equal(y, before)  # read, not written


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a.T,  # transposed
        lambda a: a[::-1],  # negative strides
        lambda a: np.asfortranarray(a),
        lambda a: np.broadcast_to(a[:1], a.shape),  # read-only, stride 0
    ],
)
def test_a_numpy_view_in_another_layout_runs_as_in_eager(view):
    base = np.random.default_rng(0).standard_normal((6, 6)).astype(np.float32)
    x, y = np.ones((6, 1), np.float32), view(base)
    prog = load(Scale(), (torch.ones(6, 1), torch.ones(6, 6)))
    np.testing.assert_array_equal(prog.forward(x, y)[0], x * 2 + y)


def test_a_channels_last_image_runs_on_a_contiguous_program():
    torch.manual_seed(0)
    model = Conv().eval()
    prog = load(model, (torch.randn(2, 3, 8, 8),))
    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    assert not x.is_contiguous()
    torch.testing.assert_close(prog.forward(x)[0], model(x), rtol=1e-5, atol=1e-5)


def test_an_input_written_through_a_transposed_view_changes_the_callers_tensor():
    prog = load(AddInPlace(), (torch.randn(4, 3),))
    base = torch.arange(12.0).view(3, 4)
    expected_base = base.clone()
    expected = AddInPlace()(expected_base.T)
    out = prog.forward(base.T)[0]
    assert torch.equal(out, expected)
    assert torch.equal(base, expected_base)  # the caller's storage holds the new value
    array = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    prog.forward(array.T)
    np.testing.assert_array_equal(array, np.arange(12.0, dtype=np.float32).reshape(3, 4) + 1)


def test_wrong_rank_and_dtype_are_still_refused_in_one_line(program):
    for x, message in [
        (torch.randn(3, 50, 1).permute(1, 0, 2), "input 0: rank 3 given, the program expects rank 2"),
        (torch.randn(1, 50, dtype=torch.float64).T, "input 0: dtype float64 given, the program expects float32"),
    ]:
        with pytest.raises(RuntimeError, match=message) as error:
            program.forward(x, torch.randn(50, 3))
        assert "\n" not in str(error.value)


def readonly(a: np.ndarray) -> np.ndarray:
    a = a.copy()
    a.setflags(write=False)  # as np.asarray(PIL image), np.frombuffer, a read-only np.load mmap
    return a


def unaligned(a: np.ndarray) -> np.ndarray:
    raw = np.zeros(a.nbytes + 1, np.uint8)
    b = raw[1:].view(a.dtype).reshape(a.shape)
    b[...] = a
    assert not b.flags.aligned
    return b


@pytest.mark.parametrize(
    "form", [readonly, unaligned, lambda a: a.astype(a.dtype.newbyteorder(">"))],
    ids=["read-only", "unaligned", "big-endian"])
def test_arrays_no_protocol_hands_over_as_they_are_run_as_their_values(program, form):
    x, y = np.random.default_rng(0).standard_normal((2, 50, 3)).astype(np.float32)
    x = x[:, :1].copy()
    got = program.forward(form(x), form(y))[0]
    np.testing.assert_array_equal(got, x * 2 + y)


def test_an_input_written_into_is_refused_read_only_and_written_big_endian():
    prog = load(AddInPlace(), (torch.randn(4, 3),))
    x = readonly(np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="input 0: the model writes into this input, and the array is read-only"):
        prog.forward(x)
    np.testing.assert_array_equal(x, np.ones((4, 3), np.float32))
    swapped = np.ones((4, 3), np.dtype(">f4"))
    out = prog.forward(swapped)[0]
    np.testing.assert_array_equal(out, np.full((4, 3), 6, np.float32))
    np.testing.assert_array_equal(swapped, np.full((4, 3), 2, np.float32))  # in its own byte order


def test_a_value_that_is_no_array_is_named_in_one_line(program):
    with pytest.raises(TypeError, match="input 0: a NoneType is not a tensor, an array or a number"):
        program.forward(None, np.zeros((50, 3), np.float32))


class TimesScalar(torch.nn.Module):
    def forward(self, x, s):
        return x * s


def test_a_byte_swapped_zero_dim_scalar_stays_zero_dim():
    prog = load(TimesScalar(), (torch.randn(3), torch.tensor(2.0)))
    out = prog.forward(np.arange(3, dtype=">f4"), np.array(2.0, dtype=">f4"))[0]
    np.testing.assert_array_equal(out, np.arange(3, dtype=np.float32) * 2)
