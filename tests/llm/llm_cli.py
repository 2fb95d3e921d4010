"""`pteron generate` from the LLM tests: run it, read its --json object, check a one-line error."""

import json
import subprocess

from pteron_cli import pteron_cli


def cli(*args):
    return subprocess.run([pteron_cli(), *map(str, args)], capture_output=True, text=True, timeout=300)


def generate_json(*args):
    """`pteron generate --json ARGS` (the program among ARGS) as a dict; it must succeed."""
    run = cli("generate", "--json", *args)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def assert_one_line_error(run, *fragments):
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pteron: error: "), run.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
