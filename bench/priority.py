"""How a benchmark wins the CPUs on a shared machine, shared by the bench scripts."""

import os
from pathlib import Path


def match_autogroup_nice() -> str:
    """`nice -n -15` alone does not win the CPUs from other sessions when the kernel groups
    processes per session (sched_autogroup: CPU time is shared between groups first, nice only
    counts inside one). A niced run (as root) gives its whole group the same nice. Returns what
    was done, for the results."""
    path = Path("/proc/self/autogroup")
    niceness = os.nice(0)
    if niceness >= 0 or not path.exists():
        return f"niceness {niceness}"
    try:
        path.write_text(str(niceness))
    except OSError as e:
        return f"niceness {niceness}; autogroup left as it was ({e.strerror})"
    return f"niceness {niceness}, and of its scheduler autogroup ({path.read_text().strip()})"
