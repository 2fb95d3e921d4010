"""The CMake package: examples/cpp_app builds against `cmake --install`'s pteronConfig.cmake
(find_package(pteron), imported targets) and runs a program, matching torch; the bare-metal
runtime installs the same way from the arm-none-eabi build and the example's bare-metal library
builds against it."""

import os
import subprocess

import numpy as np
from conftest import REPO, clean_env

APP = REPO / "examples" / "cpp_app"


def _cmake(*args, cwd=None):
    r = subprocess.run(["cmake", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                       env=clean_env(CCACHE_BASEDIR=os.environ.get("CCACHE_BASEDIR", str(REPO))))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def test_cpp_app_against_installed_package(install_prefix, small_model, tmp_path):
    pt2, folder, expected = small_model
    config = install_prefix / "lib" / "cmake" / "pteron"
    assert (config / "pteronConfig.cmake").exists() and (config / "pteronConfigVersion.cmake").exists()
    targets = (config / "pteronTargets.cmake").read_text()
    for t in ("pteron::runtime", "pteron::runtime_host", "pteron::kernels_portable"):
        assert f"add_library({t} " in targets, t
    _cmake("-S", APP, "-B", tmp_path / "app", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={install_prefix}")
    _cmake("--build", tmp_path / "app")
    pte = tmp_path / "model.pte"
    subprocess.run([install_prefix / "bin" / "pteron", "compile", pt2, "-o", pte], check=True,
                   env=clean_env(), capture_output=True)
    r = subprocess.run([tmp_path / "app" / "cpp_app", pte, folder / "in0.bin"], capture_output=True,
                       text=True, check=True)
    got = np.array(r.stdout.split(), dtype=np.float32).reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # float32, same math as torch


def test_cpp_app_reports_a_bad_program(install_prefix, tmp_path):
    _cmake("-S", APP, "-B", tmp_path / "app", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={install_prefix}")
    _cmake("--build", tmp_path / "app")
    bad = tmp_path / "bad.pte"
    bad.write_bytes(b"\0" * 64)
    r = subprocess.run([tmp_path / "app" / "cpp_app", bad], capture_output=True, text=True)
    assert r.returncode == 1 and r.stderr.startswith(f"cpp_app: {bad}: "), r.stderr


M55_BUILD = REPO / "build-m55"  # the folder `make check-baremetal` uses (built once, then reused)
M55_TARGETS = ["pteron_runtime", "pteron_kernels_portable_selective",
               "pteron_kernels_cortex_m_selective", "pteron_board", "pteron_tosa_runtime",
               "pteron_ethos_u_runtime", "pteron_backend_ethos_u"]


def test_bare_metal_package(tmp_path):
    if not (M55_BUILD / "build.ninja").exists():
        _cmake("-S", REPO, "-B", M55_BUILD, "-G", "Ninja",
               f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'arm-none-eabi.cmake'}")
    ninja = (M55_BUILD / "build.ninja").read_text()
    targets = [t for t in M55_TARGETS if f"{t}:" in ninja or f" {t} " in ninja]
    _cmake("--build", M55_BUILD, "--target", *targets)
    prefix = tmp_path / "m55"
    _cmake("--install", M55_BUILD, "--prefix", prefix)
    assert "pteron_BARE_METAL ON" in (prefix / "lib" / "cmake" / "pteron" / "pteronConfig.cmake").read_text()
    # The board support a firmware image links: the platform's headers and the AN547's linker script.
    assert (prefix / "include" / "firmware" / "platform" / "cortex_m" / "board.h").exists()
    assert (prefix / "include" / "firmware" / "platform" / "mps3_an547" / "an547.ld.in").exists()
    _cmake("-S", APP, "-B", tmp_path / "app", "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
           f"-DCMAKE_TOOLCHAIN_FILE={REPO / 'cmake' / 'arm-none-eabi.cmake'}")
    _cmake("--build", tmp_path / "app")
    lib = tmp_path / "app" / "libcpp_app_bare_metal.a"
    assert lib.exists()
    # Built for the M55 (an ARM object in the archive) and calling the runtime it links.
    symbols = subprocess.run(["arm-none-eabi-nm", "-C", lib], capture_output=True, text=True,
                             check=True).stdout
    assert "pteron::Method::execute()" in symbols
