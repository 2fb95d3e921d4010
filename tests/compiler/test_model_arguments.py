"""A program compiled from an exported model in this process takes the model's own arguments:
nested lists, tuples and dicts of tensors, keywords, and constants export specialised on (which
are not program inputs), flattened as torch.export flattened them; its flat inputs still work.
A program loaded from bytes does the same from the input spec and constants the file stores."""

import pytest
import torch

import pteron


class Nested(torch.nn.Module):
    def forward(self, pair, named, mode="sum", scale=None):
        a, b = pair
        out = a * named["w"] + b
        out = out.sum(0) if mode == "sum" else out.amax(0)
        return out * scale if scale is not None else out


def _args():
    return ([torch.randn(3, 4), torch.randn(3, 4)], {"w": torch.randn(4)})


@pytest.fixture(scope="module")
def compiled():
    args = _args()
    scale = torch.tensor(2.0)
    return pteron.to_edge_transform_and_lower(pteron.export(Nested(), args, {"mode": "max", "scale": scale}), progress=False)


def test_the_model_arguments_as_the_model_takes_them(compiled):
    loaded = compiled.load()
    for _ in range(2):
        (pair, named), scale = _args(), torch.rand(())
        got = loaded.forward(pair, named, mode="max", scale=scale)[0]
        torch.testing.assert_close(torch.as_tensor(got), Nested()(pair, named, mode="max", scale=scale))
    # The program's own flat inputs (the constant 'max' is none of them).
    (pair, named), scale = _args(), torch.rand(())
    got = loaded.forward(pair[0], pair[1], named["w"], scale)[0]
    torch.testing.assert_close(torch.as_tensor(got), Nested()(pair, named, mode="max", scale=scale))


def test_arguments_of_another_structure_are_refused_in_one_line(compiled):
    loaded = compiled.load()
    pair, named = _args()
    with pytest.raises(TypeError, match=r"it takes \(list\[x, x\], \{'w': x\}\) and keywords") as error:
        loaded.forward(pair, named)  # the keywords export saw are missing
    assert "\n" not in str(error.value)
    with pytest.raises(TypeError, match="do not match"):
        loaded.forward([pair[0]], named, mode="max", scale=torch.ones(()))
    with pytest.raises(TypeError, match="is 'sum'; the program was exported with 'max' and is specialised on it"):
        loaded.forward(pair, named, mode="sum", scale=torch.ones(()))


def test_a_program_loaded_from_bytes_takes_the_model_arguments_too(compiled):
    loaded = pteron.load(compiled.buffer())
    pair, named = _args()
    scale = torch.rand(())
    expected = Nested()(pair, named, mode="max", scale=scale)
    torch.testing.assert_close(torch.as_tensor(loaded.forward(pair, named, mode="max", scale=scale)[0]), expected)
    got = loaded.forward(pair[0], pair[1], named["w"], scale)[0]
    torch.testing.assert_close(torch.as_tensor(got), expected)
    with pytest.raises(TypeError, match="is 'sum'; the program was exported with 'max' and is specialised on it"):
        loaded.forward(pair, named, mode="sum", scale=scale)
    with pytest.raises(TypeError, match="do not match"):
        loaded.forward(pair, named["w"], scale)
