"""`pteron debug`: a program's intermediates against its .pt2 on the reference kernels.

The C++ test (numerics_debug_tests) perturbs a kernel and checks the first node beyond
tolerance is the one it computes, with its source line; here the CLI's contract: a program
that matches reports every comparison within tolerance (max |err| <= 1e-5 + 1e-4 * max|ref|),
and bad input is one error line.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "cli"))
import pt2_models  # noqa: E402
from test_bad_input import assert_one_line_error, pteron_cli, run_cli  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("PTERON_BUILD_DIR", REPO / "build"))
DEBUG_TESTS = BUILD / "tests" / "compiler" / "numerics_debug_tests"


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pt2")
    pt2_models.write_fixtures(folder)
    return folder


def test_perturbed_kernel_is_found(fixtures):
    run = subprocess.run([str(DEBUG_TESTS)], capture_output=True, text=True,
                         env={**os.environ, "PTERON_PT2_FIXTURES": str(fixtures)})
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


@pytest.mark.parametrize("backends", ["portable", "optimized,portable"])
@pytest.mark.parametrize("model", ["mlp", "convnet", "transformer"])
def test_debug_cli_matches_a_correct_program(fixtures, model, backends, tmp_path):
    # With the optimized library, fused ops (linear + relu, conv + relu, attention) must be
    # compared with the value they now compute, not with their first node's.
    pte = tmp_path / f"{model}.pte"
    subprocess.run([pteron_cli(), "compile", fixtures / f"{model}.pt2", "-o", pte, "--backends",
                    backends], check=True, capture_output=True)
    out = subprocess.run([pteron_cli(), "debug", pte, "--pt2", fixtures / f"{model}.pt2", "--json"],
                         capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    assert report["compared"] >= 2
    assert report["first_beyond"] is None
    assert all(c["within"] for c in report["checks"])


def test_debug_cli_errors(fixtures, tmp_path):
    pte = tmp_path / "mlp.pte"
    subprocess.run([pteron_cli(), "compile", fixtures / "mlp.pt2", "-o", pte, "--strip-debug-info"],
                   check=True, capture_output=True)
    status, err = run_cli("debug", pte, "--pt2", fixtures / "mlp.pt2")
    assert_one_line_error(status, err, "graph info")
