"""TFLite Micro + CMSIS-NN on the MLPerf Tiny reference models, beside pteron, on the same QEMU.

`make bench-cortex-m-peer TFLM_SRC=... CMSIS_NN_SRC=...`. Builds TensorFlow Lite Micro with its
own Makefile (TARGET=cortex_m_generic, OPTIMIZED_KERNEL_DIR=cmsis_nn, BUILD_TYPE=release: -Os
core, -O2 kernels, error strings stripped) once per core (the M55 with MVE, the M7 and M4 with
the DSP extension), links bench/peer/tflm_runner.cc with each reference .tflite of
`--models-dir` (/work/shared/data/mlperf_tiny: kws_ref_model, vww_96_int8, pretrainedResnet_quant,
ad01_int8) against it and against pteron's board support of that core (build-m55, build-m7,
build-m4: startup, semihosting, the instruction-count markers), runs each under qemu-system-arm
on the core's board with tools/qemu_icount counting the instructions of Invoke() alone, and
writes one table of TFLM's figures and pteron's (bench/results/mlperf_tiny_cortex_m.json from
`make bench-cortex-m`, when it has been run): bench/results/mlperf_tiny_peer.{json,md}.
TFLM RAM = arena in use (activations, scratch, its persistent per-channel data) + .data/.bss
besides the arena buffer + stack high-water mark + heap.

Nothing fetched is part of this repository. The source trees come from the command line
(fetched elsewhere, e.g. under /work/peers; the issue's figures used tflite-micro 90b983c and
CMSIS-NN 99f736a). TFLM's Makefile takes its third-party code from
tensorflow/lite/micro/tools/make/downloads inside its tree and would download it: this script
links the dependency checkouts found in `--deps` there instead (TFLM's pins:
flatbuffers v25.9.23 with TFLM's flatbuffers.patch applied, gemmlowp 719139c, ruy d371283,
kissfft v130 with TFLM's third_party/kissfft/kissfft.patch applied, CMSIS_6 5782d6f with
Cortex_DFP c2c70a9 in cmsis/Cortex_DFP) and gives pigweed an empty folder (tests only). TFLM's
Makefile runs its generate_cc_arrays.py with `python3`, which imports PIL: `--pythonpath` names
a folder with Pillow (pip install --target).

    python bench/cortex_m_peer.py --tflm-src /work/peers/tflite-micro --cmsis-nn-src /work/peers/CMSIS-NN \
        [--deps /work/peers] [--pythonpath /work/peers/pydeps] [--cores m55 m7 m4] [--work /tmp/tflm-peer]
"""

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results"
sys.path.insert(0, str(REPO / "bench"))
from cortex_m import MODELS  # noqa: E402

# pteron's model name: the reference model it has the architecture of.
REFERENCE = {
    "ds-cnn": "kws_ref_model.tflite",
    "mobilenet-v1-025": "vww_96_int8.tflite",
    "resnet-8": "pretrainedResnet_quant.tflite",
    "fc-autoencoder": "ad01_int8.tflite",
}
# Core: (TFLM TARGET_ARCH, pteron cross build folder, QEMU machine, compiler flags).
CORES = {
    "m55": ("cortex-m55", "build-m55", "mps3-an547", ["-mcpu=cortex-m55", "-mfloat-abi=hard"]),
    "m7": ("cortex-m7+fp", "build-m7", "mps2-an500", ["-mcpu=cortex-m7", "-mfpu=fpv5-d16", "-mfloat-abi=hard"]),
    "m4": ("cortex-m4+fp", "build-m4", "mps2-an386", ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"]),
}
STACK_BYTES = 16384
HEAP_BYTES = 4096


def run(*args, cwd=None, env=None, timeout=7200) -> str:
    r = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, args))}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return r.stdout + r.stderr


def link_downloads(tflm: Path, deps: Path) -> None:
    """TFLM's Makefile reads third-party code from its downloads folder: point it at --deps."""
    downloads = tflm / "tensorflow/lite/micro/tools/make/downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    for name in ("flatbuffers", "gemmlowp", "ruy", "kissfft"):
        if not (deps / name).is_dir():
            sys.exit(f"{deps / name}: missing (see this script's docstring for the pinned checkouts)")
        link = downloads / name
        if not link.exists():
            link.symlink_to(deps / name)
    (downloads / "pigweed").mkdir(exist_ok=True)
    if not (deps / "cmsis" / "Cortex_DFP").is_dir():
        sys.exit(f"{deps / 'cmsis'}: CMSIS_6 with Cortex_DFP inside is missing")


