# pteron: `make` installs what it needs and builds; `make test` runs every test; `make demo`
# shows the main job end to end. Works as root on a fresh Debian 12 machine.
SHELL := /bin/bash
VENV := .venv
PY := $(abspath $(VENV))/bin/python
BUILD := build
JOBS ?= $(shell nproc)
# ccache keys on paths relative to the checkout, so every build folder of it (build/, the wheel's
# build-wheel/, the packaging tests' installs) shares one cache: the wheel test then recompiles
# nothing on a fresh machine.
export CCACHE_BASEDIR ?= $(CURDIR)

DEBIAN_PACKAGES := cmake ninja-build ccache g++ clang libclang-rt-14-dev pkg-config \
  flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libzip-dev libcli11-dev libtomlplusplus-dev \
  libgtest-dev libgmock-dev gcc-arm-none-eabi libnewlib-arm-none-eabi \
  libstdc++-arm-none-eabi-newlib libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libkissfft-dev \
  qemu-system-arm chromium libpcre2-dev libsentencepiece-dev libicu-dev \
  mesa-vulkan-drivers libvulkan-dev glslc glslang-tools spirv-tools vulkan-tools
FUZZ_SECONDS ?= 60
TOKENIZER_FUZZ_SECONDS ?= 30
ET_XNNPACK_FUZZ_SECONDS ?= 20
VULKAN_FUZZ_SECONDS ?= 20

.PHONY: all deps venv venv-arm build demo-build test lint test-cpp test-python test-sanitize fuzz check-baremetal check-aarch64 \
  pteron-aarch64 demo clean format bench-arm

all: build

