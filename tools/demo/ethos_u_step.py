"""`make demo` step: the Ethos-U path for the demo model.

Quantize with the ethos-u scheme (int8 I/O), compile for an Ethos-U55-128 system with
`--backends ethos-u,cortex-m,portable` (Vela compiles the NPU region; the report carries its
estimate), show which backend took what, and run the program on this host, where the NPU
region executes emulated from its TOSA form.
"""

import json
import sys
from pathlib import Path

import numpy as np


def run_ethos_u_step(sh, model: str, pt2: Path, work: Path) -> None:
    from pteron.tosa import zoo_calibration

    calibration = zoo_calibration(model)
    cal = work / f"{model}-cal.npz"
    np.savez(cal, input_0=calibration[0])
    pte = work / f"{model}-ethos-u55-128.pte"
    out = sh(["pteron", "compile", str(pt2), "-o", str(pte), "--target", "ethos-u55-128",
              "--backends", "ethos-u,cortex-m,portable", "--quantize", "ethos-u", "--calibration",
              str(cal), "--int8-io", "--json"], show_output=False)
    report = json.loads(out)
    for region in report["delegated_regions"]:
        vela = region.get("report", {})
        print(f"  {region['backend']}: {region['nodes']} nodes; Vela {vela.get('vela_version', '?')} on "
              f"{vela.get('accelerator')} ({vela.get('system_config')}, {vela.get('memory_mode')}): "
              f"{vela.get('npu_cycles', 0):,} NPU cycles = {vela.get('inference_time_s', 0) * 1e3:.3f} ms, "
              f"SRAM {vela.get('sram_bytes', 0):,} B, flash {vela.get('off_chip_flash_bytes', 0):,} B")
    for refusal in report["refusals"][:3]:
        print(f"  kept on the CPU: {refusal[:160]}")
    if not report["delegated_regions"]:
        sys.exit("demo: nothing went to the Ethos-U")
    sh(["pteron", "inspect", str(pte), "--delegation"])
    x = np.random.default_rng(0).integers(-128, 128, calibration[0].shape[1:]).astype(np.int8)
    inputs = work / f"{model}-int8-inputs.npz"
    np.savez(inputs, input_0=x)
    sh(["pteron", "run", str(pte), "--inputs", str(inputs)])
