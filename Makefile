# pteron: `make` installs what it needs and builds; `make test` runs every test; `make demo`
# shows the main job end to end. Works as root on a fresh Debian 12 machine.
SHELL := /bin/bash
VENV := .venv
PY := $(abspath $(VENV))/bin/python
BUILD := build
JOBS ?= $(shell nproc)

DEBIAN_PACKAGES := cmake ninja-build ccache g++ flatbuffers-compiler libflatbuffers-dev \
  nlohmann-json3-dev libzip-dev libcli11-dev libgtest-dev libgmock-dev \
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib

.PHONY: all deps venv build test test-cpp test-python demo clean format

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

test: build
	@$(MAKE) --no-print-directory test-cpp test-python

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python:
	$(PY) -m pytest -q tests

clean:
	rm -rf $(BUILD) .stamps

format:
	clang-format -i $$(git ls-files '*.h' '*.cpp')