def build_tflm(tflm: Path, cmsis_nn: Path, deps: Path, pythonpath: str, arch: str, work: Path) -> Path:
    """libtensorflow-microlite.a for one core, by TFLM's own Makefile in release mode."""
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": pythonpath}
    run("make", "-f", tflm / "tensorflow/lite/micro/tools/make/Makefile", f"TENSORFLOW_ROOT={tflm}/",
        "TARGET=cortex_m_generic", f"TARGET_ARCH={arch}", "OPTIMIZED_KERNEL_DIR=cmsis_nn", "BUILD_TYPE=release",
        "TOOLCHAIN=gcc", "TARGET_TOOLCHAIN_ROOT=/usr/bin/", f"CMSIS_PATH={deps / 'cmsis'}",
        f"CMSIS_NN_PATH={cmsis_nn}", "microlite", f"-j{os.environ.get('JOBS', '2')}", cwd=work, env=env)
    libs = list(work.glob("gen/*/lib/libtensorflow-microlite.a"))
    if len(libs) != 1:
        sys.exit(f"{work}: expected one libtensorflow-microlite.a, found {libs}")
    return libs[0]


def link_info(cross: Path) -> dict:
    path = cross / "firmware_link.txt"
    if not path.exists():
        sys.exit(f"{path}: missing (build pteron's cross build first: make check-baremetal)")
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def build_runner(tflm: Path, deps: Path, lib: Path, cross: Path, flags: list[str], model: Path, elf: Path) -> None:
    info = link_info(cross)
    ld = Path(info["linker_script"]).read_text().replace("@STACK_SIZE@", str(STACK_BYTES))
    ld = ld.replace("@HEAP_SIZE@", str(HEAP_BYTES))
    work = elf.with_suffix(".build")
    work.mkdir(parents=True, exist_ok=True)
    (work / "app.ld").write_text(ld)
    # The model in the board's program flash, as pteron's firmware puts its program.
    region = ".qspi" if "an547" in info["linker_script"] else ".flash"
    (work / "model.S").write_text(f'.section {region}.peer_model,"a"\n.balign 16\n.global peer_model\n'
                                  f'peer_model:\n.incbin "{model}"\n')
    common = [*flags, "-mthumb", "-ffunction-sections", "-fdata-sections"]
    includes = [f"-I{tflm}", f"-I{deps / 'flatbuffers' / 'include'}", f"-I{deps / 'gemmlowp'}",
                f"-I{REPO / 'firmware' / 'platform' / 'cortex_m'}"]
    run("arm-none-eabi-g++", *common, "-std=c++17", "-Os", "-fno-rtti", "-fno-exceptions", "-DNDEBUG",
        "-DTF_LITE_STATIC_MEMORY", "-DTF_LITE_STRIP_ERROR_STRINGS", *includes, "-c",
        REPO / "bench" / "peer" / "tflm_runner.cc", "-o", work / "runner.o")
    run("arm-none-eabi-gcc", *common, "-c", work / "model.S", "-o", work / "model.o")
    run("arm-none-eabi-g++", *common, "-T", work / "app.ld", "-nostartfiles", "--specs=nano.specs",
        "--specs=rdimon.specs", "-Wl,--gc-sections", "-Wl,--undefined=board_vectors",
        f"-Wl,-Map={work / 'app.map'}", work / "runner.o", work / "model.o", "-Wl,--start-group", lib,
        info["platform"], "-lm", "-Wl,--end-group", "-o", elf)


def marker(elf: Path, name: str) -> str:
    for line in run("arm-none-eabi-nm", elf).splitlines():
        parts = line.split()
        if parts and parts[-1] == name:
            return "0x" + parts[0]
    sys.exit(f"{elf}: no symbol {name}")


def run_runner(elf: Path, machine: str, plugin: Path) -> dict:
    log = elf.with_suffix(".icount.log")
    out = run("timeout", "1200", "qemu-system-arm", "-M", machine, "-nographic", "-semihosting", "-kernel", elf,
              "-plugin", f"{plugin},begin={marker(elf, 'board_icount_begin')},end={marker(elf, 'board_icount_end')}",
              "-d", "plugin", "-D", log)
    line = next((x for x in out.splitlines() if x.startswith("tflm: ok")), None)
    counted = re.search(r"inference=(\d+)", log.read_text())
    if line is None or counted is None:
        sys.exit(f"{elf}: the run failed: {out[-2000:]}")
    report = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[2:])}
    report["instructions"] = int(counted.group(1))
    return report


