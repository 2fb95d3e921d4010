"""Runs in .venv-arm (never imported by pteron): the TOSA reference model as a line server.

Each stdin line is JSON {"dir": D, "inputs": [npy paths]}: runs D/graph.tosa on the inputs and
answers one JSON line {"status": "ok" | error text, "outputs": [npy paths under D]}.
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import tosa_reference_model as ref


def main():
    # The reference model prints warnings on stdout: the protocol gets its own copy of fd 1.
    reply_stream = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        req = json.loads(line)
        base = Path(req["dir"])
        try:
            graph = (base / "graph.tosa").read_bytes()
            inputs = [np.load(p) for p in req["inputs"]]
            outputs, status = ref.run(graph, inputs)
            if status != ref.GraphStatus.TOSA_VALID:
                reply = {"status": str(status), "outputs": []}
            else:
                paths = []
                for i, o in enumerate(outputs):
                    p = base / f"out{i}.npy"
                    np.save(p, np.asarray(o))
                    paths.append(str(p))
                reply = {"status": "ok", "outputs": paths}
        except Exception as e:  # noqa: BLE001 - reported to the caller, which raises
            reply = {"status": f"{type(e).__name__}: {e}", "outputs": []}
        reply_stream.write(json.dumps(reply) + "\n")
        reply_stream.flush()


if __name__ == "__main__":
    main()
