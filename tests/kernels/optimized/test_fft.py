"""The FFT kernels (optimized library, KISS FFT): _fft_r2c, _fft_c2c (forward and inverse) and
_fft_c2r against torch over one and several dims, every normalization, power-of-two, odd and
prime lengths, strided inputs; torch.fft / stft / istft programs and a spectrogram front end
(stft, magnitude, mel filterbank, log) compiled on the default program; refusals in one line
(complex128, a portable-only program, bad arguments).

Tolerance: float32 FFTs round differently from torch's pocketfft: |diff| <= 2e-5 x max|torch|
+ 1e-4 x |torch| (the error of an n-point float32 FFT grows with log n x machine epsilon).
"""

import pteron
import pytest
import torch
from kernel_harness import run_kernel

A = torch.ops.aten
G = torch.Generator().manual_seed(0)


def close(got, want):
    if want.is_complex():
        got, want = torch.view_as_real(got), torch.view_as_real(want)
    scale = float(want.abs().max()) if want.numel() else 1.0
    torch.testing.assert_close(got, want, atol=2e-5 * max(scale, 1.0), rtol=1e-4)


def crand(*shape):
    return torch.complex(torch.randn(shape, generator=G), torch.randn(shape, generator=G))


CASES = [((16,), [0]), ((3, 7), [1]), ((2, 5, 12), [1, 2]), ((4, 13, 3), [0, 1]), ((2, 3, 4, 6), [3, 1, 2]),
         ((1,), [0]), ((2,), [0]), ((2, 400), [1])]


@pytest.mark.parametrize("shape,dims", CASES)
@pytest.mark.parametrize("norm", [0, 1, 2])
@pytest.mark.parametrize("onesided", [True, False])
def test_r2c_is_torchs(shape, dims, norm, onesided):
    x = torch.randn(shape, generator=G)
    want = A._fft_r2c(x, dims, norm, onesided)
    got = torch.empty_like(want)
    run_kernel("aten::_fft_r2c.out", [x, dims, norm, onesided, got], library="optimized")
    close(got, want)


@pytest.mark.parametrize("shape,dims", CASES)
@pytest.mark.parametrize("norm", [0, 1, 2])
@pytest.mark.parametrize("forward", [True, False])
def test_c2c_is_torchs(shape, dims, norm, forward):
    x = crand(*shape)
    want = A._fft_c2c(x, dims, norm, forward)
    got = torch.empty_like(want)
    run_kernel("aten::_fft_c2c.out", [x, dims, norm, forward, got], library="optimized")
    close(got, want)


@pytest.mark.parametrize("shape,dims", CASES[:-3])
@pytest.mark.parametrize("norm", [0, 1, 2])
@pytest.mark.parametrize("odd", [False, True])
def test_c2r_is_torchs(shape, dims, norm, odd):
    """The inverse of a real signal's onesided spectrum (irfftn), even and odd output lengths."""
    n = shape[dims[-1]] + (1 if odd else 0)
    real_shape = list(shape)
    real_shape[dims[-1]] = n
    spectrum = A._fft_r2c(torch.randn(real_shape, generator=G), dims, 0, True)
    want = A._fft_c2r(spectrum, dims, norm, n)
    got = torch.empty_like(want)
    run_kernel("aten::_fft_c2r.out", [spectrum, dims, norm, n, got], library="optimized")
    close(got, want)


@pytest.mark.parametrize("n", [2, 3, 8, 9, 400])
@pytest.mark.parametrize("dims", [[1], [0, 1]])
def test_c2r_of_any_spectrum_is_torchs(n, dims):
    """Bins no real signal has (imaginary DC and Nyquist parts, which torch drops; over two dims,
    lines that are not each other's conjugates), through the real (even n) and complex (odd n)
    paths."""
    spectrum = crand(3, n // 2 + 1)
    want = A._fft_c2r(spectrum, dims, 2, n)
    got = torch.empty_like(want)
    run_kernel("aten::_fft_c2r.out", [spectrum, dims, 2, n, got], library="optimized")
    close(got, want)


def test_strided_input():
    x = torch.randn(12, 10, generator=G).t()  # a transposed view: column-major
    want = A._fft_r2c(x, [1], 0, True)
    got = torch.empty_like(want)
    run_kernel("aten::_fft_r2c.out", [x, [1], 0, True, got], library="optimized")
    close(got, want)


@pytest.mark.parametrize("op,args,message", [
    ("aten::_fft_r2c.out", lambda: [torch.randn(8), [0], 3, True, torch.empty(5, dtype=torch.complex64)],
     "normalization 3 not in 0"),
    ("aten::_fft_r2c.out", lambda: [torch.randn(8, dtype=torch.float64), [0], 0, True,
                                    torch.empty(5, dtype=torch.complex128)], "dtypes float64 -> complex128"),
    ("aten::_fft_c2c.out", lambda: [crand(4, 4), [1, 1], 0, True, torch.empty(4, 4, dtype=torch.complex64)],
     "dim 1 repeated"),
    ("aten::_fft_c2r.out", lambda: [crand(3), [0], 0, 8, torch.empty(8)], "last_dim_size 8 needs at least 5 bins"),
])
def test_bad_arguments_are_one_line(op, args, message):
    with pytest.raises(RuntimeError, match=message):
        run_kernel(op, args(), library="optimized")


class Spectrogram(torch.nn.Module):
    """An audio front end as speech models write it: Hann-windowed stft, power, mel filterbank,
    log; plus rfft/irfft and fft2 round trips."""

    def __init__(self, n_fft=64, hop=16, mels=10):
        super().__init__()
        self.n_fft, self.hop = n_fft, hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("mel", torch.rand(mels, n_fft // 2 + 1, generator=torch.Generator().manual_seed(1)))

    def forward(self, audio, image):
        spec = torch.stft(audio, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.abs() ** 2
        logmel = torch.log(self.mel @ power + 1e-6)
        smooth = torch.fft.irfft(torch.fft.rfft(audio) * 0.5, n=audio.shape[-1])
        band = torch.fft.ifft2(torch.fft.fft2(image)).real
        back = torch.istft(spec, self.n_fft, self.hop, window=self.window, length=audio.shape[-1])
        return logmel, smooth, band, back


def test_spectrogram_program_matches_torch():
    model, audio, image = Spectrogram().eval(), torch.randn(2, 400, generator=G), torch.randn(3, 8, 10, generator=G)
    with torch.no_grad():
        want = model(audio, image)
    got = pteron.to_edge_transform_and_lower(pteron.export(model, (audio, image))).load().forward(audio, image)
    for g, w in zip(got, want, strict=True):
        close(torch.as_tensor(g), w)


def test_ffts_are_refused_where_no_kernel_runs_them():
    class Rfft(torch.nn.Module):
        def forward(self, x):
            return torch.fft.rfft(x).abs()

    with pytest.raises(pteron.CompileError, match="aten::_fft_r2c.out"):
        pteron.to_edge_transform_and_lower(pteron.export(Rfft(), (torch.randn(16),)), kernels=["portable"])
    with pytest.raises(pteron.CompileError, match="_fft_r2c.out with complex tensors"):
        pteron.to_edge_transform_and_lower(pteron.export(Rfft(), (torch.randn(16, dtype=torch.float64),)))
