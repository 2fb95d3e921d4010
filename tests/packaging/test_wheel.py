"""`pip install` of the wheel: built once from this checkout (pip wheel, scikit-build-core, into
build-wheel/, incremental and ccache-backed: minutes the first time, seconds afterwards),
installed into a fresh venv outside the checkout, and used from there: the `pteron` CLI on the
venv's PATH and the Python API compile and run a model, matching torch; the zoo imports from the
installed package; nothing installed names the checkout or its build folders."""

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, clean_env

WHEEL_BUILD = REPO / "build-wheel"  # scikit-build-core's build folder, kept between runs
WHEEL_DIST = WHEEL_BUILD / "dist"


def _build_wheel() -> Path:
    for old in WHEEL_DIST.glob("pteron-*.whl"):
        old.unlink()
    env = dict(os.environ, CCACHE_BASEDIR=os.environ.get("CCACHE_BASEDIR", str(REPO.parent)))
    # The compilers named as the checkout's build names them, so ccache shares its objects.
    cmd = [sys.executable, "-m", "pip", "wheel", str(REPO), "--no-build-isolation", "--no-deps",
           "-q", "-w", str(WHEEL_DIST), "-C", f"build-dir={WHEEL_BUILD}",
           "-C", "cmake.define.CMAKE_CXX_COMPILER=c++", "-C", "cmake.define.CMAKE_C_COMPILER=cc"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = WHEEL_DIST.glob("pteron-*.whl")
    return wheel


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    wheel = _build_wheel()
    venv = tmp_path_factory.mktemp("wheel-venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    # torch and numpy from this environment (no download); pteron only from the wheel.
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install",
                    "-q", "--no-deps", "--no-index", str(wheel)], check=True)
    return venv


def _env(venv: Path) -> dict:
    return clean_env(PATH=f"{venv / 'bin'}:{os.environ['PATH']}", VIRTUAL_ENV=str(venv))


def test_cli_from_the_wheel(venv, small_model, tmp_path):
    pt2, folder, expected = small_model
    env = _env(venv)
    cli = venv / "bin" / "pteron"
    assert cli.exists(), "the wheel put no pteron command on the venv's PATH"
    for backends in ("portable", "xnnpack,optimized,portable"):
        pte = tmp_path / f"{backends.split(',')[0]}.pte"
        subprocess.run(["pteron", "compile", pt2, "-o", pte, "--target", "host", "--backends", backends],
                       check=True, env=env, cwd=tmp_path, capture_output=True)
        out = tmp_path / "out.npz"
        subprocess.run(["pteron", "run", pte, "--inputs", folder / "in.npz", "--outputs", out],
                       check=True, env=env, cwd=tmp_path, capture_output=True)
        got = np.load(out)
        np.testing.assert_allclose(got[got.files[0]], expected, rtol=1e-5, atol=1e-6)


API_SCRIPT = """
import sys, numpy as np, torch, pteron
assert pteron.__file__.startswith(sys.prefix), pteron.__file__
torch.manual_seed(3)
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
x = torch.randn(1, 3, 16, 16)
ep = pteron.export(model, (x,))
for name, partitioners in (("api.pte", []), ("api-xnnpack.pte", [pteron.XnnpackPartitioner()])):
    pteron.to_edge_transform_and_lower(ep, partitioners, target="host").save(name)
    (out,) = pteron.load(name, threads=1).forward(x)
    np.testing.assert_allclose(np.asarray(out), model(x).detach().numpy(), rtol=1e-4, atol=1e-5)
from pteron import zoo
assert "resnet-8" in zoo.names() and zoo.__file__.startswith(sys.prefix)
model, inputs = zoo.get("digits-cnn")  # committed weights, read from the installed package
print("ok")
"""


def test_python_api_from_the_wheel(venv, tmp_path):
    r = subprocess.run([venv / "bin" / "python", "-c", API_SCRIPT], env=_env(venv), cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-2000:] + r.stderr[-3000:]


def test_installed_package_names_no_checkout_path(venv):
    site = next((venv / "lib").glob("python3*/site-packages"))
    package = site / "pteron"
    files = [p for p in package.rglob("*") if p.is_file()] + list(site.glob("pteron_native*.so"))
    assert (package / "bin" / "pteron") in files and (package / "share" / "pteron" / "targets" / "host.toml") in files
    offenders = [str(p) for p in files if str(REPO).encode() in p.read_bytes()]
    assert offenders == []


def test_one_version_for_the_wheel_the_cli_and_the_api(venv):
    """pyproject.toml reads the version from CMakeLists.txt's project() line: the wheel's metadata,
    `pteron --version` and pteron.__version__ say the same."""
    env = _env(venv)
    script = "import importlib.metadata, pteron; print(importlib.metadata.version('pteron'), pteron.__version__)"
    api = subprocess.run([venv / "bin" / "python", "-c", script], env=env, capture_output=True, text=True)
    assert api.returncode == 0, api.stderr[-2000:]
    metadata, module = api.stdout.split()
    cli = subprocess.run(["pteron", "--version"], env=env, capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert metadata == module == cli.stdout.strip()


FIRST_USE_SCRIPT = """
import torch, pteron
model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU()).eval()
lowered = pteron.to_edge_transform_and_lower(pteron.export(model, (torch.randn(1, 3, 8, 8),)))
print(lowered.report["calibration"])
"""


def test_the_wheel_measures_the_machine_on_first_use(venv, tmp_path):
    """A user who never ran `pteron tune`: the first default compile from Python has the wheel's
    CLI measure the machine into the cache, and the compile uses it."""
    cache = tmp_path / "cache"
    env = _env(venv)
    env.update(PTERON_CALIBRATION="", PTERON_CACHE_DIR=str(cache))
    r = subprocess.run([venv / "bin" / "python", "-c", FIRST_USE_SCRIPT], env=env, cwd=tmp_path,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "[tune]" in r.stderr
    (written,) = cache.glob("calibration-*.json")
    assert r.stdout.strip().endswith(", measured " + json.loads(written.read_text())["created"])
