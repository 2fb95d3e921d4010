"""`make demo`: the main job end to end, with the commands a user would type.

1. export a zoo model with torch.export (python -m pteron.zoo export)
2. compile it for the host with pteron's C++ compiler (pteron compile --memory-report)
3. run it on pteron's runtime (pteron run --iters)
4. check its output against PyTorch eager
5. the Cortex-A CPU path: XNNPACK delegate + optimized kernels, its delegation summary, and
   its speed next to the portable program (pteron compile --backends, inspect --delegation, bench)
6. profile it and write the program explorer page (pteron profile, pteron explore)
7. the Cortex-M55 INT8 path on digits-cnn (tools/demo/cortex_m_step.py)
8. the Ethos-U path: int8, Vela for ethos-u55-128, run emulated (tools/demo/ethos_u_step.py)
9. Arm's ML SDK for Vulkan: VGF regions run through VK_ARM_data_graph (tools/demo/vgf_demo.py)
10. the Vulkan GPU path (lavapipe here) with a CPU fallback plan chosen at load time
    (tools/demo/vulkan_path.py)
11. text generation: the zoo's tiny-stories (trained here), pteron generate --tokenizer --prompt,
    its text and tokens/s (tools/demo/generate_step.py)
"""

import argparse
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch
from cortex_m_step import cortex_m55_step
from ethos_u_step import run_ethos_u_step
from generate_step import generate_step
from vgf_demo import vgf_step
from vulkan_path import vulkan_step

REPO = Path(__file__).resolve().parents[2]


def step(n, total, text):
    print(f"\n[{n}/{total}] {text}", flush=True)


def sh(cmd: list[str], show_output: bool = True) -> str:
    print("  $ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    done = subprocess.run(cmd, text=True, capture_output=True)
    out = done.stdout + done.stderr if show_output else done.stderr
    if out.strip():
        print("\n".join("    " + line for line in out.rstrip().splitlines()), flush=True)
    if done.returncode != 0:
        sys.exit(f"demo: command failed with exit code {done.returncode}")
    return done.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="mobilenet-v2")
    parser.add_argument("--workdir", default=str(REPO / "out" / "demo"))
    args = parser.parse_args()
    from pteron import zoo

    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    pt2, pte = work / f"{args.model}.pt2", work / f"{args.model}.pte"
    inputs_npz, outputs_npz = work / "inputs.npz", work / "outputs.npz"
    total = 11
    print(f"pteron demo: {args.model} from PyTorch to a .pte program on this host")

    step(1, total, f"export {args.model} with torch.export")
    sh([sys.executable, "-m", "pteron.zoo", "export", args.model, "-o", str(pt2)])

    step(2, total, "compile for the host (C++ compiler, memory plan)")
    sh(["pteron", "compile", str(pt2), "-o", str(pte), "--memory-report"])
    sh(["pteron", "inspect", str(pte)])

    step(3, total, "run on pteron's runtime (portable kernels, 1 thread)")
    model, inputs = zoo.get(args.model)
    np.savez(inputs_npz, **{f"input_{i}": x.numpy() for i, x in enumerate(inputs)})
    sh(["pteron", "run", str(pte), "--inputs", str(inputs_npz), "--outputs", str(outputs_npz), "--iters", "5"])

    step(4, total, "check against PyTorch eager")
    t = time.perf_counter()
    with torch.no_grad():
        expected = model(*inputs)
    eager_ms = (time.perf_counter() - t) * 1000
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    got = np.load(outputs_npz)
    worst = 0.0
    for i, e in enumerate(expected):
        a = got[f"output_{i}"]
        err = float(np.abs(a - e.numpy()).max())
        tol = 1e-4 * (1 + float(e.abs().max()))
        worst = max(worst, err / tol)
        print(f"  output {i}: shape {list(a.shape)}, max |pteron - torch| = {err:.3g} (tolerance {tol:.3g})")
    print(f"  PyTorch eager (one run, {torch.get_num_threads()} threads): {eager_ms:.1f} ms")
    if worst > 1:
        sys.exit("demo: FAILED - outputs differ from PyTorch beyond tolerance")
    print(f"  {pte} matches PyTorch")

    step(5, total, "the CPU path: XNNPACK delegate + optimized kernels, next to the portable program")
    best = work / f"{args.model}-cpu.pte"
    sh(["pteron", "compile", str(pt2), "-o", str(best), "--backends", "xnnpack,optimized,portable"])
    sh(["pteron", "inspect", str(best), "--delegation"])
    timings = {}
    for label, program, kernels in (("portable", pte, "portable"), ("xnnpack+optimized", best, "optimized,portable")):
        out = sh(["pteron", "bench", str(program), "--inputs", str(inputs_npz), "--threads", "1",
                  "--kernels", kernels, "--warmup", "2", "--iters", "10", "--json"], show_output=False)
        timings[label] = json.loads(out)["median_ms"]
    print(f"  median on 1 thread: portable {timings['portable']:.2f} ms, xnnpack+optimized "
          f"{timings['xnnpack+optimized']:.2f} ms ({timings['portable'] / timings['xnnpack+optimized']:.1f}x)")

    step(6, total, "profile it and write the program explorer (graph, timing, memory plan)")
    trace, html = work / f"{args.model}-trace", work / f"{args.model}.html"
    sh(["pteron", "profile", str(best), "--inputs", str(inputs_npz), "--iters", "3", "--threads", "1",
        "-o", str(trace), "--top", "5"])
    sh(["pteron", "explore", str(best), "--trace", f"{trace}.etdp", "-o", str(html)])

    step(7, total, "Cortex-M55: digits-cnn (mobilenet-v2 is too big for it) INT8 firmware under QEMU vs fp32")
    cortex_m55_step(sh, work)

    step(8, total, "the Ethos-U path: int8, Vela for an Ethos-U55-128 system, emulated run")
    run_ethos_u_step(sh, args.model, pt2, work)

    step(9, total, "Arm's ML SDK for Vulkan: TOSA -> .vgf, run through VK_ARM_data_graph")
    vgf_step(sh, pt2, work, inputs_npz, expected, args.model)

    step(10, total, "the Vulkan GPU path (lavapipe: Vulkan on the CPU) with a CPU fallback plan")
    vulkan_step(args.model, work, pt2, inputs_npz, expected)

    step(11, total, "text generation: tiny-stories (a small Llama trained here), its tokenizer, a prompt")
    generate_step(sh, work)

    print(f"\ndemo: OK - {pte} matches PyTorch; open the program explorer: {html}")


if __name__ == "__main__":
    main()