def markdown(rows: list[dict], ours: dict) -> str:
    kib = lambda b: f"{b / 1024:.1f}"  # noqa: E731
    lines = [
        "# MLPerf Tiny: pteron vs TFLite Micro + CMSIS-NN under QEMU",
        "",
        "`make bench-cortex-m-peer TFLM_SRC=... CMSIS_NN_SRC=...` (bench/cortex_m_peer.py). TFLite Micro built by its own "
        "Makefile (cortex_m_generic, cmsis_nn, release) per core; the MLPerf Tiny reference int8 models; exact "
        "instructions of Invoke() (tools/qemu_icount), on the same QEMU board and board support as pteron's "
        "firmware. pteron: its zoo models of the same architectures and MAC counts (REFERENCE.md §9), "
        "`make bench-cortex-m` (bench/results/mlperf_tiny_cortex_m.json). RAM: TFLM = arena in use + "
        ".data/.bss + stack high-water mark + heap; pteron = arenas + method memory + .data/.bss + stack "
        "high-water mark + heap.",
        "",
        "| model | core | TFLM instructions | TFLM MACs/instr | TFLM RAM KiB (arena, static, stack) "
        "| pteron instructions | pteron MACs/instr | pteron RAM KiB (arena, method, static, stack) "
        "| instructions pteron/TFLM | RAM pteron/TFLM |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = ours.get((r["model"], r["core"]))
        tflm = (f"{r['instructions']:,} | {r['macs'] / r['instructions']:.2f} | {kib(r['ram_bytes'])} "
                f"({kib(r['arena_used_bytes'])}, {kib(r['static_bytes'] + r['heap_bytes'])}, {kib(r['stack_bytes'])})")
        if p is None:
            lines.append(f"| {r['model']} | {r['core']} | {tflm} | - | - | - | - | - |")
            continue
        ours_ram = (f"{kib(p['ram_measured_bytes'])} ({kib(p['arena_bytes'])}, {kib(p['method_bytes'])}, "
                    f"{kib(p['static_state_bytes'] + p['heap_bytes'])}, {kib(p['stack_high_water_bytes'])})")
        lines.append(f"| {r['model']} | {r['core']} | {tflm} | {p['instructions']:,} | {p['macs_per_instruction']:.2f} | "
                     f"{ours_ram} | {p['instructions'] / r['instructions']:.2f} | "
                     f"{p['ram_measured_bytes'] / r['ram_bytes']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tflm-src", type=Path, required=True)
    ap.add_argument("--cmsis-nn-src", type=Path, required=True)
    ap.add_argument("--deps", type=Path, help="flatbuffers, gemmlowp, ruy, cmsis (default: beside --tflm-src)")
    ap.add_argument("--pythonpath", default="", help="a folder with Pillow for TFLM's generate_cc_arrays.py")
    ap.add_argument("--models-dir", type=Path, default=REPO.parent / "shared" / "data" / "mlperf_tiny")
    ap.add_argument("--cores", nargs="*", default=list(CORES), choices=list(CORES))
    ap.add_argument("--models", nargs="*", default=list(REFERENCE), choices=list(REFERENCE))
    ap.add_argument("--work", type=Path, default=Path("/tmp/tflm-peer"))
    ap.add_argument("--plugin", type=Path, default=REPO / "build" / "tools" / "qemu_icount" / "libqemu_icount.so")
    args = ap.parse_args()
    tflm, cmsis_nn = args.tflm_src.resolve(), args.cmsis_nn_src.resolve()
    deps = (args.deps or tflm.parent).resolve()
    link_downloads(tflm, deps)
    rows = []
    for core in args.cores:
        arch, cross, machine, flags = CORES[core]
        print(f"[{core}] TFLite Micro + CMSIS-NN ({arch}) by its Makefile", flush=True)
        lib = build_tflm(tflm, cmsis_nn, deps, args.pythonpath, arch, args.work / f"tflm-{core}")
        for name in args.models:
            model = args.models_dir / REFERENCE[name]
            elf = args.work / f"{name}.{core}.elf"
            build_runner(tflm, deps, lib, REPO / cross, flags, model, elf)
            r = run_runner(elf, machine, args.plugin)
            ram = r["arena_used"] + r["static_ram"] + r["stack"] + r["heap"]
            rows.append({"model": name, "core": core, "reference": REFERENCE[name], "macs": MODELS[name][1],
                         "instructions": r["instructions"], "arena_used_bytes": r["arena_used"],
                         "static_bytes": r["static_ram"], "stack_bytes": r["stack"], "heap_bytes": r["heap"],
                         "ram_bytes": ram})
            print(f"  {name}: {r['instructions']:,} instructions, RAM {ram / 1024:.1f} KiB", flush=True)
    ours_path = RESULTS / "mlperf_tiny_cortex_m.json"
    ours = {}
    if ours_path.exists():
        ours = {(r["model"], r["core"]): r for r in json.loads(ours_path.read_text())["models"] if "core" in r}
    versions = {name: run("git", "-C", path, "rev-parse", "--short", "HEAD").strip()
                for name, path in (("tflite-micro", tflm), ("CMSIS-NN", cmsis_nn))}
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "mlperf_tiny_peer.json").write_text(json.dumps({"versions": versions, "peer": rows}, indent=2) + "\n")
    text = markdown(rows, ours) + f"\nTFLite Micro {versions['tflite-micro']}, CMSIS-NN {versions['CMSIS-NN']}.\n"
    (RESULTS / "mlperf_tiny_peer.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
