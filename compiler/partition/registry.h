// Partitioners by the names users give `--backends` ("xnnpack,portable"). "portable" (and any
// kernel library name) means "the target's kernels", which need no partitioner.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/partition/partitioner.h"

namespace pteron::compiler {

using PartitionerFactory = std::function<std::unique_ptr<Partitioner>()>;

// Called once per backend at start-up (static registration in the backend's aot/ folder).
bool register_partitioner(const std::string& name, PartitionerFactory factory);

// The partitioners for `names`, in order, skipping kernel-library names. Throws CompileError
// for a name that is neither, listing what is available.
std::vector<std::unique_ptr<Partitioner>> make_partitioners(const std::vector<std::string>& names);

std::vector<std::string> available_backends();

// Whether `name` is a kernel library ("portable", "optimized") rather than a partitioner.
bool is_kernel_library(const std::string& name);

}  // namespace pteron::compiler
