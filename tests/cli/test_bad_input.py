"""`pteron` on damaged or wrong input: it never crashes, hangs or exits with another code; a
failure is exit status 1 with exactly one line on stderr, "pteron: error: ...", naming what is
wrong (the file, the input, the archive entry, the graph node or operator).

Programs: truncated ExecuTorch fixtures (several cut points, with and without a constant
segment), random bytes, a wrong file identifier, and every byte of add.pte flipped (XOR 0xFF),
each through `pteron run` and `pteron inspect`. A flipped byte may leave a valid program (padding,
a value the program does not depend on), so there exit 0 is fine too.
Inputs: .npz files with a wrong shape, rank or dtype, or a missing array; and arrays numpy
stored in Fortran order (a transposed array), which are input, not refused.
Models: .pt2 archives with a missing entry, bad JSON, truncated weights, not a zip at all, and
graphs using operators pteron has no kernel for (FFT, QR decomposition).

PTERON_SHOW_ERRORS=1 pytest -s prints every error line checked, to review the wording.
"""

import json
import os
import random
import subprocess
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import torch
from pteron_cli import pteron_cli

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "executorch"
ADD = FIXTURES / "add.pte"
ADD_INPUTS = FIXTURES / "add.npz"
TIMEOUT_S = 20


def run_cli(*args) -> tuple[int, str]:
    """(exit status, stderr); a hang counts as exit status 'timeout'."""
    try:
        proc = subprocess.run([pteron_cli(), *map(str, args)], capture_output=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    return proc.returncode, proc.stderr.decode("utf-8", "replace")


def contract_violation(status, stderr: str, must_fail: bool) -> str | None:
    """What is wrong with how the command ended, or None when it kept the contract."""
    if status == 0 and not must_fail:
        return None
    if status != 1:
        return f"exit status {status} (signal {-status})" if isinstance(status, int) and \
            status < 0 else f"exit status {status}"
    lines = stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("pteron: error:"):
        return f"stderr is not one 'pteron: error:' line: {stderr!r}"
    return None


def assert_one_line_error(status, stderr: str, *expected: str) -> str:
    if os.environ.get("PTERON_SHOW_ERRORS"):
        print(stderr.strip())
    problem = contract_violation(status, stderr, must_fail=True)
    assert problem is None, problem
    for text in expected:
        assert text in stderr, f"{text!r} not in {stderr.strip()!r}"
    return stderr.strip()


# ---- Damaged programs -----------------------------------------------------------------------

PROGRAM_COMMANDS = {
    "inspect": lambda pte: ["inspect", pte],
    "inspect-json": lambda pte: ["inspect", "--json", pte],
    "run": lambda pte: ["run", pte, "--inputs", ADD_INPUTS],
    "run-random": lambda pte: ["run", pte, "--random-inputs"],
    "generate": lambda pte: ["generate", pte, "--prompt-ids", "1,2"],
}


def cut_points(size: int) -> list[int]:
    """Inside the header, the flatbuffer, the padding before the segment and the segment."""
    cuts = {0, 1, 7, 8, 16, 31, 40, 64, size // 4, size // 2, size - 129, size - 17, size - 1}
    return sorted(c for c in cuts if 0 <= c < size)


@pytest.mark.parametrize("fixture", ["add", "conv_bn_relu", "scalar_args"])
def test_truncated_program_is_an_error(fixture, tmp_path):
    data = (FIXTURES / f"{fixture}.pte").read_bytes()
    for cut in cut_points(len(data)):
        pte = tmp_path / f"{fixture}_{cut}.pte"
        pte.write_bytes(data[:cut])
        for command in ("inspect", "run-random"):
            status, stderr = run_cli(*PROGRAM_COMMANDS[command](pte))
            problem = contract_violation(status, stderr, must_fail=True)
            assert problem is None, f"{fixture} cut at {cut}, {command}: {problem}"
            assert pte.name in stderr, stderr


@pytest.mark.parametrize("seed", range(4))
def test_random_bytes_are_an_error(seed, tmp_path):
    rng = random.Random(seed)
    data = bytearray(rng.randbytes(rng.choice([5, 64, 1000, 5000])))
    if seed % 2:
        data[4:8] = b"ET12"  # gets past the identifier check into flatbuffer verification
    pte = tmp_path / "random.pte"
    pte.write_bytes(bytes(data))
    for command in PROGRAM_COMMANDS.values():
        assert_one_line_error(*run_cli(*command(pte)), "random.pte")


def test_wrong_identifier_names_it(tmp_path):
    data = bytearray(ADD.read_bytes())
    data[4:8] = b"XX99"
    pte = tmp_path / "wrong_id.pte"
    pte.write_bytes(bytes(data))
    for command in PROGRAM_COMMANDS.values():
        assert_one_line_error(*run_cli(*command(pte)), "wrong_id.pte", "XX99",
                              "ET12")


def test_missing_program_file_is_an_error(tmp_path):
    assert_one_line_error(*run_cli("inspect", tmp_path / "absent.pte"), "absent.pte")
    assert_one_line_error(*run_cli("run", tmp_path / "absent.pte", "--random-inputs"),
                          "absent.pte")


def test_every_flipped_byte_of_add_keeps_the_contract(tmp_path):
    """2 x 1080 runs, a few ms each, in parallel: ends in seconds."""
    data = ADD.read_bytes()
    jobs = []
    for offset in range(len(data)):
        damaged = bytearray(data)
        damaged[offset] ^= 0xFF
        pte = tmp_path / f"flip_{offset}.pte"
        pte.write_bytes(bytes(damaged))
        jobs += [(offset, PROGRAM_COMMANDS[c](pte)) for c in ("inspect", "run")]

    def check(job):
        offset, args = job
        problem = contract_violation(*run_cli(*args), must_fail=False)
        return None if problem is None else f"byte {offset} flipped, {args[0]}: {problem}"

    with ThreadPoolExecutor(max_workers=2 * (os.cpu_count() or 2)) as pool:
        problems = [p for p in pool.map(check, jobs) if p]
    assert not problems, f"{len(problems)} violations, e.g.\n" + "\n".join(problems[:10])


def test_a_flipped_byte_declaring_a_huge_arena_costs_no_time(tmp_path):
    """Byte 187 of add.pte flipped declares a 4 GiB planned arena, under the host runner's 16 GiB
    cap: the arena's zeros are the OS's untouched pages, so running it costs what the method
    touches, not 4 GiB of writes (it was about 3 s of system time). CPU time of the child, which
    load does not inflate; a refusal would keep the contract too."""
    import resource

    damaged = bytearray(ADD.read_bytes())
    damaged[187] ^= 0xFF
    pte = tmp_path / "flip_187.pte"
    pte.write_bytes(bytes(damaged))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    status, stderr = run_cli("run", pte, "--inputs", ADD_INPUTS)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert contract_violation(status, stderr, must_fail=False) is None, (status, stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 0.5, f"{cpu:.2f} s of CPU time"


# ---- Wrong inputs ---------------------------------------------------------------------------

def write_inputs(path: Path, **arrays) -> Path:
    np.savez(path, **arrays)
    return path


def test_input_with_wrong_shape_names_the_input(tmp_path):
    x = np.ones((2, 3, 4), np.float32)
    npz = write_inputs(tmp_path / "shape.npz", input_0=x, input_1=np.ones((2, 3, 5), np.float32))
    line = assert_one_line_error(*run_cli("run", ADD, "--inputs", npz), "shape.npz", "input 1")
    assert "5" in line and "4" in line, line
    npz = write_inputs(tmp_path / "rank.npz", input_0=np.ones((24,), np.float32), input_1=x)
    assert_one_line_error(*run_cli("run", ADD, "--inputs", npz), "rank.npz", "input 0", "rank")


def test_input_with_wrong_dtype_names_the_input(tmp_path):
    x = np.ones((2, 3, 4), np.float32)
    npz = write_inputs(tmp_path / "dtype.npz", input_0=x, input_1=x.astype(np.float64))
    assert_one_line_error(*run_cli("run", ADD, "--inputs", npz), "dtype.npz", "input 1",
                          "float64", "float32")
    # scalar_args' second input is int64: int32 indices are not silently widened.
    npz = write_inputs(tmp_path / "int.npz", input_0=x, input_1=np.ones((2, 3), np.int32))
    assert_one_line_error(*run_cli("run", FIXTURES / "scalar_args.pte", "--inputs", npz),
                          "int.npz", "input 1", "int32", "int64")


def test_missing_input_array_names_it(tmp_path):
    npz = write_inputs(tmp_path / "missing.npz", input_0=np.ones((2, 3, 4), np.float32))
    assert_one_line_error(*run_cli("run", ADD, "--inputs", npz), "missing.npz", "input_1")


def test_inputs_file_that_is_not_npz(tmp_path):
    npz = tmp_path / "text.npz"
    npz.write_text("not an archive")
    assert_one_line_error(*run_cli("run", ADD, "--inputs", npz), "text.npz", "Not a zip archive")


def test_fortran_ordered_inputs_run_as_their_values(tmp_path):
    # np.savez stores an F-contiguous array (x.T, np.asfortranarray) with fortran_order True; the
    # CLI takes its values, stored and compressed archives alike (exact: add of the same floats).
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((2, 3, 4)).astype(np.float32) for _ in range(2))
    for save in (np.savez, np.savez_compressed):
        npz = tmp_path / f"fortran_{save.__name__}.npz"
        save(npz, input_0=np.asfortranarray(x), input_1=np.asfortranarray(y))
        out = tmp_path / f"out_{save.__name__}.npz"
        status, stderr = run_cli("run", ADD, "--inputs", npz, "--outputs", out)
        assert status == 0, stderr
        np.testing.assert_array_equal(np.load(out)["output_0"], x + y)


def test_program_without_inputs_option_says_how_to_give_them():
    assert_one_line_error(*run_cli("run", ADD), "--inputs", "--random-inputs")


# ---- Malformed models -----------------------------------------------------------------------

class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Spectrum(torch.nn.Module):
    def forward(self, x):
        # aten::_fft_r2c in float64: pteron's FFT kernels take float32 / complex64 only
        return torch.fft.rfft(x.double()).abs()


class Reflectors(torch.nn.Module):
    def forward(self, x):
        return torch.geqrf(x)[0]  # aten::geqrf: no decomposition, no kernel


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pt2")
    for name, model, inputs in [("mlp", Mlp(), (torch.randn(2, 4),)),
                                ("spectrum", Spectrum(), (torch.randn(2, 8),)),
                                ("reflectors", Reflectors(), (torch.randn(3, 3),))]:
        ep = torch.export.export(model.eval(), inputs, strict=False).run_decompositions()
        torch.export.save(ep, folder / f"{name}.pt2")
    return folder


def rewrite(src: Path, dst: Path, drop: str = "", edit: tuple = ()) -> Path:
    """Copies archive src to dst without the entry ending in `drop`, and with
    edit = (entry suffix, bytes -> bytes) applied."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            if drop and info.filename.endswith(drop):
                continue
            data = zin.read(info.filename)
            if edit and info.filename.endswith(edit[0]):
                data = edit[1](data)
            zout.writestr(info.filename, data)
    return dst


def compile_fails(model: Path, tmp_path: Path, *expected: str) -> str:
    out = tmp_path / "out.pte"
    line = assert_one_line_error(*run_cli("compile", model, "-o", out), *expected)
    assert not out.exists(), "a failed compile must not leave a program behind"
    return line


def test_models_compile_when_intact(models, tmp_path):
    """The archives the damaged ones derive from are fine, so the errors below are the damage."""
    status, stderr = run_cli("compile", models / "mlp.pt2", "-o", tmp_path / "mlp.pte")
    assert status == 0, stderr
    assert (tmp_path / "mlp.pte").read_bytes()[4:8] == b"ET12"


def test_missing_model_json(models, tmp_path):
    pt2 = rewrite(models / "mlp.pt2", tmp_path / "mlp.pt2", drop="models/model.json")
    compile_fails(pt2, tmp_path, "mlp/models/model.json")


def test_missing_weight(models, tmp_path):
    pt2 = rewrite(models / "mlp.pt2", tmp_path / "mlp.pt2", drop="data/weights/weight_0")
    compile_fails(pt2, tmp_path, "weight_0")


def test_bad_json(models, tmp_path):
    pt2 = rewrite(models / "mlp.pt2", tmp_path / "mlp.pt2",
                  edit=("models/model.json", lambda d: d[: len(d) // 2]))
    compile_fails(pt2, tmp_path, "mlp/models/model.json", "JSON")


def test_json_of_the_wrong_shape(models, tmp_path):
    def drop_nodes(data):
        model = json.loads(data)
        del model["graph_module"]["graph"]["nodes"]
        return json.dumps(model).encode()

    pt2 = rewrite(models / "mlp.pt2", tmp_path / "mlp.pt2", edit=("models/model.json", drop_nodes))
    compile_fails(pt2, tmp_path, "mlp/models/model.json", "nodes")


def test_truncated_weights(models, tmp_path):
    pt2 = rewrite(models / "mlp.pt2", tmp_path / "mlp.pt2",
                  edit=("data/weights/weight_0", lambda d: d[:-8]))
    compile_fails(pt2, tmp_path, "weight_0", "fc.weight")


def test_truncated_archive(models, tmp_path):
    data = (models / "mlp.pt2").read_bytes()
    pt2 = tmp_path / "cut.pt2"
    pt2.write_bytes(data[: len(data) // 2])
    compile_fails(pt2, tmp_path, "cut.pt2")


def test_not_a_zip(tmp_path):
    pt2 = tmp_path / "text.pt2"
    pt2.write_text("this is not an exported program")
    compile_fails(pt2, tmp_path, "text.pt2", "zip")


def test_missing_model_file(tmp_path):
    compile_fails(tmp_path / "absent.pt2", tmp_path, "absent.pt2")


def test_operator_without_kernel_names_node_and_op(models, tmp_path):
    compile_fails(models / "spectrum.pt2", tmp_path, "_fft_r2c", "node '_fft_r2c'")


def test_operator_outside_the_table_names_node_and_op(models, tmp_path):
    compile_fails(models / "reflectors.pt2", tmp_path, "geqrf", "node 'geqrf'")