# Debian packages: installed only when one is missing, so repeated builds stay fast.
.stamps/deps: Makefile
	@mkdir -p .stamps
	@missing=$$(for p in $(DEBIAN_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@touch $@
deps: .stamps/deps

$(VENV)/.stamp: requirements.txt
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@touch $@
venv: $(VENV)/.stamp

# Arm's TOSA/Vela/VGF tools live in their own venv (their numpy/flatbuffers pins clash with .venv).
ARM_VENV := .venv-arm
$(ARM_VENV)/.stamp: tools/arm/requirements-arm.txt
	@test -x $(ARM_VENV)/bin/python || python3 -m venv $(ARM_VENV)
	$(ARM_VENV)/bin/python -m pip install -q --disable-pip-version-check -r tools/arm/requirements-arm.txt
	@touch $@
venv-arm: $(ARM_VENV)/.stamp

$(BUILD)/build.ninja: CMakeLists.txt .stamps/deps $(VENV)/.stamp $(ARM_VENV)/.stamp
	cmake -S . -B $(BUILD) -G Ninja -DPython_EXECUTABLE=$(PY) >/dev/null

# Puts this checkout's package and `pteron` CLI on the venv's paths (after a build).
define use_this_build
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	printf '%s\n%s\n' "$(abspath python)" "$(abspath $(BUILD))/python" > $$site/pteron-dev.pth
	@if [ -x $(BUILD)/tools/cli/pteron ]; then ln -sf $(abspath $(BUILD))/tools/cli/pteron $(VENV)/bin/pteron; fi
endef

# Builds everything (tests included).
build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	$(use_this_build)

# Builds only what `make demo` runs (the demo-build CMake target: CLI, Python module, QEMU
# instruction counter), not the tests and other tools.
demo-build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS) --target demo-build
	$(use_this_build)

# Everything CI checks: unit tests, Python tests, the C++ tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, libFuzzer runs over program and tokenizer loading, the bare-metal
# build, and the runtime's C++ tests cross-built for aarch64 and run under qemu.
test: build
	@$(MAKE) --no-print-directory lint test-cpp test-python test-sanitize fuzz check-baremetal check-aarch64

# Python style (ruff.toml) and C++ style (.clang-format, with the clang-format pinned in
# requirements.txt: releases format differently). `make format` rewrites the C++.
CLANG_FORMAT := $(abspath $(VENV))/bin/clang-format
lint: $(VENV)/.stamp
	$(VENV)/bin/ruff check .
	$(CLANG_FORMAT) --dry-run -Werror $$(git ls-files '*.h' '*.cpp')

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python:
	$(PY) -m pytest -q tests

# One clang build serves both: sanitizers on everything, fuzzer coverage on everything.
build-fuzz/build.ninja: CMakeLists.txt .stamps/deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPTERON_SANITIZE=ON -DPTERON_FUZZ=ON -DPTERON_PYTHON=OFF >/dev/null

# The runtime-facing tests (program verification, memory planning, partitioning and delegate
# programs, tokenizers) under the sanitizers; the kernels themselves are checked against torch in pytest.
SANITIZE_TESTS := program_verify_test llm_metadata_test memory_planner_test compiler_partition_tests tokenizer_test
test-sanitize: build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target $(SANITIZE_TESTS)
	@for t in $(SANITIZE_TESTS); do \
	  bin=$$(find build-fuzz/tests -type f -name $$t | head -1); \
	  echo "sanitized: $$t"; $$bin --gtest_brief=1 || exit 1; \
	done

fuzz: build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target program_fuzzer tokenizer_fuzzer et_xnnpack_fuzzer vulkan_payload_fuzzer
	tests/fuzz/run_fuzzer.sh program_fuzzer $(FUZZ_SECONDS) 65536 "program load + method init + execute" \
	  tests/fixtures/executorch/*.pte tests/fuzz/regressions/*.pte tests/fuzz/seeds/*.pte
	tests/fuzz/run_fuzzer.sh tokenizer_fuzzer $(TOKENIZER_FUZZ_SECONDS) 65536 "tokenizer load + encode + decode" \
	  tests/fuzz/seeds/tokenizer-* tests/fuzz/regressions/tokenizer-*
	tests/fuzz/run_fuzzer.sh et_xnnpack_fuzzer $(ET_XNNPACK_FUZZ_SECONDS) 524288 "ExecuTorch XNNPACK payload reading" \
	  tests/fixtures/executorch/*xnnpack*.pte
	tests/fuzz/run_fuzzer.sh vulkan_payload_fuzzer $(VULKAN_FUZZ_SECONDS) 65536 \
	  "Vulkan payload verification and dynamic resizing" \
	  tests/fuzz/seeds/vulkan-*.pte tests/fuzz/regressions/vulkan-*.pte

# The runtime core and portable kernels must build for Cortex-M55 (no exceptions, RTTI, heap),
# and the int8 kernels for the Cortex-M7 and Cortex-M4 too: each core's QEMU tests (the board,
# the kernels' vector path against their scalar reference: MVE on the M55, DSP on the M4/M7)
# run in its own build folder.
MCU_BUILDS := m7:cortex-m7 m4:cortex-m4
MCU_TEST_TARGETS := board_platform_test cortex_m_kernel_test cortex_m_layer_bench pteron_firmware_libs
check-baremetal: .stamps/deps
	@test -f build-m55/build.ninja || cmake -S . -B build-m55 -G Ninja \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake >/dev/null
	cmake --build build-m55 -j $(JOBS)
	cd build-m55 && ctest --output-on-failure -j $(JOBS)
	@for b in $(MCU_BUILDS); do dir=build-$${b%%:*}; cpu=$${b#*:}; \
	  test -f $$dir/build.ninja || cmake -S . -B $$dir -G Ninja \
	    -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake -DPTERON_MCU=$$cpu >/dev/null || exit 1; \
	  cmake --build $$dir -j $(JOBS) --target $(MCU_TEST_TARGETS) || exit 1; \
	  (cd $$dir && ctest --output-on-failure -j $(JOBS)) || exit 1; \
	done
	@echo "bare-metal builds (cortex-m55, cortex-m7, cortex-m4) and their QEMU tests ok"

# aarch64 Linux: the runtime, kernels, XNNPACK delegate, their C++ tests (cmake/aarch64-linux-gnu.cmake)
# and pteron-run, cross-built with Debian's g++-aarch64-linux-gnu; ctest runs the tests under
# qemu-aarch64, so the Arm code paths (NEON kernels, XNNPACK's aarch64 microkernels) really run.
# The arm64 libraries are extracted into $(AARCH64_SYSROOT) rather than installed: Debian's
# libxnnpack-dev and libpthreadpool-dev cannot be installed for two architectures at once.
AARCH64_BUILD := build-aarch64
AARCH64_SYSROOT := build-aarch64-sysroot
AARCH64_HOST_PACKAGES := g++-aarch64-linux-gnu qemu-user
AARCH64_TARGET_PACKAGES := libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev \
  libcpuinfo0 libcpuinfo-dev libgtest-dev libkissfft-float131 libkissfft-dev
AARCH64_HEADER_PACKAGES := nlohmann-json3-dev  # architecture "all": header-only

$(AARCH64_SYSROOT)/.stamp: Makefile .stamps/deps
	@missing=$$(for p in $(AARCH64_HOST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@if ! dpkg --print-foreign-architectures | grep -qx arm64; then \
	  echo "adding the arm64 architecture to apt"; dpkg --add-architecture arm64 && apt-get update -qq; \
	fi
	@rm -rf $(AARCH64_SYSROOT) && mkdir -p $(AARCH64_SYSROOT)/debs
	@echo "extracting arm64 packages into $(AARCH64_SYSROOT):" $(AARCH64_TARGET_PACKAGES) \
	  $(AARCH64_HEADER_PACKAGES)
	@cd $(AARCH64_SYSROOT)/debs && download() { apt-get download -qq -o APT::Sandbox::User=root \
	  $(AARCH64_TARGET_PACKAGES:%=%:arm64) $(AARCH64_HEADER_PACKAGES); }; \
	download || { apt-get update -qq && download; }
	@for deb in $(AARCH64_SYSROOT)/debs/*.deb; do dpkg-deb -x $$deb $(AARCH64_SYSROOT) || exit 1; done
	@touch $@

$(AARCH64_BUILD)/build.ninja: CMakeLists.txt $(AARCH64_SYSROOT)/.stamp
	cmake -S . -B $(AARCH64_BUILD) -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake >/dev/null

# Timing prints measure nothing under emulation (XNNPACK's fully-connected one takes 4 minutes).
AARCH64_CTEST_EXCLUDE := TimingPrint
check-aarch64: $(AARCH64_BUILD)/build.ninja
	cmake --build $(AARCH64_BUILD) -j $(JOBS)
	cd $(AARCH64_BUILD) && ctest --output-on-failure -j $(JOBS) -E '$(AARCH64_CTEST_EXCLUDE)'
	@echo "aarch64 tests passed under qemu-aarch64"

# The runtime-only runner for aarch64 boards: $(AARCH64_BUILD)/tools/run/pteron-run (it needs the
# board's libXNNPACK, libpthreadpool and libcpuinfo: Debian's arm64 packages of the same names).
pteron-aarch64: $(AARCH64_BUILD)/build.ninja
	cmake --build $(AARCH64_BUILD) -j $(JOBS) --target pteron-run
	@echo "built $(AARCH64_BUILD)/tools/run/pteron-run (aarch64)"

DEMO_MODEL ?= mobilenet-v2
demo: demo-build
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) tools/demo/demo.py --model $(DEMO_MODEL)

clean:
	rm -rf $(BUILD) build-fuzz build-m55 build-m7 build-m4 build-wheel $(AARCH64_BUILD) $(AARCH64_SYSROOT) .stamps

format: $(VENV)/.stamp
	$(CLANG_FORMAT) -i $$(git ls-files '*.h' '*.cpp')

# ---- Against ExecuTorch (peer venv $(ET_VENV); slow, so not part of `make test`) ----------------
# interop: pteron compiles the zoo, ExecuTorch's runtime runs the programs (bench/results/interop.*)
# bench-portable: pteron vs ExecuTorch portable latency on the same .pte (bench/results/portable.*)
# bench-compile: `pteron compile` vs ExecuTorch's AOT flow per zoo model (bench/results/compile.*)
# bench-opt / bench-cpu: eager, ExecuTorch portable/XNNPACK, pteron portable/best, 2 threads
#   (bench/results/opt125m.*, bench/results/cpu.*); the .pt2 files stay in bench/work/ (OPT-125M is
#   exported once; bench-explorer reuses it). BENCH_ARGS: e.g. --slow-iters 5 (see --help).
ET_VENV ?= .venv-et
ET_PY := $(abspath $(ET_VENV))/bin/python

.PHONY: venv-et interop bench-portable bench-compile bench-opt bench-cpu

$(ET_VENV)/.stamp: tools/fixtures/requirements-et.txt
	@test -x $(ET_PY) || python3 -m venv $(ET_VENV)
	$(ET_PY) -m pip install -q --disable-pip-version-check -r tools/fixtures/requirements-et.txt
	@touch $@
venv-et: $(ET_VENV)/.stamp

interop: build venv-et
	$(ET_PY) tools/fixtures/run_pteron_programs_in_executorch.py --python $(PY) \
	  --pteron $(abspath $(BUILD))/tools/cli/pteron

bench-portable: build venv-et
	$(ET_PY) bench/portable.py --build $(abspath $(BUILD))

bench-compile: build venv-et
	$(ET_PY) bench/compile.py --python $(PY) --pteron $(abspath $(BUILD))/tools/cli/pteron

bench-opt: build venv-et
	$(ET_PY) bench/cpu_path.py opt --python $(PY) --build $(abspath $(BUILD)) --work bench/work/opt --reuse $(BENCH_ARGS)

# bench-llm: text generation (128 prompt + 128 new tokens, greedy, 2 threads): PyTorch eager,
# ExecuTorch's LLM export (XNNPACK fp32/8da4w), llama.cpp (F32/Q8_0/Q4_0 GGUF), pteron
# (fp32/llm-int8/llm-8da4w); bench/results/llm.{json,md,png}, refused above a load of the core count.
# llama-cpp-python is compiled from its source distribution for this CPU into its own ignored venv
# (bench-llm-venv; 30+ minutes on 2 cores); without it bench-llm says llama.cpp was not run.
# BENCH_ARGS: e.g. --smoke, --rounds 5, --config llama-1b.
LLAMACPP_VENV := bench/work/llamacpp-venv
LLAMACPP_CMAKE_ARGS := -DGGML_NATIVE=ON -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_BLAS=OFF \
  -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
.PHONY: bench-llm bench-llm-venv
$(LLAMACPP_VENV)/.stamp: bench/requirements-llamacpp.txt
	@test -x $(LLAMACPP_VENV)/bin/python || python3 -m venv $(LLAMACPP_VENV)
	CMAKE_ARGS="$(LLAMACPP_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS) $(LLAMACPP_VENV)/bin/python -m pip install \
	  -q --disable-pip-version-check --no-binary llama-cpp-python -r bench/requirements-llamacpp.txt
	@touch $@
bench-llm-venv: $(LLAMACPP_VENV)/.stamp

bench-llm: build venv-et
	@$(MAKE) --no-print-directory bench-llm-venv || echo "bench-llm: llama-cpp-python did not build; llama.cpp is reported as not run"
	$(PY) bench/llm.py --build $(abspath $(BUILD)) --et-python $(ET_PY) \
	  --llamacpp-python $(abspath $(LLAMACPP_VENV))/bin/python $(BENCH_ARGS)

# bench-packed-weights: constant weights packed once per program vs per call vs PyTorch eager,
# CPU time per run, 1 thread, PTERON_ISA=avx2 (bench/packed_weights.py; results to bench/work/
# unless BENCH_ARGS="--results bench/results" on a quiet machine)
.PHONY: bench-packed-weights
bench-packed-weights: build
	$(PY) bench/packed_weights.py --build $(abspath $(BUILD)) $(BENCH_ARGS)

# bench-dynamic: one bounded dynamic transformer-encoder program vs one static program per
# sequence length (8, 32, 128, 512), 2 threads; bench/results/dynamic.{json,md}
.PHONY: bench-dynamic
bench-dynamic: build
	$(PY) bench/dynamic.py --build $(abspath $(BUILD)) $(BENCH_ARGS)

bench-cpu: build venv-et
	$(ET_PY) bench/cpu_path.py cpu --python $(PY) --build $(abspath $(BUILD)) --work bench/work/cpu --reuse $(BENCH_ARGS)

# bench-cpu-int8: mobilenet-v2, resnet-18, ds-cnn, efficientnet-b0, mobilenet-v3-large quantized to int8 by pteron
# (--quantize xnnpack)
# and by ExecuTorch (XNNPACKQuantizer), same calibration samples, 2 threads, alternating rounds
# (bench/results/cpu_int8.{json,md}). BENCH_ARGS: e.g. --rounds 5, --models resnet-18.
.PHONY: bench-cpu-int8
bench-cpu-int8: build venv-et
	$(ET_PY) bench/cpu_int8.py --python $(PY) --build $(abspath $(BUILD)) $(BENCH_ARGS)

# bench-default: the host's default program against every explicit backend list on the zoo's
# quick models, fp32 and int8, after pteron tune, alternating rounds
# (bench/results/default_choice.{json,md}). BENCH_ARGS: e.g. --rounds 5, --models ds-cnn.
.PHONY: bench-default
bench-default: build
	$(PY) bench/default_choice.py --build $(abspath $(BUILD)) $(BENCH_ARGS)

# bench-families: model families outside the zoo (wav2vec2, T5 encoder, ConvBERT, a U-Net, a
# super-resolution net, NeRF, capsules, a Perceiver, Conv-TasNet, a style-transfer net, a DCGAN
# generator, a detector's head) on pteron's default program against eager,
# 2 threads, alternating rounds (bench/results/families.{json,md}). BENCH_ARGS: e.g. --rounds 5,
# --models unet,sr.
.PHONY: bench-families
bench-families: build
	$(PY) bench/families_vs_eager.py --build $(abspath $(BUILD)) $(BENCH_ARGS)

# bench-arm: instructions per inference of pteron's NEON kernels vs XNNPACK's aarch64 build (Debian's
# arm64 package) under qemu-aarch64 -cpu cortex-a76 (tools/qemu_icount), next to the same programs'
# x86 timings, 1 thread (bench/arm_icount.py; bench/results/arm.{json,md,png}).
.PHONY: bench-arm
bench-arm: build venv-et $(AARCH64_BUILD)/build.ninja
	cmake --build $(AARCH64_BUILD) -j $(JOBS) --target pteron-run
	PYTHONPATH=$(abspath .):$(abspath python) $(PY) bench/arm_icount.py --build $(abspath $(BUILD)) \
	  --chart-python $(ET_PY) $(BENCH_ARGS)

# bench-gpu: mobilenet-v2, resnet-18, OPT-125M on the Vulkan path (fp32, fp16) vs the best CPU
# path in one run, on the Vulkan device present (lavapipe here); bench/results/gpu.{json,md,png}
.PHONY: bench-gpu
bench-gpu: build
	$(PY) bench/gpu.py --build $(abspath $(BUILD))
	-$(ET_PY) bench/gpu.py --chart-only

# bench-ops: the optimized upsample / pad / topk / sort / scatter / gather / grid_sampler / math / reduction fast
# paths vs PyTorch eager, 1 and 2 threads in one run, each system in its own process
# (bench/results/ops.{json,md}; above load average = cores: bench/work/ops/); BENCH_ARGS: e.g. --rounds 3
.PHONY: bench-ops
bench-ops: build
	$(PY) bench/ops.py $(BENCH_ARGS)

# bench-cortex-m-fp32: the MLPerf Tiny models as Cortex-M55 firmware under QEMU (RAM, flash,
# instructions per inference; bench/results/mlperf_tiny_m55_fp32.*)
# bench-explorer: how fast `pteron explore` pages open in headless Chromium (bench/results/explorer.*),
#   OPT-125M's included, and OPT-125M's profile coverage (bench/results/opt125m_profile.*)
.PHONY: bench-cortex-m-fp32 bench-explorer
bench-explorer: build
	$(PY) bench/explorer.py --pteron $(abspath $(BUILD))/tools/cli/pteron

bench-cortex-m-fp32: build
	$(PY) bench/cortex_m.py --pteron $(abspath $(BUILD))/tools/cli/pteron

# bench-cortex-m: the MLPerf Tiny models quantized to INT8 as firmware under QEMU on the
# Cortex-M55 (MVE), M7 and M4 (DSP): vector vs scalar kernels, RAM/flash/instructions, int8 vs
# fp32, digits-cnn accuracy in firmware (bench/results/mlperf_tiny_cortex_m.*)
.PHONY: bench-cortex-m bench-cortex-m-peer
bench-cortex-m: build
	$(PY) bench/cortex_m_int8.py --pteron $(abspath $(BUILD))/tools/cli/pteron

# bench-cortex-m-peer: TFLite Micro + CMSIS-NN (source trees fetched outside this repository) on
# the MLPerf Tiny reference models, same QEMU and instruction counting, one table with pteron's
# figures from bench-cortex-m (bench/results/mlperf_tiny_peer.*). Not part of make test.
#   make bench-cortex-m-peer TFLM_SRC=/work/peers/tflite-micro CMSIS_NN_SRC=/work/peers/CMSIS-NN \
#     [PEER_DEPS=/work/peers] [PEER_PYTHONPATH=/work/peers/pydeps]   (bench/cortex_m_peer.py)
PEER_DEPS ?= $(dir $(abspath $(TFLM_SRC)))
PEER_PYTHONPATH ?=
bench-cortex-m-peer: build
	@test -n "$(TFLM_SRC)" -a -n "$(CMSIS_NN_SRC)" || \
	  { echo "usage: make bench-cortex-m-peer TFLM_SRC=<tflite-micro tree> CMSIS_NN_SRC=<CMSIS-NN tree>"; exit 1; }
	$(MAKE) --no-print-directory check-baremetal
	$(PY) bench/cortex_m_peer.py --tflm-src $(TFLM_SRC) --cmsis-nn-src $(CMSIS_NN_SRC) --deps $(PEER_DEPS) \
	  --pythonpath "$(PEER_PYTHONPATH)" --plugin $(abspath $(BUILD))/tools/qemu_icount/libqemu_icount.so

# bench-npu: the MLPerf Tiny models on ethos-u55-128/-256 and ethos-u85-256: Vela's estimated
# NPU cycles and memory, MAC share on the NPU, CPU work left (bench/results/npu.*)
.PHONY: bench-npu
bench-npu: build
	$(PY) bench/npu.py --pteron $(abspath $(BUILD))/tools/cli/pteron

# op-coverage: PyTorch's op database (every OpInfo, float32 and the other dtypes pteron runs)
# compiled and run on the portable, optimized, XNNPACK and Vulkan paths against eager, and
# ExecuTorch's portable list checked (bench/results/op_coverage.{md,json}; tests/conformance/).
# make test runs a fixed subset (tests/conformance/test_op_db_subset.py). OP_COVERAGE_ARGS:
# e.g. --jobs 4, --dtypes float32, --ops add,topk.
.PHONY: op-coverage
op-coverage: build
	$(PY) tests/conformance/run_op_db.py $(OP_COVERAGE_ARGS)
