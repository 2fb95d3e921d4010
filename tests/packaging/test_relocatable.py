"""No absolute path of the build machine in what pteron builds or installs: the binaries, shared
objects and scripts of the build tree and of `cmake --install` name neither the build folder nor
the checkout, and the installed tools work after the whole prefix is moved."""

import shutil
import subprocess
from pathlib import Path

import numpy as np
from conftest import BUILD, REPO, clean_env


def _elf_files(root: Path):
    for p in root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            with open(p, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    yield p


def _offenders(files, needles):
    found = []
    for p in files:
        data = p.read_bytes()
        found += [f"{p}: {n}" for n in needles if n.encode() in data]
    return found


def test_build_tree_binaries_name_no_build_path():
    # Shipped binaries: the tools, the Python module, the QEMU plugin (tests/ are not shipped:
    # gtest records source paths in its failure messages).
    roots = [BUILD / d for d in ("tools", "python", "backends")]
    files = [p for r in roots if r.exists() for p in _elf_files(r)]
    assert any(p.name == "pteron" for p in files), "no pteron binary in build/tools"
    assert _offenders(files, [str(BUILD), str(REPO)]) == []


def test_installed_files_name_no_build_path(install_prefix):
    files = [p for p in install_prefix.rglob("*") if p.is_file() and not p.is_symlink()]
    assert (install_prefix / "bin" / "pteron") in files
    assert (install_prefix / "lib" / "cmake" / "pteron" / "pteronConfig.cmake") in files
    assert _offenders(files, [str(BUILD), str(REPO)]) == []


def test_moved_install_finds_its_own_files(install_prefix, small_model, tmp_path):
    pt2, folder, expected = small_model
    moved = tmp_path / "somewhere" / "else"
    shutil.copytree(install_prefix, moved, symlinks=True)
    pteron = moved / "bin" / "pteron"
    env = clean_env()
    # The targets come from moved/share/pteron/targets (a named target needs the folder).
    subprocess.run([pteron, "compile", pt2, "-o", tmp_path / "m.pte", "--target", "host"],
                   check=True, env=env, cwd=tmp_path, capture_output=True)
    subprocess.run([pteron, "run", tmp_path / "m.pte", "--inputs", folder / "in.npz",
                    "--outputs", tmp_path / "out.npz"], check=True, env=env, cwd=tmp_path,
                   capture_output=True)
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(out[out.files[0]], expected, rtol=1e-5, atol=1e-6)


def test_missing_targets_folder_is_one_line(install_prefix, small_model, tmp_path):
    pt2, _, _ = small_model
    lonely = tmp_path / "bin"
    lonely.mkdir()
    shutil.copy2(install_prefix / "bin" / "pteron", lonely / "pteron")
    r = subprocess.run([lonely / "pteron", "compile", pt2, "-o", tmp_path / "m.pte", "--target", "host"],
                       env=clean_env(), capture_output=True, text=True)
    assert r.returncode == 1
    msg = r.stderr.strip()
    assert "\n" not in msg and "targets folder was not found" in msg and "PTERON_TARGETS_DIR" in msg, msg
