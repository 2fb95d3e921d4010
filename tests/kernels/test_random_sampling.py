"""Random sampling that run_decompositions keeps (portable kernels on util/random.h): the four
torch.normal forms, multinomial with and without replacement, randint. Torch's random streams
are not reproduced, so the tests check what a user relies on: shapes and dtypes, ranges,
broadcasting, exact values where the distribution is a point (std 0, one category with
weight), and the distributions' statistics over many draws (tolerances stated per test, about
5 standard errors); the refusals torch makes; a model sampling with them on the default program
and on portable."""

import pytest
import torch
from kernel_harness import run_kernel

import pteron

N = 20000


def test_normal_forms_have_the_asked_mean_and_std():
    mean, std = torch.full((N,), 3.0), torch.full((N,), 0.5)
    for name, args in [("normal.Tensor_float_out", [mean, 0.5]), ("normal.float_Tensor_out", [3.0, std]),
                       ("normal.Tensor_Tensor_out", [mean, std]), ("normal.float_float_out", [3.0, 0.5, [N]])]:
        out = torch.empty(N)
        run_kernel(f"aten::{name}", [*args, None, out])
        # standard errors: 0.5 / sqrt(N) = 0.0035 for the mean, about 0.0025 for the std
        assert abs(float(out.mean()) - 3.0) < 0.02 and abs(float(out.std()) - 0.5) < 0.015, name


def test_normal_broadcasts_and_a_zero_std_gives_the_mean():
    mean = torch.arange(4.0).reshape(4, 1)
    std = torch.zeros(1, 3)
    out = torch.empty(4, 3)
    run_kernel("aten::normal.Tensor_Tensor_out", [mean, std, None, out])
    assert torch.equal(out, mean.expand(4, 3))
    out64 = torch.empty(4, 1, dtype=torch.float64)
    run_kernel("aten::normal.Tensor_float_out", [mean.double(), 0.0, None, out64])
    assert torch.equal(out64, mean.double())


def test_normal_refuses_a_negative_std():
    with pytest.raises(RuntimeError, match="normal.Tensor_Tensor_out: std must be >= 0, got -1"):
        run_kernel("aten::normal.Tensor_Tensor_out", [torch.zeros(3), torch.tensor([1.0, -1.0, 1.0]), None,
                                                       torch.empty(3)])
    with pytest.raises(RuntimeError, match="std must be >= 0"):
        run_kernel("aten::normal.float_float_out", [0.0, -2.0, [3], None, torch.empty(3)])


def test_multinomial_with_replacement_follows_the_weights():
    weights = torch.tensor([[1.0, 0.0, 3.0, 4.0], [0.0, 0.0, 5.0, 0.0]])  # not normalised
    out = torch.empty(2, N, dtype=torch.int64)
    run_kernel("aten::multinomial.out", [weights, N, True, None, out])
    counts = torch.stack([torch.bincount(row, minlength=4) for row in out]).double() / N
    expected = weights / weights.sum(1, keepdim=True)
    assert torch.allclose(counts, expected.double(), atol=0.02)  # standard errors <= 0.0035
    assert (out[1] == 2).all()  # the one category with weight, exactly


def test_multinomial_without_replacement_draws_each_category_once():
    weights = torch.tensor([0.1, 5.0, 0.0, 2.0, 1.0], dtype=torch.float64)
    out = torch.empty(4, dtype=torch.int64)
    run_kernel("aten::multinomial.out", [weights, 4, False, None, out])
    assert sorted(out.tolist()) == [0, 1, 3, 4]  # every category with weight, none twice, never 2
    firsts = []
    for _ in range(2000):
        run_kernel("aten::multinomial.out", [weights, 1, False, None, out[:1]])
        firsts.append(int(out[0]))
    share = firsts.count(1) / len(firsts)
    assert abs(share - 5.0 / 8.1) < 0.06  # standard error 0.011


@pytest.mark.parametrize("weights,samples,replacement,message", [
    (torch.tensor([1.0, -1.0]), 1, True, "probability tensor contains either inf, nan or element < 0"),
    (torch.tensor([1.0, float("nan")]), 1, True, "inf, nan or element < 0"),
    (torch.zeros(3), 1, True, "row 0 sums to zero"),
    (torch.tensor([1.0, 0.0, 0.0]), 2, False, "row 0 has 1 categories with weight, fewer than 2 samples"),
    (torch.ones(3), 4, False, "cannot sample 4 > 3 categories without replacement"),
    (torch.ones(2, 2, 2), 1, True, "probabilities must be 1-D or 2-D, got rank 3"),
])
def test_multinomial_refuses_what_torch_refuses(weights, samples, replacement, message):
    shape = (samples,) if weights.dim() == 1 else (weights.shape[0], samples)
    with pytest.raises(RuntimeError, match=message):
        run_kernel("aten::multinomial.out", [weights, samples, replacement, None,
                                             torch.empty(shape, dtype=torch.int64)])


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float32])
def test_randint_is_uniform_in_its_range(dtype):
    out = torch.empty(N, dtype=dtype)
    run_kernel("aten::randint.low_out", [-3, 4, [N], out])
    assert out.min() == -3 and out.max() == 3 and torch.equal(out, out.round())
    counts = torch.bincount((out.long() + 3), minlength=7).double() / N
    assert torch.allclose(counts, torch.full((7,), 1 / 7, dtype=torch.float64), atol=0.015)
    run_kernel("aten::randint.out", [2, [N], out])
    assert set(out.long().tolist()) == {0, 1}


def test_randint_refuses_an_empty_or_unrepresentable_range():
    with pytest.raises(RuntimeError, match="expects 'from' to be less than 'to', but got from=5 >= to=5"):
        run_kernel("aten::randint.low_out", [5, 5, [3], torch.empty(3, dtype=torch.int64)])
    with pytest.raises(RuntimeError, match=r"\[0, 300\) does not fit dtype int8"):
        run_kernel("aten::randint.out", [300, [3], torch.empty(3, dtype=torch.int8)])


class Sampler(torch.nn.Module):
    """A VAE's reparameterised latent, a token sampled from logits, random crop offsets."""

    def forward(self, mu, log_sigma, logits):
        z = torch.normal(mu, log_sigma.exp())
        token = torch.multinomial(torch.softmax(logits, -1), 1)
        offsets = torch.randint(0, 8, (2,))
        return z, token, offsets


@pytest.mark.parametrize("kernels", [None, ["portable"]])
def test_sampling_model_compiles_and_samples(kernels):
    mu, log_sigma = torch.full((4, N // 4), 2.0), torch.full((4, N // 4), -1.0)
    logits = torch.tensor([[0.0, -1e9, -1e9], [-1e9, -1e9, 0.0]])
    model = Sampler().eval()
    program = pteron.to_edge_transform_and_lower(pteron.export(model, (mu, log_sigma, logits)), kernels=kernels,
                                                 progress=False).load()
    z, token, offsets = (torch.as_tensor(t) for t in program.forward(mu, log_sigma, logits))
    assert z.shape == mu.shape and abs(float(z.mean()) - 2.0) < 0.02
    assert abs(float(z.std()) - float(torch.exp(torch.tensor(-1.0)))) < 0.015
    assert token.tolist() == [[0], [2]]  # all the weight on one category
    assert offsets.shape == (2,) and offsets.dtype == torch.int64 and ((offsets >= 0) & (offsets < 8)).all()
