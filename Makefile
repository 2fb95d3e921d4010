# pteron: `make` installs what it needs and builds; `make test` runs every test; `make demo`
# shows the main job end to end. Works as root on a fresh Debian 12 machine.
SHELL := /bin/bash
VENV := .venv
PY := $(abspath $(VENV))/bin/python
BUILD := build
JOBS ?= $(shell nproc)

DEBIAN_PACKAGES := cmake ninja-build ccache g++ clang libclang-rt-14-dev pkg-config \
  flatbuffers-compiler libflatbuffers-dev nlohmann-json3-dev libzip-dev libcli11-dev libtomlplusplus-dev \
  libgtest-dev libgmock-dev gcc-arm-none-eabi libnewlib-arm-none-eabi \
  libstdc++-arm-none-eabi-newlib libxnnpack-dev libpthreadpool-dev libcpuinfo-dev \
  mesa-vulkan-drivers libvulkan-dev glslc glslang-tools spirv-tools vulkan-tools
FUZZ_SECONDS ?= 60

.PHONY: all deps venv build test test-cpp test-python test-sanitize fuzz check-baremetal demo clean format

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

$(BUILD)/build.ninja: CMakeLists.txt .stamps/deps $(VENV)/.stamp
	cmake -S . -B $(BUILD) -G Ninja -DPython_EXECUTABLE=$(PY) >/dev/null

# Builds everything, then puts the package and the `pteron` CLI on the venv's paths.
build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)
	@site=$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'); \
	printf '%s\n%s\n' "$(abspath python)" "$(abspath $(BUILD))/python" > $$site/pteron-dev.pth
	@if [ -x $(BUILD)/tools/cli/pteron ]; then ln -sf $(abspath $(BUILD))/tools/cli/pteron $(VENV)/bin/pteron; fi

# Everything CI checks: unit tests, Python tests, the C++ tests again under AddressSanitizer and
# UndefinedBehaviorSanitizer, a libFuzzer run over program loading, and the bare-metal build.
test: build
	@$(MAKE) --no-print-directory test-cpp test-python test-sanitize fuzz check-baremetal

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python:
	$(PY) -m pytest -q tests

# One clang build serves both: sanitizers on everything, fuzzer coverage on everything.
build-fuzz/build.ninja: CMakeLists.txt .stamps/deps
	CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DPTERON_SANITIZE=ON -DPTERON_FUZZ=ON -DPTERON_PYTHON=OFF >/dev/null

# The runtime-facing tests (program verification, memory planning, partitioning and delegate
# programs) under the sanitizers; the kernels themselves are checked against torch in pytest.
SANITIZE_TESTS := program_verify_test memory_planner_test compiler_partition_tests
test-sanitize: build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target $(SANITIZE_TESTS)
	@for t in $(SANITIZE_TESTS); do \
	  bin=$$(find build-fuzz/tests -type f -name $$t | head -1); \
	  echo "sanitized: $$t"; $$bin --gtest_brief=1 || exit 1; \
	done

fuzz: build-fuzz/build.ninja
	cmake --build build-fuzz -j $(JOBS) --target program_fuzzer
	@corpus=$$(mktemp -d); cp tests/fixtures/executorch/*.pte $$corpus/ 2>/dev/null; \
	echo "fuzzing program load + method init + execute for $(FUZZ_SECONDS) s"; \
	./build-fuzz/tests/fuzz/program_fuzzer $$corpus -seed=1 -max_total_time=$(FUZZ_SECONDS) \
	  -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 2>&1 | tail -4; \
	status=$${PIPESTATUS[0]}; rm -rf $$corpus; exit $$status

# The runtime core and portable kernels must build for Cortex-M55 (no exceptions, RTTI, heap).
check-baremetal: .stamps/deps
	@test -f build-m55/build.ninja || cmake -S . -B build-m55 -G Ninja \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi.cmake >/dev/null
	cmake --build build-m55 -j $(JOBS)
	@echo "bare-metal build (cortex-m55) ok"

DEMO_MODEL ?= mobilenet-v2
demo: build
	PATH=$(abspath $(VENV))/bin:$$PATH $(PY) tools/demo/demo.py --model $(DEMO_MODEL)

clean:
	rm -rf $(BUILD) build-fuzz build-m55 .stamps

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')

# ---- Against ExecuTorch (peer venv $(ET_VENV); slow, so not part of `make test`) ----------------
# interop: pteron compiles the zoo, ExecuTorch's runtime runs the programs (bench/results/interop.*)
# bench-portable: pteron vs ExecuTorch portable latency on the same .pte (bench/results/portable.*)
# bench-compile: `pteron compile` vs ExecuTorch's AOT flow per zoo model (bench/results/compile.*)
ET_VENV ?= .venv-et
ET_PY := $(abspath $(ET_VENV))/bin/python

.PHONY: venv-et interop bench-portable bench-compile

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
