"""`python -m pteron.zoo` lists the zoo and exports a model; unknown names fail with exit 1."""

import os
import subprocess
import sys
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[2]

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "python"),
                                                    os.environ.get("PYTHONPATH", "")])}


def run(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pteron.zoo", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=300, check=False)


def test_list_names_every_model(tmp_path):
    import models
    result = run("list", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    listed = [line.split()[0] for line in result.stdout.splitlines()]
    assert listed == models.NAMES


def test_export_writes_loadable_pt2_and_logs_progress(tmp_path):
    result = run("export", "digits-cnn", "-o", "d.pt2", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "run_decompositions" in result.stderr and "saved" in result.stderr
    ep = torch.export.load(tmp_path / "d.pt2")
    assert [s.kind.name for s in ep.graph_signature.input_specs].count("USER_INPUT") == 1


def test_unknown_name_is_a_user_error(tmp_path):
    result = run("export", "no-such-model", cwd=tmp_path)
    assert result.returncode == 1
    assert "no-such-model" in result.stderr and "resnet-8" in result.stderr
    assert not list(tmp_path.iterdir())
