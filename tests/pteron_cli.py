"""Where the tests find the `pteron` command line tool, and what they check of its errors.

PTERON_CLI names a binary explicitly (e.g. another build directory); otherwise the binary of this
checkout's build/ (so a worktree tests its own build, not whichever `pteron` is on PATH); the
PATH only when this checkout has no build.
"""

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def pteron_cli() -> str:
    explicit = os.environ.get("PTERON_CLI")
    if explicit:
        return explicit
    built = REPO / "build" / "tools" / "cli" / "pteron"
    found = str(built) if built.exists() else shutil.which("pteron")
    assert found, f"no pteron binary: build it with `ninja -C build` ({built})"
    return found


def assert_one_line_error(run, *fragments):
    """`run` (a finished subprocess.run of the CLI) failed as bad input must: exit status 1 and
    one `pteron: error: ...` line on stderr holding every fragment."""
    assert run.returncode == 1, (run.returncode, run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pteron: error: "), run.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def assert_compiles_or_one_line_error(pt2, pte, *options):
    """`pteron compile` of a damaged `pt2` (portable) either succeeds or is refused as bad input
    must (exit 1, one line); it never crashes. Returns the finished run."""
    run = subprocess.run(
        [pteron_cli(), "compile", str(pt2), "-o", str(pte), "--backends", "portable", *options],
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), (pt2, run.returncode, run.stderr[-2000:])
    if run.returncode == 1:
        assert_one_line_error(run)
    return run
