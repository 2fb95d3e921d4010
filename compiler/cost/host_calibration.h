// Where a host compile finds this machine's calibration for the cost model: the file
// `pteron tune` wrote (tools/cli/calibrate.h), one per machine description, or the file
// $PTERON_CALIBRATION names. The CLI and the Python API read it the same way.
#pragma once

#include <optional>
#include <string>

#include "compiler/cost/cost_model.h"

namespace pteron::compiler::cost {

// What a calibration is valid for: the CPU model, the ISA the kernels dispatch to and the
// thread count ("AMD EPYC 9R14 96-Core Processor, avx512, 2 threads").
std::string machine_description(int threads);

// Where the calibration of `machine` is cached: $PTERON_CACHE_DIR, else $XDG_CACHE_HOME/pteron,
// else ~/.cache/pteron; one file per machine description.
std::string calibration_cache_path(const std::string& machine);

struct LoadedCalibration {
  Calibration calibration;
  std::string path;
};
struct HostCalibration {
  std::optional<LoadedCalibration> loaded;
  // This machine's cache file when $PTERON_CALIBRATION names none: where `pteron tune` writes
  // (and a first compile on the default backends calibrates into, when `loaded` is empty).
  std::string cache_path;
  // Set when a calibration was found and not used: it measured another pteron's kernels, so
  // its rates may no longer hold, or the cache file is damaged (one line for the compile
  // report's notes).
  std::string note;
};
// The calibration a compile for the host uses, and where it came from: $PTERON_CALIBRATION
// names a file ("off": none), else this machine's cache file for `threads`, when it exists. A
// file written by another pteron version, or a cache file that does not read or parse, is left
// unused, with a note. Throws CompileError ("PATH: calibration: what is wrong", one line) for a
// named file that does not read or parse.
HostCalibration host_calibration(int threads);

}  // namespace pteron::compiler::cost
