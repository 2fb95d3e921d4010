// `pteron compile --tune`: the backend lists a host program could use, each compiled and timed
// on this machine, the fastest kept. The measured partitioning of the host target, at the
// granularity of whole backend lists (per-region choices by a calibrated cost model are the
// next step; docs in tools/cli/README.md).
#pragma once

#include <string>
#include <vector>

namespace pteron::cli {

// The lists tried for a program whose backends are `backends` (delegates, then kernel
// libraries): the list itself first, then the same kernel libraries without the delegates
// when it has any (on the host: xnnpack,optimized,portable and optimized,portable). A
// statically quantized int8 program (`int8`: --quantize xnnpack, cortex-m or ethos-u) also
// tries the int8 kernel library in front of them (cortex-m,optimized,portable): its
// convolutions run on the CPU's integer dot products (kernels/cortex_m/host).
std::vector<std::vector<std::string>> tune_candidates(const std::vector<std::string>& backends,
                                                      bool int8 = false);

struct TunedProgram {
  std::string path;
  std::vector<double> round_medians_ms;
  double median_ms = 0;  // the median of the rounds' medians
  int iterations = 0;    // timed runs per round
};

// Times each program in a process of its own (`pteron bench --json`), as the benchmarks do:
// measured in one process, mobilenet-v2's int8-library program came out slower than the
// XNNPACK one and in separate processes faster, on the same machine minutes apart. `rounds`
// alternating rounds, every other one in reverse order, each round 3 warm-up runs and enough
// timed runs to take about `round_ms` (3 to 50), on random inputs (seed 0) with the runtime's
// current thread count. Throws UserError when a program does not load or run.
std::vector<TunedProgram> time_programs(const std::vector<std::string>& paths, int rounds = 3,
                                        double round_ms = 200);

// The index of the smallest median; the earliest on a tie, so the first candidate (the
// target's list) is kept unless another measured faster.
size_t fastest(const std::vector<TunedProgram>& programs);

}  // namespace pteron::cli
